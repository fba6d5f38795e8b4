"""The install record: what ``gatesh install`` made and where, for uninstall, doctor and
self-protection (S3.4), and the error every install step raises."""

from __future__ import annotations

import os

from gatesh import _paths
from gatesh._errors import SetupError
from gatesh._paths import RecordChange

__all__ = ["InstallError", "RecordChange", "launchers_with", "record"]


class InstallError(SetupError):
    """An install step cannot be done without clobbering something; the message says what."""


def record(change: RecordChange) -> None:
    """Note ``change`` in the install record (see :func:`gatesh._paths.update_install_record`).

    Self-protection reads the record at decision time (S3.4): what is not recorded is protected
    only where the defaults put it. Raises InstallError when the record cannot be written.
    """
    try:
        _paths.update_install_record(_paths.current().install_record, change)
    except (OSError, ValueError) as exc:
        raise InstallError(f"could not update the install record: {exc}") from exc


def launchers_with(launcher: str) -> tuple[str, ...] | None:
    """The recorded launchers with ``launcher`` added; None (nothing to record) when it is not an
    absolute path."""
    if not os.path.isabs(launcher):
        return None
    known = _paths.current().installation().launchers
    return known if launcher in known else (*known, launcher)
