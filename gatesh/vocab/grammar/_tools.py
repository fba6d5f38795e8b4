"""The grammar rows: per program family, which options take a value and where subcommands start.

Written from each tool's own usage text (``git`` with no arguments, ``kubectl options``,
``docker --help``, ``curl --help all``, ``wget --help``, the coreutils and OpenSSH manuals), not
from a third-party collection of completion specifications: the installed tool is the authority
on its own grammar, and a row here lists only what gatesh's layers need to tell an option's value
from an operand (options a row does not list are read as flags, as before this table existed).
"""

from __future__ import annotations

from typing import Final

from ._cloud import AWS
from ._clusters import (
    COMPOSE,
    DOCKER,
    DOCKER_EXEC_VALUES,
    DOCKER_RUN_VALUES,
    HELM,
    KUBE_TARGETS,
    KUBECTL,
    TERRAFORM,
)
from ._git import GIT, GIT_GLOBAL
from ._local import COPY, GATESH, GH, INSTALL, NPM, PIP, VI
from ._parse import Grammar
from ._transfer import CURL, NC, RSYNC, SCP, SFTP, SSH, SSH_VALUES, TELNET, WGET

__all__ = [
    "AWS",
    "COMPOSE",
    "COPY",
    "CURL",
    "DOCKER",
    "DOCKER_EXEC_VALUES",
    "DOCKER_RUN_VALUES",
    "GH",
    "GIT",
    "GIT_GLOBAL",
    "GRAMMARS",
    "HELM",
    "INSTALL",
    "KUBECTL",
    "KUBE_TARGETS",
    "NC",
    "NPM",
    "PIP",
    "RSYNC",
    "SCP",
    "SFTP",
    "SSH",
    "SSH_VALUES",
    "TELNET",
    "TERRAFORM",
    "VI",
    "WGET",
]

GRAMMARS: Final[tuple[Grammar, ...]] = (
    GIT,
    KUBECTL,
    DOCKER,
    COMPOSE,
    CURL,
    WGET,
    SSH,
    SCP,
    SFTP,
    NC,
    TELNET,
    RSYNC,
    COPY,
    INSTALL,
    NPM,
    GH,
    HELM,
    TERRAFORM,
    PIP,
    GATESH,
    VI,
    AWS,
)
