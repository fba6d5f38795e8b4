"""Package removal, publishing, services, power, kernel, mounts and DNS: changes to the machine
itself and to what it serves."""

from __future__ import annotations

import re
from typing import Final

from gatesh.rater.builtin._base import C, Cmd, D, Hit, MatchResult, Rule, heads
from gatesh.vocab.paths import devices

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


def publish(c: Cmd) -> MatchResult:
    h, verb = c.head, c.sub(0)
    if c.has("--dry-run", "--dryrun") or (h == "cargo" and verb == "publish" and c.has("-n")):
        return None  # the registry is not written: the package is only built and checked
    if h in ("npm", "pnpm", "yarn", "bun") and verb in ("publish", "unpublish", "deprecate"):
        return True
    if (
        h == "dotnet"
    ):  # `dotnet publish` builds a deployable folder here; `dotnet nuget push` uploads
        return (verb == "nuget" and c.sub(1) in ("push", "delete")) or None
    if h in (
        "cargo",
        "poetry",
        "gem",
        "gradle",
        "gradlew",
        "mvn",
        "mvnw",
        "twine",
        "flit",
        "hatch",
        "uv",
    ) and verb in ("publish", "push", "upload", "yank", "deploy", "nuget"):
        return True
    if h in ("mvn", "mvnw", "gradle", "gradlew") and any(
        a.startswith(("release:perform", "deploy", "publish")) for a in c.args
    ):
        return True
    return (h in ("twine",) and verb == "upload") or None


def services(c: Cmd) -> MatchResult:
    h = c.head
    if h == "systemctl":
        verb = c.sub(0)
        if verb in (
            "stop",
            "disable",
            "mask",
            "kill",
            "isolate",
            "daemon-reexec",
            "restart",
            "try-restart",
        ):
            units = " ".join(c.pos[1:]) or "a service"
            return Hit(detail=f"{verb}s {units}")
        return None
    if (
        h == "service"
        and len(c.pos) >= 2
        and c.pos[1].lower() in ("stop", "disable", "restart", "force-stop")
    ):
        return Hit(detail=f"{c.pos[1].lower()}s {c.pos[0]}")
    if h in ("launchctl",) and c.sub(0) in (
        "unload",
        "remove",
        "bootout",
        "disable",
        "kill",
        "stop",
    ):
        return Hit(detail=f"{c.sub(0)}s a launchd job")
    if h in ("chkconfig", "update-rc.d", "sysrc", "rc-update") and any(
        a.lower() in ("off", "remove", "del", "disable")
        or '="no"' in a.lower()
        or "=no" in a.lower()
        for a in c.args
    ):
        return Hit(detail="turns a service off at boot")
    if h in ("nginx", "apachectl", "apache2ctl", "httpd", "caddy", "haproxy", "php-fpm") and (
        any(a in ("stop", "quit", "graceful-stop") for a in c.args) or c.has("-sf", "-st")
    ):
        return Hit(detail=f"{h} stops or replaces the running server")
    return None


# Processes whose loss takes the machine, or the way in to it, down: init, the service manager,
# the remote login daemon, the message bus.
_VITAL_PROCESSES: Final = frozenset(
    {"1", "init", "systemd", "sshd", "ssh", "dbus-daemon", "dbus", "launchd", "kernel_task"}
)
_KILLERS: Final = frozenset({"kill", "killall", "pkill", "killall5", "skill", "slay", "pkill5"})


def root_kill(c: Cmd) -> MatchResult:
    """A process killed under sudo: every process of the machine is in reach, services and other
    users' programs; init, sshd or the bus takes the machine or the way in down."""
    if c.head not in _KILLERS or not c.sc.privileged:
        return None
    signal = c.opt_value("-s", "--signal") or next(
        (a[1:] for a in c.args if a[:1] == "-" and a[1:].isdigit()), ""
    )
    if signal in ("0",) or any(a in ("-l", "-L", "--list", "-0") for a in c.args):
        return None  # signal 0 only asks whether a process exists
    targets = {p.lower() for p in c.pos if p.lower() not in ("kill", "term", "9", "15")}
    vital = sorted(targets & _VITAL_PROCESSES)
    if vital:
        return Hit(
            severity=C,
            detail=f"{c.head} as root stops {vital[0]}, which keeps the machine reachable",
        )
    if targets or c.head == "killall5":
        return Hit(detail=f"{c.head} as root stops {' '.join(sorted(targets))[:60] or 'processes'}")
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
_SYSTEM_INSTALLERS: Final = heads(
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


def power(c: Cmd) -> MatchResult:
    h = c.head
    if h in ("reboot", "poweroff", "halt", "shutdown"):
        if c.has("-c", "--help") or (h == "shutdown" and c.has("-k")):
            return None
        return True
    if h in ("init", "telinit") and c.sub(0) in ("0", "6", "1", "s"):
        return True
    if h == "systemctl" and c.sub(0) in (
        "reboot",
        "poweroff",
        "halt",
        "kexec",
        "suspend",
        "hibernate",
        "rescue",
        "emergency",
    ):
        return True
    if h == "tmutil" and c.sub(0) in (
        "disable",
        "delete",
        "deletelocalsnapshots",
        "thinlocalsnapshots",
        "disablelocal",
    ):
        return Hit(detail="turns off or deletes Time Machine backups", severity=C)
    return None


def kernel(c: Cmd) -> MatchResult:
    h = c.head
    if h in ("rmmod",) or (h == "modprobe" and c.has("-r", "--remove")):
        return Hit(detail="unloads a kernel module")
    if h == "sysctl" and (c.has("-w", "--write", "-p", "--load") or any("=" in p for p in c.pos)):
        return Hit(detail="changes kernel parameters")
    if h in ("swapoff", "swapon") and h == "swapoff":
        return Hit(detail="turns swap off")
    if h in ("mount", "umount") and c.pos:
        return Hit(detail=f"{'un' if h == 'umount' else ''}mounts a file system")
    if h in ("date",) and (
        c.has("-s", "--set") or (c.pos and c.pos[0].isdigit() and len(c.pos[0]) >= 8)
    ):
        return Hit(detail="changes the system clock")
    if h in ("timedatectl", "hostnamectl") and c.sub(0).startswith("set"):
        return Hit(detail="changes system settings")
    if h in ("chattr", "chflags") and c.pos:
        return Hit(detail="changes file attributes (immutability, hiding)")
    return None


def dns(c: Cmd) -> MatchResult:
    """Changes to live DNS served to others: nsupdate exists only to send such changes."""
    if c.head == "nsupdate":
        return (
            None
            if c.has("-V")
            else Hit(detail="nsupdate sends dynamic updates to live DNS records")
        )
    if c.head == "rndc" and c.sub(0) in (
        "stop",
        "halt",
        "delzone",
        "modzone",
        "freeze",
        "sync",
        "flush",
    ):
        return Hit(detail=f"rndc {c.sub(0)} changes what the DNS server serves")
    return None


def disks(c: Cmd) -> MatchResult:
    h = c.head
    if h.startswith("mkfs") or h in (
        "wipefs",
        "mkswap",
        "fdisk",
        "sfdisk",
        "gdisk",
        "sgdisk",
        "parted",
        "cfdisk",
        "blkdiscard",
        "mdadm",
    ):
        if (
            c.has("-h", "--help")
            or devices.device_read(h, tuple((w.text, w.static) for w in c.sc.argv[1:])) is not None
        ):
            return None  # a form that only prints or checks the partition table (vocab.paths.devices.DEVICE_READS)
        return True
    if h == "diskutil" and c.sub(0) in (
        "erasedisk",
        "erasevolume",
        "partitiondisk",
        "zerodisk",
        "secureerase",
        "reformat",
    ):
        return True
    return None


# Package managers of the system itself (their packages land in system folders, for every user):
# installing, upgrading or reinstalling with one changes the machine, outside the working tree.
_SYSTEM_PACKAGERS: Final = heads(
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


RULES: tuple[Rule, ...] = (
    Rule(
        "system.root-kill",
        D,
        "This {detail}.",
        root_kill,
        heads=_KILLERS,
        remedy="stop only the processes this task started, as yourself",
        examples=(
            "sudo killall -9 sshd",
            "sudo kill -9 1",
            "sudo pkill -f nginx",
            "doas killall -KILL dbus-daemon",
            "sudo kill -s KILL 1",
        ),
        counter=("kill 12345", "pkill -f 'node server.js'", "sudo kill -0 1", "sudo kill -l"),
    ),
    Rule(
        "system.package-remove",
        D,
        "This {detail}.",
        pkg_remove,
        heads=PKG,
        remedy="leave installed packages alone, or remove only what you installed in this task",
        examples=(
            "apt remove nginx",
            "sudo apt-get purge -y docker",
            "pip uninstall requests",
            "brew uninstall node",
            "npm uninstall -g typescript",
            "pacman -Rns foo",
        ),
        counter=(
            "apt install jq",
            "pip install -e .",
            "npm install",
            "brew list",
            "cargo r --release",
            "bun unlink",
            "npm uninstall lodash --dry-run",
        ),
    ),
    Rule(
        "system.publish",
        C,
        "Publishing a release to a public registry cannot be taken back from here.",
        publish,
        heads=PKG | heads("gradle", "gradlew", "mvn", "mvnw", "twine", "dotnet", "flit", "hatch"),
        examples=(
            "npm publish",
            "cargo publish",
            "twine upload dist/*",
            "poetry publish",
            "dotnet nuget push x.nupkg",
        ),
        counter=(
            "npm pack",
            "cargo build",
            "poetry build",
            "npm publish --dry-run",
            "cargo publish -n",
            "dotnet publish -c Release",
        ),
    ),
    Rule(
        "system.service-stop",
        D,
        "This {detail}, interrupting whatever depends on it.",
        services,
        heads=heads(
            "systemctl",
            "service",
            "launchctl",
            "chkconfig",
            "update-rc.d",
            "sysrc",
            "rc-update",
            "nginx",
            "apachectl",
            "apache2ctl",
            "httpd",
            "caddy",
            "haproxy",
            "php-fpm",
        ),
        remedy="leave system services running",
        examples=("systemctl stop nginx", "sudo systemctl disable docker", "service mysql stop"),
        counter=(
            "systemctl status nginx",
            "systemctl list-units",
            "service nginx status",
            "systemctl reset-failed nginx",
        ),
    ),
    Rule(
        "system.local-package",
        D,
        "This {detail}: a change to the machine from a file no package repository vouches for.",
        local_package,
        heads=_SYSTEM_INSTALLERS,
        remedy="install the package by name from the distribution's repository, without flags that skip its checks",
        examples=(
            "dpkg -i x.deb",
            "sudo apt install ./tool_1.0_amd64.deb",
            "rpm -ivh x.rpm",
            "dnf install ./x.rpm",
            "snap install x.snap --dangerous",
            "apk add --allow-untrusted x.apk",
            "installer -pkg Tool.pkg -target /",
            "pacman -U x.pkg.tar.zst",
            "rpm -i --nodeps x.rpm",
            "apt-get install --allow-unauthenticated foo",
        ),
        counter=(
            "apt install jq",
            "dpkg -l",
            "rpm -qa",
            "snap install hello",
            "dnf install git",
            "dpkg -c x.deb",
            "pacman -Syu",
            "installer -pkginfo -pkg Tool.pkg",
            "pacman -Up x.pkg.tar.zst",
        ),
    ),
    Rule(
        "system.power",
        D,
        "Shutting down or rebooting the machine ends every running session and job.",
        power,
        heads=heads(
            "reboot", "poweroff", "halt", "shutdown", "init", "telinit", "systemctl", "tmutil"
        ),
        remedy="finish the task without restarting or shutting down the machine",
        examples=("reboot", "shutdown -h now", "sudo poweroff", "systemctl reboot", "init 6"),
        counter=("shutdown -c", "systemctl status", "uptime"),
    ),
    Rule(
        "system.kernel",
        D,
        "This {detail} for the whole machine.",
        kernel,
        heads=heads(
            "rmmod",
            "modprobe",
            "sysctl",
            "swapoff",
            "swapon",
            "mount",
            "umount",
            "date",
            "timedatectl",
            "hostnamectl",
            "chattr",
            "chflags",
        ),
        remedy="do the task without changing machine-wide settings",
        examples=(
            "modprobe -r kvm",
            "sysctl -w net.ipv4.ip_forward=1",
            "swapoff -a",
            "umount /mnt/data",
            "date -s '2020-01-01'",
            "chattr -i file",
        ),
        counter=("sysctl -a", "mount", "date", "modprobe --help"),
    ),
    Rule(
        "system.dns-change",
        D,
        "This {detail}, which resolvers elsewhere may cache.",
        dns,
        heads=heads("nsupdate", "rndc"),
        remedy="do the task without changing DNS records",
        examples=(
            "nsupdate -l",
            "nsupdate -k Kkey.private changes.txt",
            "rndc delzone example.com",
        ),
        counter=("nsupdate -V", "rndc status", "dig example.com"),
    ),
    Rule(
        "system.disk-format",
        C,
        "Formatting or repartitioning a disk destroys everything on it.",
        disks,
        heads=heads(
            "mkfs",
            "mkfs.ext4",
            "mkfs.xfs",
            "mkfs.vfat",
            "mkfs.btrfs",
            "wipefs",
            "mkswap",
            "fdisk",
            "sfdisk",
            "gdisk",
            "sgdisk",
            "parted",
            "cfdisk",
            "blkdiscard",
            "mdadm",
            "diskutil",
        ),
        examples=(
            "mkfs.ext4 /dev/sdb1",
            "wipefs -a /dev/sdb",
            "diskutil eraseDisk JHFS+ X disk2",
            "sgdisk -Z /dev/sdb",
            "sgdisk -l backup.gpt /dev/sdb",
            "parted /dev/sdb mklabel gpt",
            "mdadm --zero-superblock /dev/sdb1",
            "sfdisk /dev/sdb < table.dump",
        ),
        counter=(
            "fdisk -l",
            "diskutil list",
            "sudo sgdisk -p /dev/sdb",
            "parted /dev/sdb print",
            "wipefs /dev/sdb",
            "wipefs -a -n /dev/sdb",
            "sudo mdadm --detail /dev/md0",
            "sfdisk -d /dev/sdb",
        ),
    ),
    Rule(
        "system.package-install",
        D,
        "This {detail}: a change to the machine itself, outside the working tree.",
        system_install,
        heads=_SYSTEM_PACKAGERS,
        remedy="install into the project instead (a virtual environment, node_modules), or say in "
        "the justification why the task needs this system package",
        examples=(
            "apt install -y nginx",
            "sudo apt-get install -y python3-pip ffmpeg",
            "dnf install git",
            "apk add curl",
            "pacman -S jq",
            "yum -y update",
            "apt-get dist-upgrade",
        ),
        counter=(
            "apt list --installed",
            "apt-get update",
            "apt search ffmpeg",
            "apt-get install -s nginx",
            "pacman -Ss jq",
            "flatpak install --user flathub org.x.App",
            "dnf info git",
        ),
    ),
)
