"""Defence evasion: erasing history and logs, and turning off firewalls, audit, SELinux/AppArmor and
security agents. All of it is ``attack``: an agent's task never needs to hide what it did."""

from __future__ import annotations

import re
from typing import Final

from gatesh.rater.builtin._base import A, Cmd, Ctx, D, Hit, MatchResult, Rule, heads, write_targets

_HISTORY_TEXT: Final = re.compile(
    r"\bunset\s+(?:-v\s+)?HISTFILE\b|\bHIST(?:FILE)?SIZE=[\"']?0\b|\bHISTFILE=[\"']?/dev/null"
    r"|\bset\s+\+o\s+history\b|\bHISTCONTROL=[\"']?ignore|\bHISTIGNORE=[\"']?\S|\bhistory\s+-[cwdp]*c\b"
    r"|\bhistory\s+-d\b|\bshopt\s+-u\s+histappend\b|\bkill\s+-9\s+\$\$",
    re.I,
)
LOG_PATHS: Final = re.compile(
    r"^(?:/private)?/var/(?:log|audit|account|adm)(?:/|$)|^/var/spool/mail/|^/var/mail/|(?:^|/)(?:wtmp|btmp|utmp|lastlog)$"
    r"|_history$|/\.history$|^/var/lib/docker/containers/.*-json\.log$",
    re.I,
)
SECURITY_UNITS: Final = re.compile(
    r"auditd|apparmor|firewalld|ufw|iptables|ip6tables|nftables|netfilter|selinux|rsyslog|syslog|journald|"
    r"falcon|crowdstrike|carbonblack|cbdaemon|cb\.|osquery|sysmon|clamav|clamd|freshclam|fail2ban|wazuh|ossec|"
    r"sentinel|defender|mdatp|littlesnitch|opendns|santa|xprotect|elastic-agent|auditbeat|filebeat|splunk|"
    r"falco|aide|tripwire|snort|suricata|\bpf\b|^pf$|sshguard|lynis|rkhunter|chkrootkit|cylance|sophos|"
    r"eset|mcafee|symantec|trendmicro|qualys|tenable|nessus|datadog-agent|newrelic-infra|amazon-ssm|"
    r"google-guest|waagent|td-agent|fluentd|fluent-bit|vector|promtail|logstash|systemd-journald",
    re.I,
)
FIREWALL_FILES: Final = re.compile(
    r"^/etc/(?:ufw/|default/ufw|sysconfig/(?:ip6?tables|nftables)|pf\.conf|"
    r"nftables\.conf|iptables/|firewalld/)|^/etc/(?:selinux/config|"
    r"audit/|audisp/|security/audit|syslog\.conf|rsyslog|systemd/journald\.conf|"
    r"apparmor|apparmor\.d/)",
    re.I,
)


def history_tamper(ctx: Ctx) -> MatchResult:
    m = _HISTORY_TEXT.search(ctx.text)
    return Hit(detail=m.group(0).strip()) if m else None


# Every match of log_wipe holds one: a word LOG_PATHS needs, "~" or "$home" (a target the home
# folder is put into), or a head it knows.
_LOG_WIPE_NEEDS: Final = (
    "/var/",
    "wtmp",
    "btmp",
    "utmp",
    "lastlog",
    "_history",
    "/.history",
    "~",
    "$home",
    "journalctl",
    "log",
    "wevtutil",
    "auditctl",
)


def log_wipe(c: Cmd) -> MatchResult:
    h = c.head
    targets = write_targets(c)
    if h in ("ln",) and c.pos and c.pos[0] == "/dev/null":
        targets = list(c.pos[1:])
    home = c.ctx.home
    for t in targets:
        tt = home + t[1:] if t.startswith("~") else t.replace("$HOME", home)
        if LOG_PATHS.search(tt):
            if h in ("tee",) and c.has("-a", "--append") is not False:
                pass
            return Hit(detail=t)
    if (
        h == "find"
        and any(LOG_PATHS.search(p) for p in c.pos[:2])
        and (c.has("-delete") or "-exec" in c.args)
    ):
        return Hit(detail=c.pos[0])
    if h == "journalctl" and any(
        f.startswith(("--vacuum", "--rotate", "--flush")) for f in c.flags
    ):
        return Hit(detail="the systemd journal")
    if h == "log" and c.sub(0) == "erase":
        return Hit(detail="the unified log")
    if h in ("wevtutil",) or (h == "auditctl" and c.has("-D", "-d", "-e", "-W")):
        if h == "auditctl" and c.has("-e") and c.opt_value("-e") not in ("0",):
            return None
        return Hit(detail="audit rules")
    return None


# Turning off one kind of defence each: one rule id per kind, so explain and the audit log say
# which defence the command weakens.

_STOP_VERBS: Final = frozenset(
    {"stop", "disable", "mask", "kill", "unload", "bootout", "remove", "off", "del", "delete"}
)


def security_service(c: Cmd) -> MatchResult:
    """Stopping or disabling an audit, logging, firewall or security-agent service."""
    if any(a.lower() in _STOP_VERBS for a in c.args) or any(
        "_enable=" in a.lower() and "no" in a.lower() for a in c.args
    ):
        units = [a for a in c.pos if a.lower() not in _STOP_VERBS]
        if any(SECURITY_UNITS.search(u) for u in units):
            return Hit(detail="stops or disables a security, logging or firewall service")
    return None


def firewall(c: Cmd) -> MatchResult:
    h = c.head
    if h in ("iptables", "ip6tables", "iptables-legacy", "iptables-nft", "ebtables", "arptables"):
        if c.has("-F", "--flush", "-X", "--delete-chain", "-D", "--delete", "-Z") or (
            c.has("-P", "--policy") and "accept" in c.low
        ):
            return Hit(detail="flushes or deletes firewall rules")
        return None
    if h == "nft" and any(w in c.low for w in ("flush", "delete")):
        return Hit(detail="flushes firewall rules")
    if h == "ufw":
        v = c.sub(0)
        if v in (
            "disable",
            "reset",
            "delete",
            "allow",
            "logging",
            "insert",
            "prepend",
            "route",
        ) or (v == "default" and "allow" in c.low):
            return Hit(detail=f"ufw {v} weakens or rewrites the firewall")
        return None
    if h == "pfctl" and c.has("-d", "-F", "-f", "-a"):
        return Hit(detail="changes or disables the packet filter")
    if h == "firewall-cmd" and any(
        f.startswith(
            ("--remove", "--panic-off", "--add-port", "--add-service", "--set-default-zone")
        )
        for f in c.flags
    ):
        return Hit(detail="weakens firewalld")
    if h == "socketfilterfw" or h.endswith("socketfilterfw"):
        return Hit(detail="changes the macOS application firewall") if "off" in c.low else None
    for t in write_targets(c):
        if FIREWALL_FILES.search(t):
            return Hit(detail=f"rewrites {t}")
    return None


# Every match of firewall holds one: a head it knows ("iptables" is in iptables-nft and
# iptables-legacy, "socketfilterfw" in a path to it), or "/etc/", where every FIREWALL_FILES path is.
_FIREWALL_NEEDS: Final = (
    "iptables",
    "ip6tables",
    "ebtables",
    "arptables",
    "nft",
    "ufw",
    "pfctl",
    "firewall-cmd",
    "socketfilterfw",
    "/etc/",
)


def access_control(c: Cmd) -> MatchResult:
    """SELinux or AppArmor put in permissive mode or unloaded."""
    h = c.head
    if h == "setenforce" and c.pos and c.pos[0].lower() in ("0", "permissive"):
        return Hit(detail="sets SELinux to permissive")
    if h in ("aa-disable", "aa-complain", "aa-teardown") or (
        h == "apparmor_parser" and c.has("-R", "--remove")
    ):
        return Hit(detail="disables AppArmor profiles")
    return None


def platform_protection(c: Cmd) -> MatchResult:
    """macOS Gatekeeper, System Integrity Protection and quarantine; Defender's real-time scan."""
    h = c.head
    if h == "spctl" and any(
        a in ("--master-disable", "--global-disable", "--disable") for a in c.args
    ):
        return Hit(detail="disables Gatekeeper")
    if h == "csrutil" and c.sub(0) == "disable":
        return Hit(detail="disables System Integrity Protection")
    if h == "mdatp" and "disabled" in c.low:
        return Hit(detail="disables Defender real-time protection")
    if h == "xattr" and "com.apple.quarantine" in c.low and c.has("-d", "-c", "-r"):
        return Hit(detail="strips the quarantine flag (Gatekeeper bypass)")
    return None


def aslr_off(c: Cmd) -> MatchResult:
    if c.head == "sysctl" and "randomize_va_space=0" in c.low:
        return Hit(detail="disables address-space randomisation")
    if any(t.startswith("/proc/sys/kernel/randomize_va_space") for t in write_targets(c)):
        return Hit(detail="disables address-space randomisation")
    return None


def backups_off(c: Cmd) -> MatchResult:
    if c.head == "tmutil" and c.sub(0) == "disable":
        return Hit(detail="disables backups")
    return None


def proc_writes(c: Cmd) -> MatchResult:
    for t in c.writes:
        if t == "/proc/sysrq-trigger":
            return Hit(detail="triggers a kernel action (reboot, crash) through sysrq")
        if t.startswith("/proc/sys/"):
            return Hit(detail=f"changes the kernel setting {t}")
    return None


def timestomp(c: Cmd) -> MatchResult:
    if c.head == "touch" and (
        c.has("-t", "-d", "--date", "-r", "--reference")
        or any(
            a.startswith("-") and ("t" in a or "r" in a) and a[1:].isalpha() and len(a) > 2
            for a in c.args
        )
    ):
        return True
    if c.head in ("setfile", "SetFile") and c.has("-m", "-d"):
        return True
    return None


RULES: tuple[Rule, ...] = (
    Rule(
        "evasion.history",
        A,
        "This hides the shell history ({detail}), which only covering tracks needs.",
        history_tamper,
        on_facts=True,
        needs=("hist", "kill"),  # every alternative of _HISTORY_TEXT holds one
        examples=(
            "history -c",
            "unset HISTFILE",
            "export HISTFILE=/dev/null",
            "set +o history",
            "export HISTSIZE=0",
        ),
        counter=("history | tail", "echo $HISTFILE"),
    ),
    Rule(
        "evasion.log-wipe",
        A,
        "This erases or overwrites logs or history ({detail}), destroying the record of what happened.",
        log_wipe,
        examples=(
            "rm ~/.bash_history",
            "echo '' > /var/log/messages",
            "truncate -s 0 /var/log/syslog",
            "shred -u /var/log/auth.log",
            "journalctl --vacuum-time=1s",
            "ln -sf /dev/null ~/.bash_history",
            "auditctl -D",
        ),
        counter=("tail /var/log/syslog", "journalctl -u nginx", "cat ~/.bash_history | wc -l"),
        needs=_LOG_WIPE_NEEDS,
    ),
    Rule(
        "evasion.security-service",
        A,
        "This {detail}, weakening the machine's defences.",
        security_service,
        heads=heads(
            "systemctl", "service", "launchctl", "chkconfig", "sysrc", "rc-update", "update-rc.d"
        ),
        examples=(
            "systemctl stop auditd",
            "service firewalld stop",
            "sudo systemctl disable apparmor",
            "launchctl unload /Library/LaunchDaemons/com.crowdstrike.falcond.plist",
        ),
        counter=("systemctl stop myapp", "systemctl status auditd"),
    ),
    Rule(
        "evasion.firewall",
        A,
        "This {detail}, weakening the machine's defences.",
        firewall,
        needs=_FIREWALL_NEEDS,
        examples=(
            "ufw disable",
            "iptables -F",
            "nft flush ruleset",
            "pfctl -d",
            "echo x >> /etc/ufw/user.rules",
            "firewall-cmd --add-port=4444/tcp",
        ),
        counter=("ufw status", "iptables -L", "nft list ruleset"),
    ),
    Rule(
        "evasion.access-control",
        A,
        "This {detail}, weakening the machine's defences.",
        access_control,
        heads=heads("setenforce", "aa-disable", "aa-complain", "aa-teardown", "apparmor_parser"),
        examples=(
            "setenforce 0",
            "aa-disable /etc/apparmor.d/usr.sbin.cupsd",
            "apparmor_parser -R profile",
        ),
        counter=("getenforce", "setenforce 1", "aa-status"),
    ),
    Rule(
        "evasion.platform-protection",
        A,
        "This {detail}, weakening the machine's defences.",
        platform_protection,
        heads=heads("spctl", "csrutil", "mdatp", "xattr"),
        examples=(
            "sudo spctl --master-disable",
            "csrutil disable",
            "mdatp config real-time-protection --value disabled",
            "xattr -d com.apple.quarantine app.dmg",
        ),
        counter=("spctl --status", "csrutil status", "xattr -l f"),
    ),
    Rule(
        "evasion.aslr",
        A,
        "This {detail}, weakening the machine's defences.",
        aslr_off,
        needs=("randomize_va_space",),
        examples=(
            "sysctl -w kernel.randomize_va_space=0",
            "echo 0 > /proc/sys/kernel/randomize_va_space",
        ),
        counter=("sysctl kernel.randomize_va_space",),
    ),
    Rule(
        "evasion.backups",
        A,
        "This {detail}, weakening the machine's defences.",
        backups_off,
        heads=heads("tmutil"),
        examples=("tmutil disable",),
        counter=("tmutil status",),
    ),
    Rule(
        "evasion.proc-sys",
        D,
        "This {detail} for the whole machine.",
        proc_writes,
        needs=("/proc/sys",),
        remedy="do the task without changing kernel settings",
        examples=("echo b > /proc/sysrq-trigger", "echo 3 > /proc/sys/vm/drop_caches"),
        counter=("cat /proc/sys/vm/swappiness",),
    ),
    Rule(
        "evasion.timestomp",
        D,
        "Setting file times by hand can disguise when files changed.",
        timestomp,
        heads=heads("touch", "setfile"),
        remedy="let the file keep its real timestamps",
        examples=("touch -t 197001010000 f", "touch -r /bin/sh f"),
        counter=("touch newfile.txt",),
    ),
)
