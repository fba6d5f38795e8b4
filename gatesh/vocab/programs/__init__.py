"""Programs that run code, and what gatesh can read of each (S2, S2.1). Data, not code.

Every layer asks these tables, never a list of its own: a name the reader unfolds as a shell is
a shell to policy, rater and daemon too, and a language the reader cannot read is opaque to all
of them. Rows are data; the few functions beside them only look rows up.

- :mod:`~.shells`: every shell family an agent could reach, and text on its way into a shell;
- :mod:`~.interpreters`: languages whose programs run commands, how each reads its argv, the
  scripts gatesh reads when they run, the commands that make a virtual environment;
- :mod:`~.positions`: where in another program's argv a word is a command it runs, and the git
  settings whose value git runs;
- :mod:`~.variables`: variables whose value names a program or code;
- :mod:`~.interactive`: programs that run commands typed at them;
- :mod:`~.generators`: programs whose output a shell runs at setup;
- :mod:`~.workdir`: changes of working directory, and programs that make only the files they name;
- :mod:`~.info`: the words that make a program only print its version or help;
- :mod:`~.verbless`: programs whose positional words are data, which the verb rules skip;
- :mod:`~.readers`: programs that only read the files they are given.

The package itself exports nothing: import the module that holds the table you ask.
"""
