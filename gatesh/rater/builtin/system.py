"""Package removal, publishing, services, power, kernel, mounts and DNS: changes to the machine
itself and to what it serves.

The package rows' tests are in :mod:`gatesh.rater.builtin._packages`.
"""

from __future__ import annotations

from typing import Final

from gatesh.rater.builtin._base import C, Cmd, D, Hit, MatchResult, Rule, heads
from gatesh.rater.builtin._packages import (
    PKG,
    SYSTEM_INSTALLERS,
    SYSTEM_PACKAGERS,
    local_package,
    pkg_remove,
    system_install,
)
from gatesh.vocab.paths import devices


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
        heads=SYSTEM_INSTALLERS,
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
        heads=SYSTEM_PACKAGERS,
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
