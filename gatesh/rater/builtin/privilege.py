"""Privilege escalation and weakened permissions: setuid bits, world-writable modes, capabilities,
sudoers and account databases, root shells, accounts and trust anchors."""

from __future__ import annotations

import re
from typing import Final

from gatesh._types import Context
from gatesh.rater.builtin._base import A, Cmd, D, Hit, MatchResult, Rule, heads
from gatesh.rater.builtin.code import rate_inner

_SUID_SYM: Final = re.compile(r"^[ugoa]*[+=][rwxXt]*s[rwxXt]*$")
_WORLD_SYM: Final = re.compile(r"^(?:[ugo]*[oa][ugo]*|)[+=][rxXst]*w")
_NUM: Final = re.compile(r"^[0-7]{3,4}$")
ACCOUNTS: Final = heads(
    "useradd",
    "adduser",
    "usermod",
    "userdel",
    "deluser",
    "groupadd",
    "groupmod",
    "groupdel",
    "gpasswd",
    "passwd",
    "chpasswd",
    "chsh",
    "chfn",
    "pw",
    "dscl",
    "sysadminctl",
    "dseditgroup",
    "newusers",
    "vipw",
    "vigr",
    "ldapadd",
    "ldapmodify",
    "net",
    "addgroup",
    "delgroup",
    "smbpasswd",
    "htpasswd",
    "pwconv",
)
ROOT_SHELL: Final = heads(
    "su", "sudo", "doas", "pkexec", "run0", "sg", "newgrp", "ksu", "sudo-rs", "machinectl"
)
CA_TOOLS: Final = heads(
    "update-ca-certificates", "update-ca-trust", "security", "trust", "certutil", "keytool"
)


def chmod(c: Cmd) -> MatchResult:
    modes = [
        a
        for a in c.args
        if _NUM.match(a)
        or _SUID_SYM.match(a)
        or _WORLD_SYM.match(a)
        or (a.startswith("+") and "s" in a and a[1:].isalpha())
    ]
    for m in modes:
        if _NUM.match(m):
            special = int(m[0]) if len(m) == 4 else 0
            if special & 6:
                return Hit(detail=f"sets the setuid/setgid bit (mode {m})")
            if int(m[-1]) & 2:
                return Hit(detail=f"makes files writable by every user (mode {m})")
        elif "s" in m.split("+")[-1].split("=")[-1]:
            return Hit(detail=f"sets the setuid/setgid bit ({m})")
        elif _WORLD_SYM.match(m) and not m.startswith(("u", "g")):
            return Hit(detail=f"makes files writable by every user ({m})")
    return None


def chown_root(c: Cmd) -> MatchResult:
    owner = c.pos[0] if c.pos else ""
    if c.head == "chgrp":
        return (
            Hit(severity=D, detail="gives files to the root group")
            if owner in ("root", "0", "wheel")
            else None
        )
    if owner.split(":")[0].split(".")[0] in ("root", "0"):
        return Hit(severity=D, detail="hands files to root")
    return None


def setcap(c: Cmd) -> MatchResult:
    if c.head == "setcap" and not c.has("-r", "-v"):
        return True
    return None


def install_suid(c: Cmd) -> MatchResult:
    mode = c.opt_value("-m", "--mode")
    if mode and _NUM.match(mode) and len(mode) == 4 and int(mode[0]) & 6:
        return True
    return None


# What xargs may do to the words it is fed before they reach the command (quotes, escapes, a
# printf format, a replacement string): the command line is then not the fed words as written.
_FED_UNCLEAR: Final = re.compile(r"[\\'\"%{}$`]")


def _fed_command(c: Cmd) -> str | None:
    """The command line ``xargs sudo …`` runs when every word fed to it is a static ``echo`` or
    ``printf`` word (``echo ok | xargs sudo --`` runs ``sudo -- ok``); None when it cannot be known."""
    feeders = c.feeders
    if not feeders or any(
        f.head not in ("echo", "printf") or any(f.dyn) or f.has("-e") for f in feeders
    ):
        return None
    words = [w for f in feeders for w in f.pos]
    if not words or any(_FED_UNCLEAR.search(w) for w in (*words, *c.args)):
        return None
    return " ".join([c.head, *c.args, *words])


def root_shell(c: Cmd) -> MatchResult:
    h = c.head
    if h in ("sudo", "sudo-rs", "doas", "run0"):
        if c.sc.context is Context.XARGS and not c.has("-s", "-i"):
            line = _fed_command(c)
            if line is not None:  # the command is known: judged as itself, not as a hidden one
                return rate_inner(line, c)
            return Hit(
                severity=D,
                detail=f"{h} runs commands read from input as root",
                remedy="name the command explicitly",
            )
        if c.has("-s", "--shell", "-i", "--login") or not c.pos:
            if c.has(
                "-l",
                "--list",
                "-v",
                "--validate",
                "-k",
                "-K",
                "-V",
                "--version",
                "-h",
                "--help",
                "-n",
            ) and not c.has("-s", "-i"):
                return None
            return Hit(detail=f"{h} {' '.join(c.args)}".strip())
        return None
    if h == "su":
        if c.has("-c", "--command", "--session-command"):
            return None
        return Hit(detail="su")
    if h in ("pkexec", "ksu", "sg", "newgrp") and (not c.pos or h in ("sg", "newgrp")):
        return Hit(detail=h)
    if h == "machinectl" and c.sub(0) in ("shell", "login"):
        return Hit(detail="machinectl shell")
    return None


def accounts(c: Cmd) -> MatchResult:
    h = c.head
    if h == "passwd" and c.has("-S", "--status"):
        return None
    if h == "dscl" and not any(
        a.lower() in ("-create", "-delete", "-passwd", "-append", "-change", "-merge")
        for a in c.args
    ):
        return None
    if h == "net" and not any(a.lower() in ("user", "group", "localgroup") for a in c.pos[:1]):
        return None
    if h == "pw" and not c.sub(0).startswith(("user", "group")):
        return None
    if h == "htpasswd":
        return None
    if h == "sysadminctl" and not any(
        a.lower().startswith(
            ("-adduser", "-deleteuser", "-resetpassword", "-secureTokenOn".lower())
        )
        for a in c.args
    ):
        return None
    if h in ("usermod", "gpasswd") and any(
        g in c.args for g in ("sudo", "wheel", "admin", "root", "docker")
    ):
        return Hit(detail="adds a user to an administrators' group")
    return Hit(detail=f"{h} changes user accounts")


def acl(c: Cmd) -> MatchResult:
    if c.head == "setfacl" and c.has("-m", "--modify", "-M", "-b", "--remove-all"):
        return True
    return None


def trust(c: Cmd) -> MatchResult:
    h = c.head
    if h in ("update-ca-certificates", "update-ca-trust") and not c.has("--help"):
        return True
    if h == "security" and c.sub(0) in (
        "add-trusted-cert",
        "add-certificates",
        "trust-settings-import",
    ):
        return True
    if h == "trust" and c.sub(0) in ("anchor",):
        return True
    if h == "certutil" and c.has("-A"):
        return True
    if h == "keytool" and c.has("-importcert", "-import") and "cacerts" in c.low:
        return True
    return None


_SETID_PERM: Final = re.compile(r"^[-/]?(?:[246]\d{3}|u=s|g=s|u\+s|g\+s)$")


# Where installed programs live: a program from anywhere else was put there by someone, maybe this session.
_INSTALLED: Final = re.compile(
    r"^/(?:usr/(?:local/)?)?s?bin/|^/usr/(?:local/)?(?:lib|libexec|share)/|^/opt/|^/snap/"
    r"|^/nix/|^/Applications/|^/System/|^/Library/|^/opt/homebrew/"
)


def root_program(c: Cmd) -> MatchResult:
    """``sudo ./x`` or ``sudo /tmp/x``: a program gatesh cannot read, run with root's privileges."""
    sc = c.sc
    if not sc.privileged or not sc.argv or not sc.argv[0].static:
        return None
    prog = sc.argv[0].text
    if "/" not in prog or _INSTALLED.match(prog):
        return None
    return Hit(detail=f"runs {prog}, a program outside the installed ones, as root")


def setid_recon(c: Cmd) -> MatchResult:
    """``find / -perm -4000``: lists setuid/setgid programs, the first step of a privilege escalation."""
    return any(
        a == "-perm" and _SETID_PERM.match(v) for a, v in zip(c.args, c.args[1:], strict=False)
    )


RULES: tuple[Rule, ...] = (
    Rule(
        "priv.root-program",
        D,
        "This {detail}: whatever it does, it does with every privilege of the machine.",
        root_program,
        remedy="run it without sudo, or install it properly and run the installed program",
        examples=("sudo /tmp/T1222002own x", "sudo ./build/installer", "doas ~/bin/tool"),
        counter=("sudo apt update", "sudo /usr/bin/systemctl status x", "./build/app", "sudo ls"),
    ),
    Rule(
        "priv.setid-recon",
        D,
        "This lists setuid/setgid programs, the reconnaissance step of a privilege escalation.",
        setid_recon,
        heads=heads("find", "bfs", "gfind"),
        remedy="say which program's permissions you need to check",
        examples=("find / -perm -4000 2>/dev/null", "find /usr/bin -perm -u=s -type f"),
        counter=("find . -perm 644", "find . -name '*.py'"),
    ),
    Rule(
        "priv.chmod-weak",
        A,
        "chmod {detail}, weakening the machine's permissions.",
        chmod,
        heads=heads("chmod"),
        examples=(
            "chmod 777 app.sh",
            "chmod u+s /tmp/x",
            "chmod -R 777 .",
            "chmod 4755 bin",
            "chmod a+w f",
            "chmod +s f",
        ),
        counter=(
            "chmod +x run.sh",
            "chmod 755 bin/tool",
            "chmod 600 key",
            "chmod -R u+w build",
            "chmod g+w f",
        ),
    ),
    Rule(
        "priv.chown-root",
        D,
        "chown {detail}, which the agent's user cannot undo.",
        chown_root,
        heads=heads("chown", "chgrp"),
        remedy="keep files owned by your own user",
        examples=("chown root /tmp/x", "sudo chown -R root:root dir"),
        counter=("chown -R me:me .", "chown $USER file"),
    ),
    Rule(
        "priv.setcap",
        A,
        "setcap grants a binary root capabilities (privilege escalation).",
        setcap,
        heads=heads("setcap"),
        examples=("setcap cap_setuid+ep /tmp/x",),
        counter=("setcap -v cap_net_raw+ep /bin/ping",),
    ),
    Rule(
        "priv.install-suid",
        A,
        "install with a setuid/setgid mode creates a privilege-escalation binary.",
        install_suid,
        heads=heads("install"),
        examples=("install -m 4755 x /usr/local/bin/x",),
        counter=("install -m 755 x ~/.local/bin/x",),
    ),
    Rule(
        "priv.root-shell",
        A,
        "This opens an interactive root or other-user shell ({detail}) that the gate cannot see into.",
        root_shell,
        heads=ROOT_SHELL,
        examples=(
            "sudo -s",
            "sudo -i",
            "sudo su",
            "su",
            "su - root",
            "doas -s",
            "cat list | xargs sudo",
            "echo su | xargs sudo",
        ),
        counter=(
            "sudo -l",
            "sudo apt update",
            "su -c 'id' bob",
            "sudo -v",
            "echo ok | xargs sudo --",
            "echo hosts | xargs sudo ls",
        ),
    ),
    Rule(
        "priv.accounts",
        A,
        "This creates, changes or deletes user accounts ({detail}).",
        accounts,
        heads=ACCOUNTS,
        examples=(
            "useradd -m evil",
            "usermod -aG sudo bob",
            "passwd root",
            "dscl . -create /Users/evil",
            "echo 'a:b' | chpasswd",
            "userdel bob",
        ),
        counter=("passwd -S", "dscl . -read /Users/me", "net view"),
    ),
    Rule(
        "priv.trust-anchor",
        A,
        "This installs a trusted root certificate, letting its owner impersonate any site.",
        trust,
        heads=CA_TOOLS,
        examples=(
            "update-ca-certificates",
            "security add-trusted-cert -d -r trustRoot -k /Library/Keychains/System.keychain ca.crt",
        ),
        counter=("security list-keychains", "certutil -L -d sql:."),
    ),
)

RULES = (
    *RULES,
    Rule(
        "priv.setfacl",
        D,
        "setfacl changes who may read or write the files.",
        acl,
        heads=heads("setfacl"),
        remedy="keep the files' default permissions",
        examples=("setfacl -m u:bob:rwx f",),
        counter=("getfacl f",),
    ),
)
