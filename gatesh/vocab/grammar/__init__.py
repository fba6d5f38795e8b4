"""One grammar per tool: how each program reads its argv, asked by every layer (S2).

A command spelled another way is the same command only if every layer reads it the same way:
``git -C src clean -fdxq`` and ``git clean -q -d -f -x`` must both be git's ``clean`` with
``-f``, ``-d`` and ``-x``; ``kubectl --context prod delete ns x`` and ``kubectl delete ns x
--context=prod`` must both delete a namespace in ``prod``. So which options take a value, how short
options bundle, where the subcommand starts, which ``python -m`` modules are programs of their own,
and which wrappers run a command (and pass ``NAME=value`` words on to it) are written here once:

- :data:`GRAMMARS` (``_tools``): per program family, its options and subcommands, one module
  per family (``_git``; ``_clusters``: kubectl, docker, compose, helm, terraform; ``_transfer``:
  curl, wget, ssh and kin, rsync; ``_local``: cp and kin, install, npm, gh, pip, vi;
  ``_cloud``: aws);
- :data:`WRAPPERS` / :data:`SUBCOMMAND_WRAPPERS` (``_wrappers``): programs that run another
  command given in their argv, with their options;
- :data:`MODULE_PROGRAMS`: ``python -m X`` runs the program X.

:func:`parse` reads an argv through its program's row (a program with no row is read as plain
getopt with no option taking a value, which is what every layer did before). The reader, the
hardline, the floors, the read-only table, the rater, the host extractor and the git hooks ask it;
``tests/test_grammar.py`` walks every row's spellings through every layer and checks that no layer
keeps a second literal table of a row's options.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from types import MappingProxyType
from typing import Final

from ._parse import Argv, Bundling, Grammar, Opt, Options, read
from ._tools import (
    COPY,
    CURL,
    DOCKER,
    DOCKER_EXEC_VALUES,
    DOCKER_RUN_VALUES,
    GIT,
    GIT_GLOBAL,
    GRAMMARS,
    HELM,
    INSTALL,
    KUBE_TARGETS,
    KUBECTL,
    SSH,
    SSH_VALUES,
    TERRAFORM,
)
from ._wrappers import SHELL_OPT_ONLY, SUBCOMMAND_WRAPPERS, WRAPPERS, WrapperSpec

__all__ = [
    "COPY",
    "CURL",
    "DOCKER",
    "DOCKER_EXEC_VALUES",
    "DOCKER_RUN_VALUES",
    "GIT",
    "GIT_GLOBAL",
    "GRAMMARS",
    "HELM",
    "INSTALL",
    "KUBECTL",
    "KUBE_TARGETS",
    "MODULE_PROGRAMS",
    "MODULE_RUNNER",
    "NEUTRAL_WRAPPERS",
    "PLAIN",
    "SHELL_OPT_ONLY",
    "SSH",
    "SSH_VALUES",
    "SUBCOMMAND_WRAPPERS",
    "TERRAFORM",
    "WRAPPERS",
    "Argv",
    "Bundling",
    "Grammar",
    "Opt",
    "Options",
    "WrapperSpec",
    "copy_destination",
    "grammar_of",
    "inner_argv",
    "module_program",
    "parse",
    "read",
    "value_options",
]

# A program with no row: getopt clusters, no option takes a value, options anywhere.
PLAIN: Final = Grammar("plain")

_BY_PROGRAM: Final = MappingProxyType({p: g for g in GRAMMARS for p in g.programs})


def grammar_of(head: str) -> Grammar | None:
    """The grammar row of program ``head`` (a case-folded basename), or None."""
    return _BY_PROGRAM.get(head)


def parse(head: str, args: Sequence[str], static: Sequence[bool] | None = None) -> Argv:
    """``args`` (argv[1:]) as program ``head`` reads them (:func:`read` through its row)."""
    if static is None and len(args) <= 24 and head in _BY_PROGRAM:
        return _parse_cached(head, tuple(args))
    return read(_BY_PROGRAM.get(head, PLAIN), args, static)


@functools.lru_cache(maxsize=2048)  # a pure function of its words; layers ask it of one command
def _parse_cached(head: str, args: tuple[str, ...]) -> Argv:
    return read(_BY_PROGRAM[head], args)


def value_options(head: str, path: Sequence[str] = ()) -> frozenset[str]:
    """The options that take a value at subcommand ``path`` of ``head`` (its own and, where the
    level inherits them, those above): for tables that still match words one by one."""
    g = _BY_PROGRAM.get(head)
    if g is None:
        return frozenset()
    out = g.options.value | g.options.optional
    level = g
    for word in path:
        nxt = level.subcommands.get(level.aliases.get(word, word))
        if nxt is None:  # an unlisted subcommand reads the level's default options
            return level.default.value | level.default.optional if level.open else out
        out = (out if nxt.inherit else frozenset()) | nxt.options.value | nxt.options.optional
        level = nxt
    return out


# --- wrappers ------------------------------------------------------------------------------------

# The wrapper name a command peeled off `python -m MODULE` carries (the module is the program).
MODULE_RUNNER: Final = "python -m"
# Wrappers that change nothing about what the wrapped command may do (a read-only command stays
# read-only under them): the neutral rows, find's -exec, and python -m running a module program.
NEUTRAL_WRAPPERS: Final[frozenset[str]] = frozenset(
    {name for name, spec in WRAPPERS.items() if spec.neutral} | {"find", MODULE_RUNNER}
)


def inner_argv(words: Sequence[str]) -> list[str]:
    """``words`` with the wrappers that only run their operand taken off (``exec env A=1 nice
    bash`` is ``bash``), read through :data:`WRAPPERS`: for text another program will run (a
    remote shell's string). A wrapper that runs a shell string or no command stays."""
    out = list(words)
    for _ in range(16):
        if not out:
            return out
        head = out[0].rsplit("/", 1)[-1].casefold()
        spec = WRAPPERS.get(head)
        if spec is None or spec.shell_opt or spec.joins_shell or spec.end_marker:
            return out
        argv = read(Grammar(head, options=spec.options), out[1:])
        if any(o.name in spec.stop for o in argv.options) or not argv.operand_at:
            return out
        rest = out[1 + argv.operand_at[0] :]
        while spec.assignments and rest and "=" in rest[0] and not rest[0].startswith("="):
            rest = rest[1:]
        out = rest[spec.operands :]
    return out


# --- module forms --------------------------------------------------------------------------------

# `python -m MODULE` where MODULE is a program of its own: its argv is MODULE's (`python3 -m pip
# install x` is `pip install x`). Modules not listed stay python's (`python -m http.server` is
# judged as python serving a folder).
MODULE_PROGRAMS: Final = MappingProxyType(
    {
        "pip": "pip",
        "pip3": "pip",
        "ensurepip": "pip",
        "twine": "twine",
        "pytest": "pytest",
        "black": "black",
        "ruff": "ruff",
        "mypy": "mypy",
        "flake8": "flake8",
        "isort": "isort",
        "pylint": "pylint",
        "poetry": "poetry",
        "pipx": "pipx",
        "uv": "uv",
        "build": "pyproject-build",
        "pre_commit": "pre-commit",
        "django": "django-admin",
        "alembic": "alembic",
        "awscli": "aws",
        "httpie": "http",
        "ansible": "ansible",
        "celery": "celery",
        "uvicorn": "uvicorn",
        "gunicorn": "gunicorn",
        "flask": "flask",
        "streamlit": "streamlit",
        "jupyter": "jupyter",
        "notebook": "jupyter-notebook",
        "tox": "tox",
        "nox": "nox",
        "coverage": "coverage",
        "sphinx": "sphinx-build",
        "mkdocs": "mkdocs",
        "PyInstaller": "pyinstaller",
        "nuitka": "nuitka",
        "gdown": "gdown",
        "youtube_dl": "youtube-dl",
        "yt_dlp": "yt-dlp",
        "pip_audit": "pip-audit",
        "safety": "safety",
        "huggingface_hub": "huggingface-cli",
    }
)
# CPython's own options before the program (`python -h`): -m ends them and names the module.
_PYTHON: Final = Grammar(
    "python",
    options=Options(
        value=frozenset({"-W", "-X", "-c", "-m", "-Q", "--check-hash-based-pycs"}), ends_at=1
    ),
)
_PYTHONS: Final = frozenset({"python", "python2", "python3", "pypy", "pypy3"})


def module_program(head: str, args: Sequence[str]) -> tuple[str, int] | None:
    """``(program, start)`` when ``head args`` runs a module that is a program of its own
    (``python3 -m twine upload`` → ``("twine", 2)``: twine's arguments start at ``args[2]``)."""
    base = head.rstrip("0123456789.") if head[:6] in ("python", "pypy") else head
    if base not in _PYTHONS and head not in _PYTHONS:
        return None
    argv = read(_PYTHON, args)
    for o in argv.options:
        if o.name == "-c":
            return None
        if o.name == "-m":
            program = MODULE_PROGRAMS.get(o.value or "")
            return (program, o.value_at + 1) if program and o.value_at >= 0 else None
    return None


# --- where a copy writes -------------------------------------------------------------------------


def copy_destination(head: str, args: Sequence[str]) -> tuple[tuple[str, ...], str | None]:
    """``(sources, destination)`` of cp/mv/ln/install: the destination is the value of
    ``-t/--target-directory`` when given (every operand is then a source), else the last operand
    of two or more; None when there is none (``install -d DIR`` makes folders)."""
    argv = parse(head, args)
    target = argv.value("-t", "--target-directory")
    if target is not None:
        return argv.operands, target
    if len(argv.operands) >= 2:
        return argv.operands[:-1], argv.operands[-1]
    return argv.operands, None
