"""The install record: what ``gatesh install`` made and where, for uninstall, doctor and
self-protection (S3.4), and the error every install step raises."""

from __future__ import annotations

import os
from typing import Any

from gatesh import _paths
from gatesh._errors import SetupError


class InstallError(SetupError):
    """An install step cannot be done without clobbering something; the message says what."""


def record(change: dict[str, Any]) -> None:
    """Note ``change`` in the install record (see :func:`gatesh._paths.update_install_record`).

    Self-protection reads the record at decision time (S3.4): what is not recorded is protected
    only where the defaults put it. Raises InstallError when the record cannot be written.
    """
    try:
        _paths.update_install_record(_paths.current().install_record, change)
    except (OSError, ValueError) as exc:
        raise InstallError(f"could not update the install record: {exc}") from exc


def with_launcher(launcher: str) -> dict[str, Any]:
    """The record change that adds ``launcher`` to the recorded launchers (when absolute)."""
    if not os.path.isabs(launcher):
        return {}
    known = list(_paths.current().installation().launchers)
    return {"launchers": [*known, launcher] if launcher not in known else known}
