"""``gatesh doctor``: check the installation and say what to fix.

Each check reports ``ok``, ``warn`` (works, but worse than it should) or ``FAIL`` (a required
check: the gate is missing, broken or weaker than configured), with a one-line fix. The exit status
is 0 when no required check failed, 1 otherwise.

No check sends a command to a model: the rater check asks the backend for its model list.

The checks live by what they look at: :mod:`~gatesh.doctor.installation` (launcher, hooks, shims),
:mod:`~gatesh.doctor.gate` (daemon, permissions, config, rater), :mod:`~gatesh.doctor.boundary`
and :mod:`~gatesh.doctor.person`; this module runs them in the order a person fixes them.
"""

from __future__ import annotations

import argparse
import json
import shutil
from collections.abc import Callable
from dataclasses import asdict
from typing import TYPE_CHECKING

from gatesh import _paths
from gatesh._errors import EXIT_ERROR, EXIT_OK
from gatesh.doctor.boundary import check_boundary
from gatesh.doctor.check import Check, Status
from gatesh.doctor.gate import check_config, check_daemon, check_permissions, check_rater
from gatesh.doctor.installation import (
    check_gate,
    check_import_path,
    check_integrations,
    check_launcher,
)
from gatesh.doctor.person import check_person, landlock_abi

if TYPE_CHECKING:
    from gatesh.config import Config

__all__ = [
    "Check",
    "Status",
    "check_boundary",
    "check_config",
    "check_daemon",
    "check_gate",
    "check_import_path",
    "check_integrations",
    "check_launcher",
    "check_permissions",
    "check_person",
    "check_rater",
    "landlock_abi",
    "main",
    "run_checks",
]


def run_checks(*, start_daemon: bool = True) -> list[Check]:
    """Every check, in the order a person fixes them. Never raises: a crashing check is a FAIL."""
    paths = _paths.current()
    out: list[Check] = []

    def guarded(name: str, fn: Callable[[], list[Check]]) -> None:
        try:
            out.extend(fn())
        except Exception as exc:
            out.append(
                Check(
                    name,
                    Status.FAIL,
                    f"the check crashed: {type(exc).__name__}: {exc}",
                    "report this with `gatesh dump`",
                )
            )

    guarded("launcher", check_launcher)
    guarded("import path", check_import_path)
    config_checks: list[Check] = []
    config: Config | None = None

    def _config() -> list[Check]:
        nonlocal config, config_checks
        config_checks, config = check_config()
        return config_checks

    guarded("config", _config)
    if start_daemon:
        guarded("gate", lambda: check_gate(shutil.which("gatesh")))
    guarded("daemon", lambda: check_daemon(paths))
    guarded("permissions", lambda: check_permissions(paths))
    if config is not None:
        guarded("rater", lambda: check_rater(config))
    guarded("boundary", lambda: check_boundary(config))
    guarded("integrations", check_integrations)

    guarded("person", lambda: check_person(config))
    return out


def main(argv: list[str]) -> int:
    """``gatesh doctor [--json]``: 0 when every required check passed, 1 otherwise."""
    parser = argparse.ArgumentParser(
        prog="gatesh doctor", description="Check the installation and print what to fix."
    )
    parser.add_argument("--json", action="store_true", help="one JSON object")
    args = parser.parse_args(argv)
    checks = run_checks()
    failed = [c for c in checks if c.status is Status.FAIL]
    if args.json:
        print(json.dumps({"ok": not failed, "checks": [asdict(c) for c in checks]}))
    else:
        width = max(len(c.name) for c in checks)
        for c in checks:
            print(f"{c.status:<4}  {c.name:<{width}}  {c.detail}")
            if c.fix:
                print(f"{'':<4}  {'':<{width}}  fix: {c.fix}")
        print(
            "\nall required checks passed"
            if not failed
            else f"\n{len(failed)} required check{'s' if len(failed) != 1 else ''} failed"
        )
    return EXIT_ERROR if failed else EXIT_OK
