"""Persistence: anything that makes code run again later (cron, at, systemd, launchd, shell rc files,
authorized_keys, init scripts, startup hooks, kernel modules, preloaded libraries)."""

from __future__ import annotations

import re
from typing import Final

from gatesh.rater.builtin._base import A, Cmd, Ctx, D, Hit, MatchResult, Rule, heads

_PERSIST_TEXT: Final = re.compile(
    r"\b(?:sitecustomize|usercustomize)\.py\b|\bLoginHook\b|login item", re.I
)


def crontab(c: Cmd) -> MatchResult:
    if c.has("-l", "--list"):
        return None
    if c.has("-r"):
        return Hit(
            severity=D,
            detail="deletes every scheduled job of the user",
            remedy="edit out only the one job",
        )
    return Hit(detail="installs scheduled jobs")


def at_job(c: Cmd) -> MatchResult:
    if c.head in ("atq", "atrm") or c.has("-l", "-c", "-d", "-r"):
        return None
    return Hit(detail="schedules a job to run later")


def systemd_timer(c: Cmd) -> MatchResult:
    h = c.head
    if h == "systemd-run" and any(f.startswith(("--on-", "--timer-property")) for f in c.flags):
        return Hit(detail="creates a systemd timer")
    if h == "systemctl" and c.sub(0) in (
        "edit",
        "link",
        "preset",
        "set-default",
        "add-wants",
        "add-requires",
    ):
        return Hit(detail=f"systemctl {c.sub(0)} changes what starts at boot")
    if h == "systemctl" and c.sub(0) == "enable":
        return Hit(
            severity=D,
            detail="makes a service start at every boot",
            remedy="start it for this session only (systemctl start)",
        )
    if h == "launchctl" and c.sub(0) in ("load", "bootstrap", "submit", "enable"):
        return Hit(detail="registers a launchd job")
    if h in ("update-rc.d", "chkconfig", "rc-update") and any(
        a in ("defaults", "enable", "on", "add") for a in c.args
    ):
        return Hit(severity=D, detail="makes a service start at boot")
    if (h == "defaults" and "loginhook" in c.low) or (
        h == "defaults" and "loginwindow" in c.low and "write" in c.low
    ):
        return Hit(detail="installs a login hook")
    return None


def kernel_module(c: Cmd) -> MatchResult:
    h = c.head
    if h == "modprobe" and (
        c.has("-r", "--remove", "-n", "--dry-run", "-c", "--showconfig", "-l", "--help")
        or not c.pos
    ):
        return None
    if h in ("insmod", "modprobe", "kextload", "kmutil") and (h != "kmutil" or c.sub(0) == "load"):
        return Hit(detail=f"{h} loads code into the kernel")
    return None


def preload_env(c: Cmd) -> MatchResult:
    for a in c.sc.assignments:
        name = a.split("=", 1)[0]
        if (
            name in ("LD_PRELOAD", "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "LD_LIBRARY_PATH")
            and "=" in a
            and a.split("=", 1)[1]
        ):
            if name == "LD_LIBRARY_PATH" and not re.search(
                r"(?:^|:)(?:/tmp|/dev/shm|\.)", a.split("=", 1)[1]
            ):
                continue
            return Hit(detail=name)
    if c.head in ("export", "declare", "typeset", "setenv", "launchctl"):
        for a in c.args:
            if re.match(r"^(?:LD_PRELOAD|LD_AUDIT|DYLD_INSERT_LIBRARIES)(?:=|$)", a):
                return Hit(detail=a.split("=", 1)[0])
    return None


# systemd-run's timer options, in the segment of the text where systemd-run starts.
_SYSTEMD_RUN_TIMER: Final = re.compile(r"\bsystemd-run\b[^;&|\n]*?\s--(?:on-|timer-property)")


def systemd_run_timer(ctx: Ctx) -> MatchResult:
    """`systemd-run --on-calendar … CMD`: the reader peels systemd-run off CMD (which may itself be
    re-read, as `sh -c '…'` is), so the timer options are looked for in the text, once a command
    is known to run under systemd-run."""
    if any("systemd-run" in c.sc.wrappers for c in ctx.cmds) and _SYSTEMD_RUN_TIMER.search(
        ctx.text
    ):
        return Hit(detail="creates a systemd timer")
    return None


def persist_text(ctx: Ctx) -> MatchResult:
    if _PERSIST_TEXT.search(ctx.text) and any(
        c.writes or c.head in ("cp", "tee", "mv", "osascript", "defaults") for c in ctx.cmds
    ):
        return Hit(detail="a startup hook")
    return None


RULES: tuple[Rule, ...] = (
    Rule(
        "persist.crontab",
        A,
        "crontab {detail}.",
        crontab,
        heads=heads("crontab"),
        examples=("crontab jobs.txt", "crontab -e", "crontab -r"),
        counter=("crontab -l",),
    ),
    Rule(
        "persist.at",
        A,
        "at {detail}.",
        at_job,
        heads=heads("at", "batch"),
        examples=("echo 'x' | at now + 1 minute",),
        counter=("at -l",),
    ),
    Rule(
        "persist.service",
        A,
        "This {detail}.",
        systemd_timer,
        heads=heads(
            "systemd-run",
            "systemctl",
            "launchctl",
            "update-rc.d",
            "chkconfig",
            "rc-update",
            "defaults",
        ),
        examples=(
            "launchctl load ~/Library/LaunchAgents/x.plist",
            "systemctl edit nginx",
            "systemctl enable nginx",
        ),
        counter=("systemctl status nginx", "systemd-run --scope true", "launchctl list"),
    ),
    Rule(
        "persist.systemd-timer",
        A,
        "This {detail}.",
        systemd_run_timer,
        on_facts=True,
        examples=(
            "systemd-run --on-calendar '*:0/1' /bin/true",
            "systemd-run --on-active=30 rm -rf x",
            "systemd-run --user --on-calendar '*:0/1' /bin/sh -c 'date >> /tmp/log'",
        ),
        counter=("systemd-run --scope true", "systemd-run --user make"),
    ),
    Rule(
        "persist.kernel-module",
        A,
        "This {detail} (the way rootkits persist).",
        kernel_module,
        heads=heads("insmod", "modprobe", "kextload", "kmutil"),
        examples=("insmod rootkit.ko", "modprobe evil"),
        counter=("modprobe -r x", "lsmod"),
    ),
    Rule(
        "persist.preload",
        A,
        "Setting {detail} injects a library into programs (library-load hijack).",
        preload_env,
        examples=("LD_PRELOAD=/tmp/x.so ls", "export LD_PRELOAD=/tmp/evil.so"),
        counter=("LANG=C ls", "export PATH=$PATH:/opt/bin"),
    ),
    Rule(
        "persist.startup-hook",
        A,
        "This installs {detail} that runs code at every start.",
        persist_text,
        on_facts=True,
        needs=(
            "sitecustomize",
            "usercustomize",
            "loginhook",
            "login item",
        ),  # _PERSIST_TEXT's words
        examples=("cp hook.py /usr/lib/python3/site-packages/sitecustomize.py",),
        counter=("python -m site",),
    ),
)
