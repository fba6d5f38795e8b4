"""Judged by effect (S4.1): what the paths a command names mean, whatever the program.

The reader gives every path a command names with its direction and class
(:attr:`gatesh.Facts.paths`); the path-class table (``gatesh.vocab.paths.classes``) says what reading or
writing each class means. These rules turn that into findings, one id per hazard:

- a credential store read (by any program, even one no rule names) is credential access;
- a project's ``.env`` read shows its secrets to the session;
- a credential store written loses or replaces the credential;
- a persistence location written is persistence; an account or sudo database written is a
  privilege change; a system folder written is a system change;
- a file deleted, emptied or replaced is judged by its state in git when decided (S3.2):
  tracked-and-clean is restorable, anything else is lost work and the reason names it.

A direction the reader does not know (UNKNOWN) counts as both: the read meaning applies in full,
the write meaning at most as ``destructive`` ("it may write …") — the structure does not show the
write, so it is not an attack by itself.
"""

from __future__ import annotations

import functools
import os
from typing import Final

from gatesh._types import Change, Direction, PathClass, PathEffect, Via
from gatesh.rater.builtin._base import A, C, Ctx, D, Hit, MatchResult, Rule, S, Severity
from gatesh.rater.builtin._scope import fold_home
from gatesh.undo import cover
from gatesh.vocab.paths import classes as pathclasses
from gatesh.vocab.paths import devices
from gatesh.vocab.places import Meaning
from gatesh.worktree import Loss, State, describe

Meaning = Meaning

_ROWS: Final = {row.name: row for row in pathclasses.CLASSES}


def _row(e: PathEffect) -> pathclasses.PathRow | None:
    return _ROWS.get(e.kind)


def _shown(ctx: Ctx, e: PathEffect) -> str:
    return fold_home(e.resolved, ctx.home) if e.resolved else e.path


def _effects(ctx: Ctx, meaning: Meaning, *, reading: bool) -> tuple[PathEffect, ...]:
    """The effects whose read (or write) meaning is ``meaning``, in command order. Every meaning's
    list is made in one pass over the line's paths, at the first question (the effect rules ask
    several of the same line)."""
    by = ctx.effects_of
    if not by and not ctx.facts.paths:
        by[_ASKED] = ()
    elif not by:
        lists: dict[tuple[Meaning | None, bool], list[PathEffect]] = {_ASKED: []}
        for e in ctx.facts.paths:
            if e.cls in (PathClass.UNKNOWN, PathClass.STREAM):
                continue
            read, write = _meanings(e.cls, e.kind)
            if e.direction.reads:
                lists.setdefault((read, True), []).append(e)
            if e.direction.writes and _writes_content(e):
                lists.setdefault((write, False), []).append(e)
        by.update((key, tuple(found)) for key, found in lists.items())
    return by.get((meaning, reading), ())


def _writes_content(e: PathEffect) -> bool:
    """Whether a write puts, replaces or removes content (what writing a path of a class means):
    a mode, owner or attribute change, or an empty folder made or removed, is the privilege and
    file rules' business, not the path class's."""
    return e.change is Change.CONTENT or e.change is Change.REMOVE


@functools.lru_cache(maxsize=256)  # a pure function of a class and a row name (a few dozen of them)
def _meanings(cls: PathClass, kind: str) -> tuple[Meaning, Meaning]:
    """What reading and writing a path of ``cls`` and path-class row ``kind`` mean."""
    return pathclasses.meanings(cls, _ROWS.get(kind))


# The key that marks a line's effects as sorted by meaning (no meaning is None).
_ASKED: Final = (None, False)


def _why(e: PathEffect) -> str:
    return pathclasses.why(e.cls, _row(e))


def _head(ctx: Ctx, e: PathEffect) -> str:
    cmds = ctx.facts.commands
    return cmds[e.command].head if 0 <= e.command < len(cmds) else ""


# --- reading ----------------------------------------------------------------------------------


def credential_read(ctx: Ctx) -> MatchResult:
    found = _effects(ctx, Meaning.CREDENTIAL_ACCESS, reading=True)
    for e in found:
        if e.via is not Via.EMBEDDED:
            return Hit(detail=f"{_shown(ctx, e)} ({e.kind}: {_why(e)})")
    for (
        e
    ) in found:  # named inside a program's argument string: what the program does with it is unseen
        return Hit(
            severity=D,
            detail=f"{_shown(ctx, e)} ({e.kind}), named inside the arguments of a program gatesh "
            f"does not model",
            remedy="leave the credential store out of the command",
        )
    return None


def project_secrets(ctx: Ctx) -> MatchResult:
    for e in _effects(ctx, Meaning.SECRET_EXPOSURE, reading=True):
        return Hit(detail=_shown(ctx, e))
    return None


# --- writing ----------------------------------------------------------------------------------


def _write_hit(ctx: Ctx, meaning: Meaning) -> Hit | None:
    """A Hit for the first write of ``meaning``; an UNKNOWN direction only as destructive."""
    certain = [e for e in _effects(ctx, meaning, reading=False) if e.direction is Direction.WRITE]
    if certain:
        e = certain[0]
        return Hit(detail=f"writes {_shown(ctx, e)} ({_why(e)})")
    maybe = _effects(ctx, meaning, reading=False)
    if maybe:
        e = maybe[0]
        head = _head(ctx, e)
        return Hit(
            severity=D,
            detail=f"may write {_shown(ctx, e)} ({_why(e)}): gatesh does not know whether "
            f"{head or 'the program'} only reads the paths it is given",
        )
    return None


def credential_write(ctx: Ctx) -> MatchResult:
    return _write_hit(ctx, Meaning.CREDENTIAL_CHANGE)


def persistence_write(ctx: Ctx) -> MatchResult:
    return _write_hit(ctx, Meaning.PERSISTENCE)


def privilege_write(ctx: Ctx) -> MatchResult:
    return _write_hit(ctx, Meaning.PRIVILEGE)


def system_write(ctx: Ctx) -> MatchResult:
    """A write into a system folder. A path a program of unknown direction is only handed counts when
    it is a disk (``badblocks -w /dev/sdb``) or the command can write the machine's folders (under
    sudo, or the gate's user is root): otherwise the write cannot happen."""
    for e in _effects(ctx, Meaning.SYSTEM_CHANGE, reading=False):
        if e.direction is Direction.WRITE:
            return Hit(detail=f"writes {_shown(ctx, e)} ({_why(e)})")
        if _only_inspects(ctx, e):
            continue
        cmds = ctx.facts.commands
        privileged = (0 <= e.command < len(cmds) and cmds[e.command].privileged) or ctx.root
        if privileged or e.kind == pathclasses.DISKS.name:
            head = _head(ctx, e)
            return Hit(
                detail=f"may write {_shown(ctx, e)} ({_why(e)}): gatesh does not know whether "
                f"{head or 'the program'} only reads the paths it is given"
            )
    return None


def _only_inspects(ctx: Ctx, e: PathEffect) -> bool:
    """Whether ``e`` is a device its program only reads in this form (``smartctl -H /dev/sda``,
    ``pvck --dump``, ``parted DEV print``: the table ``vocab.paths.devices.DEVICE_READS``)."""
    cmds = ctx.facts.commands
    if not e.resolved.startswith("/dev/") or not 0 <= e.command < len(cmds):
        return False
    c = cmds[e.command]
    read = devices.device_read(c.head, tuple((w.text, w.static) for w in c.argv[1:]))
    return read is not None and (e.path in read or e.resolved in read)


# --- reversibility from the working tree (S3.2) ------------------------------------------------

_VERBS: Final = {
    "rm": "deletes",
    "unlink": "deletes",
    "shred": "destroys",
    "srm": "destroys",
    "wipe": "destroys",
    "find": "deletes",
    "truncate": "empties",
    "trash": "deletes",
    "trash-put": "deletes",
    "rimraf": "deletes",
    "cp": "replaces",
    "mv": "replaces",
    "install": "replaces",
    "ln": "replaces",
    "rsync": "replaces",
    "sed": "rewrites",
    "gsed": "rewrites",
    "perl": "rewrites",
    "ruby": "rewrites",
}
# Classes whose files hold work the working tree's state decides (system folders are a system
# change, temp and streams keep nothing, gatesh's own files are self-protection's).
_WORK: Final = frozenset({PathClass.WORKTREE, PathClass.HOME, PathClass.ELSEWHERE})


def _verb(ctx: Ctx, e: PathEffect) -> str:
    if e.via is Via.REDIRECT:
        head = _head(ctx, e)
        return "empties" if head in (":", "true", "") else "overwrites"
    if e.via is Via.INLINE_CODE:
        return "deletes or overwrites"
    verb = _VERBS.get(_head(ctx, e), "overwrites")
    cmds = ctx.facts.commands
    if (
        verb == "deletes"
        and 0 <= e.command < len(cmds)
        and any(
            w.static
            and (
                w.text in ("--recursive",)
                or (
                    w.text.startswith("-")
                    and not w.text.startswith("--")
                    and ("r" in w.text or "R" in w.text)
                )
            )
            for w in cmds[e.command].argv[1:]
        )
    ):
        return "recursively deletes"
    return verb


_REMEDIES: Final = {
    State.MODIFIED: "commit or stash the edit first (git stash), then run it",
    State.UNTRACKED: "commit the file first, or move it aside (mv FILE FILE.bak)",
    State.IGNORED: "copy the file aside first (cp FILE FILE.bak), or write to a new file",
    State.OUTSIDE: "copy it aside first (cp FILE FILE.bak), or write inside the working tree",
    State.REPOSITORY: "delete only the files you mean; leave .git alone",
    State.UNKNOWN: "write to a new file instead, or commit what you want to keep first",
}


def work_loss(ctx: Ctx) -> MatchResult:
    """What the deletions and overwrites of the line lose; a SAFE hit says why nothing is lost
    (every such path is restorable from git, missing, temporary or build output), so explain and
    the audit log show the reason a deletion ran.

    Under an undo policy (S17, :mod:`gatesh.undo.cover`), a loss the snapshot taken before the
    command will hold is reversible: SAFE, naming what it loses and where the snapshot holds it
    (``covers``). A loss no snapshot holds is judged as without undo."""
    worst: tuple[int, Hit] | None = None
    spared: list[str] = []
    policy = cover.active()
    held: list[str] = []
    places: list[str] = []
    for e in ctx.facts.paths:
        if not e.replaces or not e.resolved or e.direction is Direction.READ:
            continue
        if e.cls in (PathClass.TEMP, PathClass.STREAM):
            spared.append(f"{_shown(ctx, e)} is temporary")
            continue
        if e.cls not in _WORK and not (
            e.cls is PathClass.CREDENTIALS and e.kind == pathclasses.PROJECT_SECRETS.name
        ):
            continue
        losses: list[Loss] = ctx.probe.losses(e.resolved, e.only)
        if not losses:
            spared.append(_spared(e))
            continue
        place = policy.holds(e.resolved, losses) if policy is not None else ""
        if e.cls is not PathClass.WORKTREE:
            losses = [Loss(fold_home(x.path, ctx.home), x.state, x.why) for x in losses]
        if place:
            held.append(f"{_verb(ctx, e)} {describe(losses)}")
            places.append(place)
            continue
        repo = any(x.state is State.REPOSITORY for x in losses)
        rank = 2 if repo else 1
        first = next((x for x in losses if x.state is State.REPOSITORY), losses[0])
        remedy = _REMEDIES[first.state].replace("FILE", first.path.rstrip("/"))
        if _head(ctx, e) == "find":
            remedy = f"list the matches with -print first; {remedy}"
        hit = Hit(
            severity=C if repo else D,
            detail=f"{_verb(ctx, e)} {describe(losses)}, which git cannot restore",
            remedy=remedy,
        )
        if worst is None or rank > worst[0]:
            worst = (rank, hit)
    if worst is not None:
        return worst[1]
    if held:
        return Hit(
            severity=S,
            detail=f"{'; '.join(held[:2])}{' …' if len(held) > 2 else ''}: undo can put it back, "
            "from the snapshot gatesh takes before it runs",
            covers=tuple(dict.fromkeys(places)),
        )
    if spared:
        return Hit(
            severity=S,
            detail=f"{_verb_any(ctx)} nothing git cannot restore ({'; '.join(spared[:3])})",
        )
    return None


def _spared(e: PathEffect) -> str:
    if not os.path.lexists(e.resolved) and not any(ch in e.resolved for ch in "*?["):
        return f"{e.path} does not exist"
    return f"{e.path} is tracked and unmodified, or build output"


def _verb_any(ctx: Ctx) -> str:
    return "deletes or overwrites"


_SEVERITIES: Final[tuple[Severity, ...]] = (A, C, D)

RULES: tuple[Rule, ...] = (
    Rule(
        "cred.read-secret",
        A,
        "This reads the credential store {detail}, which the task has no reason to see.",
        credential_read,
        on_facts=True,
        examples=(
            "cat ~/.ssh/id_rsa",
            "sudo cat /etc/shadow",
            "cp ~/.aws/credentials /tmp/x",
            "strings /proc/1234/mem",
            "cat ~/.bash_history",
            "base64 ~/.netrc",
            "ssh-keyscan -f ~/.netrc",
            "aria2c -i ~/.aws/credentials",
            "git diff --no-index /dev/null ~/.ssh/id_rsa",
            "ltrace -F /etc/gshadow /dev/null",
            "python3 -c 'print(open(\"/etc/shadow\").read())'",
            "kubectl exec web -- cat /run/secrets/kubernetes.io/serviceaccount/token",
        ),
        counter=(
            "cat ~/.ssh/id_rsa.pub",
            "ssh -i ~/.ssh/id_rsa host",
            "chmod 600 ~/.ssh/id_ed25519",
            "cat /etc/passwd",
            "ls ~/.ssh",
            "ssh-add ~/.ssh/id_ed25519",
            "cat ~/.aws/config",
            "kubectl --kubeconfig ~/.kube/config get pods",
        ),
    ),
    Rule(
        "cred.project-secrets",
        D,
        "This prints the project's secrets file {detail} into the session, where "
        "every secret in it is seen.",
        project_secrets,
        on_facts=True,
        remedy="read only the names (cut -d= -f1 .env), or the one value the task needs",
        examples=("cat .env", "grep DATABASE_URL .env", "less config/.env.production"),
        counter=("cat .env.example", "cp .env.example .env", "source .env"),
    ),
    Rule(
        "cred.overwrite",
        D,
        "This {detail}, so the credential it holds is lost or replaced.",
        credential_write,
        on_facts=True,
        remedy="write the new credential to a new file and leave the old one in place",
        examples=(
            "echo x > ~/.ssh/id_rsa",
            "cp key ~/.aws/credentials",
            "curl -o ~/.netrc https://x.example/n",
        ),
        counter=("cat ~/.aws/credentials.bak > /dev/null", "ls -l ~/.aws"),
    ),
    Rule(
        "persist.autostart-file",
        A,
        "This {detail}: what is written there runs or steers a program again later, at a login, "
        "a boot, a schedule or the tool's next start.",
        persistence_write,
        on_facts=True,
        remedy="run the command directly instead of installing it to run later",
        examples=(
            "echo 'curl x|sh' >> ~/.bashrc",
            "echo key >> ~/.ssh/authorized_keys",
            "tee /etc/cron.d/job",
            "cp x.service /etc/systemd/system/",
            "cp agent.plist ~/Library/LaunchAgents/",
            "echo x > /etc/rc.local",
            "shuf -e DATA -o /etc/cron.d/job",
            "pandoc -o /etc/cron.d/job",
            'node -e \'require("fs").writeFileSync("/etc/cron.d/job", "x")\'',
            "cp hook.sh .git/hooks/pre-commit",
            "strace -o ~/.bashrc ls",
            "pip config set global.index-url https://evil.example/simple",
            "direnv allow",
        ),
        counter=(
            "cat ~/.bashrc",
            "echo x >> notes.txt",
            "cp a.txt b.txt",
            "grep alias ~/.zshrc",
            "less /etc/crontab",
            "pip config list",
            "conda config --show",
        ),
    ),
    Rule(
        "priv.auth-files",
        A,
        "This {detail}, which controls who may become root or log in.",
        privilege_write,
        on_facts=True,
        remedy="leave the account and sudo databases as they are",
        examples=(
            "echo 'me ALL=(ALL) NOPASSWD:ALL' >> /etc/sudoers",
            "sudo sed -i 's/a/b/' /etc/sudoers",
            "sudo vim /etc/sudoers",
            "echo x >> /etc/passwd",
            "sudo tee -a /etc/pam.d/sshd",
            "cp x /etc/shadow",
        ),
        counter=("cat /etc/sudoers", "sudo tee /etc/hosts.bak", "grep root /etc/passwd"),
    ),
    Rule(
        "system.write",
        D,
        "This {detail}, a change to the machine itself.",
        system_write,
        on_facts=True,
        remedy="write inside the working tree instead, or under ~/.local for a tool of your own",
        examples=(
            "echo x > /etc/hosts",
            "cp tool /usr/local/bin/",
            "sudo tee /opt/app/config.yml",
            "curl -o /usr/local/bin/x https://x.example/x",
            "sed -i 's/a/b/' /etc/nginx/nginx.conf",
            "install -m 755 x /usr/local/bin/x",
            "sudo badblocks -w /dev/sdX",
            "bmaptool copy a.img /dev/sdb",
            "sudo restic restore latest --target /etc",
            "mv /usr/bin/openssl /tmp/",
            "sudo badblocks -svw /dev/sdb",
            "sudo pvck /dev/sdb1 --repair -f meta.txt",
            "sudo tune.exfat -L NEW /dev/sdb1",
            "sudo e2fsck -fy /dev/sdb1",
            "sudo ddrescue -f /dev/sda /dev/sdb",
            "sudo smartctl -s off /dev/sda",
            "sudo e2image -I /dev/sdb1 img",
        ),
        counter=(
            "cat /etc/hosts",
            "cp /etc/hosts /tmp/hosts",
            "ls /usr/local/bin",
            "echo x > /dev/null",
            "haproxy -c -f /etc/haproxy/haproxy.cfg",
            "restic backup /srv/data",
            "cat -u /dev/tty12 > /dev/tty13",
            "blender -b f.blend -o //render/frame_###.png -a",
            "sudo smartctl -H /dev/sda",
            "sudo dumpe2fs -h /dev/sdb1",
            "sudo pvck /dev/sdb1 --dump headers",
            "sudo badblocks -sv /dev/sdb",
            "sudo cryptsetup luksDump /dev/sdb1",
            "sudo blockdev --getsz /dev/sdb",
            "sudo e2fsck -n /dev/sdb1",
            "sudo hdparm -I /dev/sda",
            "mt -f /dev/nst0 status",
            "sudo ddrescue /dev/sdb disk.img",
            "rankmirrors /etc/pacman.d/mirrorlist",
            "utmpdump /var/log/wtmp",
        ),
    ),
    Rule(
        "files.work-loss",
        D,
        "This {detail}.",
        work_loss,
        on_facts=True,
        remedy="commit or stash what you want to keep first",
        examples=(
            "rm notes.txt",
            "> app.db",
            ": > notes.txt",
            "echo x >| .env",
            "truncate -s 0 notes.txt",
            "cp /tmp/x src/app.py",
            "mv notes.txt src/app.py",
            "ln -sf /tmp/x notes.txt",
            "sed -i s/a/b/ src/app.py",
            "perl -pi -e s/a/b/ notes.txt",
            "echo x | tee notes.txt",
            "sort -o notes.txt notes.txt",
            "find . -name '*.txt' -delete",
            "find src -exec rm {} +",
            "rm -rf src",
            "rm -rf .",
            "python3 -c \"import os; os.remove('notes.txt')\"",
        ),
        counter=(
            "rm README.md",
            "> README.md",
            "rm missing.txt",
            "echo x >> notes.txt",
            "rm -rf node_modules",
            "cp -n /tmp/x notes.txt",
            "echo x | tee -a notes.txt",
            "sed -n p notes.txt",
            "rm /tmp/x",
            "find . -name '*.pyc' -delete",
        ),
    ),
)
