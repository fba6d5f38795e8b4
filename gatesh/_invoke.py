"""How gatesh was invoked: the one reader of a shell's argv, and the hand-over to the full interpreter.

:class:`ShellArgs` reads arguments the way bash does (options, ``-c STRING [ARG…]``, a script
operand, or a script on standard input) together with gatesh's own PTY options (``--shell``,
``--human``); :class:`Invocation` adds what argv[0] says (a ``bash``/``zsh``/``sh`` link, a login
``-bash``) and which surface runs it. ``gatesh._entry``, the ``-c`` client, the PTY session and
the launcher (its ``case`` is written from :data:`SHELL_NAMES`, :data:`CLI_FLAGS` and
:data:`STDLIB_SUBCOMMANDS`) all use it.

Imports nothing but :mod:`gatesh._errors` (which imports nothing): every ``gatesh -c`` pays for
this module (S14).
"""

from gatesh._errors import EXIT_REFUSED

TYPE_CHECKING = False
if TYPE_CHECKING:
    # (the full interpreter, the folders its dependencies import from after its standard library)
    Full = tuple[str, list[str]]

# Names a link to gatesh may carry to behave as that shell (S1): every shell of the Bourne family
# in the vocabulary (gatesh.vocab.programs.shells.SHELL_ROWS; tests/test_invoke.py pins them equal), so
# a gated session can hold a link for each and none of them starts ungated (S10). The installed
# shims folder holds only bash, zsh and sh (gatesh.install.SHIM_NAMES).
SHELL_NAMES = (
    "sh",
    "bash",
    "rbash",
    "dash",
    "ash",
    "hush",
    "busybox-sh",
    "ksh",
    "ksh93",
    "mksh",
    "lksh",
    "oksh",
    "loksh",
    "pdksh",
    "zsh",
    "yash",
    "posh",
    "sash",
    "osh",
)
# Of those, the shells an interactive invocation starts a gated PTY session for: bash and zsh
# themselves, and sh as bash. Any other shell cannot be gated command by command, so it is
# refused when it would be interactive (its -c strings and scripts are gated).
INTERACTIVE_SHIMS = ("bash", "zsh", "sh")
# Shells the PTY session runs (S10).
PTY_SHELLS = ("bash", "zsh")
# First arguments that make ``gatesh`` the CLI even though they start with ``-``.
CLI_FLAGS = ("-h", "--help", "--version")
# Subcommands that run on the standard library alone, as the ``-c`` client does, and so start on
# the launcher's fast interpreter: ``gatesh hook`` runs on every harness tool call (S14).
STDLIB_SUBCOMMANDS = ("hook",)
# Long options that take the next word as their value (bash's, and gatesh's own --shell).
_LONG_WITH_VALUE = ("--rcfile", "--init-file", "--shell")
# What run_full exits with when the full interpreter cannot be started (as for a refusal, S1).
EXIT_NO_INTERPRETER = EXIT_REFUSED


class ShellArgs:
    """What bash would do with these arguments: run ``command`` (-c), a ``script`` file, read stdin.

    Also gatesh's own options, read where bash reads options (before the first operand, so a
    ``-c`` string's ``$0 $1 …`` are never taken for them): ``--shell bash|zsh`` (``shell``;
    ``bad_shell`` when the value is neither), ``--human``, and whether a login shell was asked
    for (``--login`` or an option cluster holding ``l``).
    """

    __slots__ = (
        "args",
        "bad_shell",
        "command",
        "human",
        "interactive_flag",
        "login",
        "missing_c",
        "script",
        "shell",
        "stdin",
        "version_only",
    )

    def __init__(self, args: "list[str]") -> None:
        self.command: str | None = None
        self.args: list[str] = []  # after a -c string: $0 $1 …
        self.script: str | None = None
        self.stdin = False
        self.interactive_flag = False
        self.version_only = False
        self.missing_c = False
        self.shell: str | None = None
        self.bad_shell = False
        self.human = False
        self.login = False
        cflag = sflag = False
        i = 0
        while i < len(args):
            a = args[i]
            if a in ("--", "-"):
                i += 1
                break
            if a.startswith("--"):
                name, eq, value = a.partition("=")
                if name == "--shell":
                    self._choose_shell(value if eq else (args[i + 1] if i + 1 < len(args) else ""))
                elif a == "--human":
                    self.human = True
                elif a == "--login":
                    self.login = True
                elif a in ("--version", "--help"):
                    self.version_only = True
                i += 2 if a in _LONG_WITH_VALUE else 1
                continue
            if len(a) > 1 and a[0] in "-+":
                letters = a[1:]
                cflag = cflag or "c" in letters
                sflag = sflag or "s" in letters
                self.interactive_flag = self.interactive_flag or "i" in letters
                self.login = self.login or (a[0] == "-" and "l" in letters)
                i += 1 + letters.count("o") + letters.count("O")
                continue
            break
        operands = args[i:]
        if cflag:
            if operands:
                self.command = operands[0]
                self.args = operands[1:]
            else:
                self.missing_c = True  # bash reports the error itself; nothing to gate
        elif operands and not sflag:
            self.script = operands[0]
        else:
            self.stdin = True

    def _choose_shell(self, value: str) -> None:
        if value in PTY_SHELLS:
            self.shell = value
        else:
            self.bad_shell = True

    @property
    def runs_something(self) -> bool:
        """A ``-c`` string, a script or a version query: never an interactive session."""
        return (
            self.command is not None
            or self.script is not None
            or self.version_only
            or self.missing_c
        )


class Invocation:
    """One ``gatesh`` invocation: argv[0] as invoked, then its arguments (see :class:`ShellArgs`)."""

    __slots__ = ("args", "argv0", "dash", "name", "parsed", "shim")

    def __init__(self, argv: "list[str]") -> None:
        self.argv0 = argv[0] if argv else "gatesh"
        base = self.argv0.rpartition("/")[2]
        self.dash = base.startswith("-")  # argv[0] "-bash": a login shell
        self.name = base.lstrip("-")
        self.shim = self.name in SHELL_NAMES
        self.args = list(argv[1:])
        self.parsed = ShellArgs(self.args)

    @property
    def as_shell(self) -> bool:
        """Shell-style (``-c``, a shim, ``--login``, no arguments), not a ``gatesh`` subcommand."""
        if self.shim or self.dash or not self.args:
            return True
        return self.args[0].startswith("-") and self.args[0] not in CLI_FLAGS

    @property
    def login(self) -> bool:
        return self.dash or self.parsed.login

    @property
    def pty_shell(self) -> "str | None":
        """The shell the PTY session runs when this says which (``--shell``, or a bash/zsh link)."""
        if self.parsed.shell is not None:
            return self.parsed.shell
        return self.name if self.name in PTY_SHELLS else None

    def wants_pty(self, stdin_is_tty: bool) -> bool:
        """True when bash would be an interactive shell: the PTY session (S10); otherwise the
        ``-c`` client gates what would run (a string, a script, a script on standard input)."""
        return not self.parsed.runs_something and (self.parsed.interactive_flag or stdin_is_tty)


def full_command(full: "Full", argv: "list[str]", run: str = "gatesh._entry:main") -> "list[str]":
    """The command that runs ``run`` (``module:function``, ``gatesh._entry.main`` by default) with
    ``sys.argv`` equal to ``argv`` on the full interpreter, with ``-I -S`` and the import path a
    launcher gives it: gatesh's folder first, the dependency folders after the standard library."""
    python, deps = full
    home = __file__.rpartition("/")[0].rpartition("/")[0]  # the folder holding the gatesh package
    module, _, function = run.partition(":")
    code = (
        "import sys\n"
        "del sys.argv[0]\n"  # "-c": the argv handed over follows
        f"sys.path[:0] = [{home!r}]\n"
        f"sys.path += {list(deps)!r}\n"
        f"from {module} import {function}\n"
        f"sys.exit({function}())\n"
    )
    return [python, "-IS", "-c", code, *argv]


def run_full(full: "Full", argv: "list[str]") -> int:
    """Replace this process by :func:`full_command`. Returns only when the full interpreter cannot
    be started: then it prints why and returns EXIT_NO_INTERPRETER."""
    import posix
    import sys

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    command = full_command(full, argv)
    try:
        posix.execv(command[0], command)
    except OSError as exc:
        sys.stderr.write(
            f"gatesh: cannot start the interpreter gatesh is installed in, {command[0]} "
            f"({exc.strerror or exc}); nothing ran. Run install.sh again to rewrite the launcher.\n"
        )
    return EXIT_NO_INTERPRETER
