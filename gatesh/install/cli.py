"""``gatesh install TARGET``: the command line over the install steps."""

from __future__ import annotations

import argparse
import sys
from typing import Final

from gatesh._errors import EXIT_ERROR, EXIT_OK, EXIT_USAGE
from gatesh.harnesses import Harness
from gatesh.install.daemon import install_daemon_service
from gatesh.install.git import install_git
from gatesh.install.harness import install_harness
from gatesh.install.record import InstallError
from gatesh.install.shims import install_shims
from gatesh.install.uninstall import uninstall_all

TARGETS: Final = (*(h.value for h in Harness), "git", "shims", "service", "all")


def main(argv: list[str]) -> int:
    """``gatesh install TARGET``: 0 when done, 1 when it would clobber something, 2 for usage."""
    parser = argparse.ArgumentParser(
        prog="gatesh install",
        description="Install gatesh's integrations. Settings files are merged, never clobbered, "
        "and backed up first; installing twice changes nothing.",
    )
    parser.add_argument("target", choices=TARGETS)
    parser.add_argument("--uninstall", action="store_true", help="remove only what gatesh added")
    parser.add_argument(
        "--global",
        dest="global_",
        action="store_true",
        help="git: set the global core.hooksPath instead of this repository's hooks",
    )
    parser.add_argument(
        "--settings", metavar="FILE", help="harness settings file to edit instead of the default"
    )
    parser.add_argument(
        "--codex",
        metavar="PATH",
        help="codex: the codex executable that trusts the hooks (default: on PATH)",
    )
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return EXIT_OK if exc.code == 0 else EXIT_USAGE
    if args.global_ and args.target != "git":
        sys.stderr.write("gatesh install: --global applies to git only\n")
        return EXIT_USAGE
    harness = Harness.parse(args.target)  # None: a target that is no harness
    if args.codex and harness is not Harness.CODEX:
        sys.stderr.write("gatesh install: --codex applies to codex only\n")
        return EXIT_USAGE
    if args.settings and harness is None:
        sys.stderr.write("gatesh install: --settings applies to claude-code, codex and gemini\n")
        return EXIT_USAGE
    if args.target == "all" and not args.uninstall:
        sys.stderr.write(
            "gatesh install: `all` is for --uninstall (install each integration by name)\n"
        )
        return EXIT_USAGE
    try:
        if args.target == "all":
            print(uninstall_all())
        elif harness is not None:
            print(
                install_harness(
                    harness, uninstall=args.uninstall, settings=args.settings, codex=args.codex
                )
            )
        elif args.target == "git":
            print(install_git(global_=args.global_, uninstall=args.uninstall))
        elif args.target == "service":
            print(install_daemon_service(uninstall=args.uninstall))
        else:
            print(install_shims(uninstall=args.uninstall))
    except (InstallError, OSError) as exc:
        sys.stderr.write(f"gatesh install {args.target}: {exc}\n")
        return EXIT_ERROR
    return EXIT_OK
