"""Variables that name a program or code (``GIT_SSH_COMMAND``, ``PAGER``, ``LD_PRELOAD``,
``PYTHONSTARTUP``, any ``*_COMMAND``): what a variable's value is to the programs that read it.

:data:`ENV_ROWS` is the table, :func:`env_var` the lookup; the reader reads an assignment's value
by its row (:mod:`gatesh.reading._settings`, :mod:`gatesh.reading._positions`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final


class EnvKind(enum.StrEnum):
    """What a variable's value is to the programs that read it."""

    COMMAND = "command"  # a command line (or a program with arguments) a program runs
    SOURCED = "sourced"  # a shell script a shell sources before it runs
    LOADS = "loads"  # options that can load code (`NODE_OPTIONS=--require x`): opaque when they do
    LIBRARY = "library"  # a library every program loads: opaque
    STARTUP = "startup"  # a file an interpreter runs first (PYTHONSTARTUP)
    PROMPT = (
        "prompt"  # a prompt string: the shell expands it, substitutions included, at each prompt
    )


@dataclass(frozen=True)
class EnvVar:
    """A variable that names a program or code. ``loads``: for LOADS rows, a regular expression
    matching the options that make the value load code."""

    name: str
    kind: EnvKind
    reason: str
    loads: str = ""


_RUNS = "a program runs this variable's value as a command"
ENV_ROWS: Final[tuple[EnvVar, ...]] = (
    *(
        EnvVar(n, EnvKind.COMMAND, _RUNS)
        for n in (
            "GIT_SSH",
            "GIT_PAGER",
            "PAGER",
            "MANPAGER",
            "SYSTEMD_PAGER",
            "GIT_EDITOR",
            "EDITOR",
            "VISUAL",
            "GIT_SEQUENCE_EDITOR",
            "GIT_EXTERNAL_DIFF",
            "GIT_ASKPASS",
            "SSH_ASKPASS",
            "SUDO_ASKPASS",
            "LESSOPEN",
            "LESSCLOSE",
            "BROWSER",
            "RSYNC_RSH",
            "CVS_RSH",
            "FCEDIT",
            "npm_config_script_shell",
            "NPM_CONFIG_SCRIPT_SHELL",
            "TERMINAL",
            "DIFFTOOL",
            "SVN_EDITOR",
            "HGEDITOR",
            "KUBE_EDITOR",
            "CVSEDITOR",
            "SYSTEMD_EDITOR",
        )
    ),
    EnvVar("PROMPT_COMMAND", EnvKind.COMMAND, "bash runs PROMPT_COMMAND before every prompt"),
    *(
        EnvVar(n, EnvKind.PROMPT, "the shell expands this prompt string, substitutions included")
        for n in (
            "PS0",
            "PS1",
            "PS2",
            "PS3",
            "PS4",
            "PROMPT",
            "PROMPT2",
            "PROMPT3",
            "PROMPT4",
            "RPROMPT",
            "RPS1",
            "RPROMPT2",
            "RPS2",
            "SPROMPT",
        )
    ),
    EnvVar("BASH_ENV", EnvKind.SOURCED, "bash sources this file before running a script"),
    EnvVar("ENV", EnvKind.SOURCED, "sh sources this file when it starts interactively"),
    EnvVar(
        "NODE_OPTIONS",
        EnvKind.LOADS,
        "node loads the modules these options name",
        loads=r"(?:^|\s)(?:-r|--require|--import|--loader|--experimental-loader)(?:[=\s]|$)",
    ),
    EnvVar(
        "PERL5OPT",
        EnvKind.LOADS,
        "perl loads the modules these options name",
        loads=r"(?:^|\s)-[MmdI]",
    ),
    EnvVar(
        "RUBYOPT", EnvKind.LOADS, "ruby loads the libraries these options name", loads=r"(?:^|\s)-r"
    ),
    *(
        EnvVar(
            n,
            EnvKind.LOADS,
            "java loads the agents these options name",
            loads=r"-(?:javaagent|agentpath|agentlib):",
        )
        for n in ("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS")
    ),
    *(
        EnvVar(n, EnvKind.LIBRARY, "every program started loads this library first")
        for n in ("LD_PRELOAD", "LD_AUDIT", "DYLD_INSERT_LIBRARIES")
    ),
    EnvVar("PYTHONSTARTUP", EnvKind.STARTUP, "interactive python runs this file first"),
)
_ENV_BY_NAME: Final = MappingProxyType({v.name: v for v in ENV_ROWS})
_COMMAND_SUFFIX: Final = EnvVar(
    "*_COMMAND",
    EnvKind.COMMAND,
    "a variable named *_COMMAND holds a command a "
    "program runs (GIT_SSH_COMMAND, FZF_DEFAULT_COMMAND)",
)


def env_var(name: str) -> EnvVar | None:
    """The row for variable ``name`` (``*_COMMAND`` names included), or None."""
    row = _ENV_BY_NAME.get(name)
    if row is None and name.endswith("_COMMAND") and name != "_COMMAND":
        return _COMMAND_SUFFIX
    return row
