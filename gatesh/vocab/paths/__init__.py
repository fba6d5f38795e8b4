"""Paths: where a path lies, and how programs use the paths they name (S2.1, S4.1). Data, not code.

- :mod:`~gatesh.vocab.paths.classes`: the path classes (credential stores, persistence places,
  system folders, the working tree, home, temporary …) and :func:`~.classes.classify`.
- :mod:`~gatesh.vocab.paths.uses`: per program, which of its paths it reads, writes or replaces
  (rows in :mod:`~.uses_files` and :mod:`~.uses_tools`, the row type in :mod:`~.use`).
- :mod:`~gatesh.vocab.paths.settings`: settings files a command writes without naming them.
- :mod:`~gatesh.vocab.paths.devices`: devices a program only inspects, and endless devices.

The package itself exports nothing: import the module that holds the table you ask.
"""
