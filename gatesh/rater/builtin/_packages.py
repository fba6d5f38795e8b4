"""The tests of the system table's package rows: removing installed packages, installing a
package file from disk or with the checks skipped, and installing or upgrading with the system's
own package managers (whose packages land in system folders, for every user). The rows are in
:data:`gatesh.rater.builtin.system.RULES`.
"""

from __future__ import annotations

import re
from typing import Final

from gatesh.rater.builtin._base import Cmd, Hit, MatchResult, heads

_REMOVE_VERBS: Final = frozenset(
    {
        "remove",
        "purge",
        "autoremove",
        "erase",
        "uninstall",
        "rm",
        "un",
        "unlink",
        "r",
        "delete",
        "prune",
    }
)
PKG: Final = heads(
    "apt",
    "apt-get",
    "aptitude",
    "dnf",
    "yum",
    "zypper",
    "pacman",
    "yay",
    "paru",
    "brew",
    "port",
    "snap",
    "flatpak",
    "apk",
    "pkg",
    "emerge",
    "nix-env",
    "pip",
    "pip3",
    "pipx",
    "uv",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "gem",
    "cargo",
    "poetry",
    "conda",
    "mamba",
    "micromamba",
    "go",
    "dpkg",
    "rpm",
    "choco",
    "winget",
    "composer",
)


_REMOVES: Final = Hit(detail="removes installed packages")


def pkg_remove(c: Cmd) -> MatchResult:
    h = c.head
    if h == "pacman" or h in ("yay", "paru"):
        return _REMOVES if any(a.startswith("-R") for a in c.args) else None
    if h == "dpkg":
        return _REMOVES if c.has("-r", "-P", "--remove", "--purge") else None
    if h == "rpm":
        return _REMOVES if c.has("-e", "--erase") else None
    if h == "nix-env":
        return _REMOVES if c.has("-e", "--uninstall") else None
    if h == "emerge":
        return _REMOVES if c.has("--unmerge", "-C", "--depclean", "-c") else None
    verb = c.sub(0)
    if h == "uv" and verb == "pip":
        verb = c.sub(1)
    if h == "yarn" and verb == "global":
        verb = c.sub(1)
    if h == "conda" and verb == "env":
        verb = c.sub(1)
    if h == "go" or (h == "composer" and verb not in ("remove",)) or c.has("--dry-run"):
        return None
    if (h == "cargo" and verb == "r") or (h == "bun" and verb == "unlink"):
        return None  # `cargo r` is cargo run; `bun unlink` unregisters this folder's package link
    if verb in _REMOVE_VERBS:
        if h in ("npm", "pnpm", "yarn", "bun", "poetry", "cargo", "uv", "composer") and verb in (
            "rm",
            "r",
            "remove",
            "uninstall",
            "un",
            "unlink",
        ):
            glob = c.has("-g", "--global") or c.sub(0) == "global"
            return Hit(
                detail="removes a project dependency"
                if not glob
                else "removes a globally installed package"
            )
        return Hit(detail="removes installed packages")
    return None


# Package files installed from disk rather than from a repository that signs them, and the flags
# that skip the checks a package manager makes.
_PACKAGE_FILE: Final = re.compile(
    r"\.(?:deb|rpm|snap|apk|pkg|mpkg|pkg\.tar\.(?:zst|xz|gz)|flatpak|flatpakref|appimage|"
    r"msi|xbps|txz)$",
    re.I,
)
_UNCHECKED: Final = frozenset(
    {
        "--dangerous",
        "--devmode",
        "--nodeps",
        "--force",
        "--force-all",
        "--force-depends",
        "--force-overwrite",
        "--allow-untrusted",
        "--nogpgcheck",
        "--no-gpg-checks",
        "--allow-unauthenticated",
        "--allow-downgrades",
        "--no-signature",
        "--nosignature",
        "--skip-broken",
        "--replacefiles",
        "--replacepkgs",
        "--insecure",
        "--unsigned",
        "--allow-insecure-repositories",
        "--ignore-signatures",
    }
)
_INSTALL_VERBS: Final = frozenset(
    {
        "install",
        "in",
        "add",
        "localinstall",
        "reinstall",
        "upgrade",
        "update",
        "-i",
        "-U",
        "--install",
        "--upgrade",
        "-Uvh",
        "-ivh",
        "-Uv",
        "-iv",
    }
)
SYSTEM_INSTALLERS: Final = heads(
    "dpkg",
    "apt",
    "apt-get",
    "aptitude",
    "rpm",
    "dnf",
    "yum",
    "zypper",
    "snap",
    "apk",
    "installer",
    "pacman",
    "gdebi",
    "flatpak",
    "pkg",
    "port",
    "xbps-install",
    "microdnf",
    "opkg",
    "pkg_add",
)


_INSTALLER_QUERIES: Final = (
    "-pkginfo",
    "-volinfo",
    "-dominfo",
    "-query",
    "-showChoicesXML",
    "-showChoiceChangesXML",
    "-showChoicesAfterApplyingChangesXML",
    "-vers",
    "-help",
)


def local_package(c: Cmd) -> MatchResult:
    h = c.head
    words = [a for a in c.args]
    files = [p for p in c.pos if _PACKAGE_FILE.search(p)]
    if h == "installer":
        pkg = c.opt_value("-pkg", "-package")
        files = [pkg] if pkg else files
    if h == "installer" and not c.has("-target", "-tgt") and c.has(*_INSTALLER_QUERIES):
        return None  # macOS installer: these print what a package holds; only -target installs
    if h == "pacman" and c.has("-p", "--print"):
        return None  # pacman -Up prints the targets instead of installing them
    installing = (
        (h in ("dpkg",) and c.has("-i", "--install", "--unpack"))
        or (
            h == "rpm"
            and any(a.startswith(("-i", "-U", "-F")) and not a.startswith("--") for a in words)
        )
        or (h == "pacman" and any(a.startswith("-U") for a in words))
        or h in ("gdebi", "installer")
        or (c.sub(0) in _INSTALL_VERBS)
    )
    if not installing:
        return None
    unchecked = sorted(f for f in c.flags if f in _UNCHECKED or f.startswith("--force-"))
    if files:
        return Hit(
            detail=f"installs the local package file {files[0]}"
            + (f" with {unchecked[0]}" if unchecked else "")
        )
    if unchecked:
        return Hit(
            detail=f"installs packages with {unchecked[0]}, which skips the package manager's checks"
        )
    return None


# Package managers of the system itself (their packages land in system folders, for every user):
# installing, upgrading or reinstalling with one changes the machine, outside the working tree.
SYSTEM_PACKAGERS: Final = heads(
    "apt",
    "apt-get",
    "aptitude",
    "dnf",
    "yum",
    "microdnf",
    "zypper",
    "apk",
    "pacman",
    "snap",
    "flatpak",
    "port",
    "pkg",
    "xbps-install",
    "opkg",
    "pkg_add",
    "emerge",
)
_SYSTEM_INSTALL_VERBS: Final = frozenset(
    {
        "install",
        "in",
        "add",
        "reinstall",
        "upgrade",
        "full-upgrade",
        "dist-upgrade",
        "dup",
        "localinstall",
        "groupinstall",
        "refresh",
    }
)
_SIMULATE: Final = frozenset(
    {"-s", "--simulate", "--dry-run", "--just-print", "--no-act", "--recon", "--print-uris"}
)


def system_install(c: Cmd) -> MatchResult:
    """A system package manager installing, upgrading or reinstalling packages by name."""
    h = c.head
    if c.has(*_SIMULATE):
        return None
    if h == "pacman":
        sync = [a for a in c.args if a.startswith("-S") and not a.startswith("--")]
        if not sync or any(set(a[2:]) & set("sigpl") for a in sync):
            return None  # -Ss, -Si, -Sg, -Sp, -Sl look things up
        names = c.pos
    elif h in ("emerge", "xbps-install", "pkg_add"):
        if c.has("-C", "--unmerge", "-c", "--depclean", "-p", "--pretend", "-s", "--search"):
            return None  # removes, pretends or searches (package-remove judges the removals)
        if h == "emerge" and any(
            a.startswith("-") and not a.startswith("--") and set(a[1:]) & set("Ccps")
            for a in c.args
        ):
            return None
        names = c.pos
    else:
        verb = c.sub(0)
        if verb not in _SYSTEM_INSTALL_VERBS and not (h in ("dnf", "yum") and verb == "update"):
            return None
        if h == "flatpak" and c.has("--user"):
            return None  # into the user's own installation
        names = c.pos[1:]
    shown = " ".join(names[:3]) + (" …" if len(names) > 3 else "")
    return Hit(detail=f"installs system packages with {h}{(' (' + shown + ')') if shown else ''}")
