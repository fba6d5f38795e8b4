"""Exhaustion: commands that use up the machine's processes, memory or disk (S4.1, S15 harm
predicate "exhaustion").

Each is judged by its mechanism, not by a spelling: a program that starts copies of itself
without end (a function that runs itself in the background, an endless loop that backgrounds a
command, inline code that forks in an endless loop); a value that grows without end; an endless
or huge stream of bytes that reaches a file, or a huge file allocated at once; files created in an
endless loop; a program that keeps all its input reading a device that never ends. The boundary's
resource limits (S16) are the other half; these rules make the gate refuse what it can read.
"""

from __future__ import annotations

import re
from typing import Final

from gatesh.rater.builtin._base import Cmd, Ctx, D, Hit, MatchResult, Rule, among
from gatesh.rater.builtin.code import endless, one_liner
from gatesh.vocab.inline import ApiKind, calls
from gatesh.vocab.paths.devices import ENDLESS_DEVICES
from gatesh.vocab.programs.interpreters import is_interpreter

# A size this large written or allocated at once fills an ordinary disk or memory: 16 GiB.
LIMIT: Final = 16 * 1024**3
_UNITS: Final = {
    "": 1,
    "b": 512,
    "c": 1,
    "w": 2,
    "k": 1024,
    "m": 1024**2,
    "g": 1024**3,
    "t": 1024**4,
    "p": 1024**5,
    "e": 1024**6,
}
_SIZE: Final = re.compile(r"^(\d+(?:\.\d+)?)\s*([kmgtpebcw]?)(?:i?b)?$", re.I)
_NO_NEWLINES: Final = frozenset({"/dev/zero"})


def size_of(text: str) -> int | None:
    """``text`` as a number of bytes (``900G``, ``2T``, ``1M``, ``4096``), or None."""
    m = _SIZE.match(text.strip())
    if m is None:
        return None
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


# --- shell text: functions that run themselves, endless loops ---------------------------------

_FUNC_DEF: Final = re.compile(
    r"(?:\bfunction\s+([\w.:-]+)\s*(?:\(\s*\))?|(?<![\w.:-])([\w.:-]+)\s*\(\s*\))\s*\{(.*?)\}", re.S
)
_ENDLESS_LOOP: Final = re.compile(
    r"\b(?:while\s+(?::|true|1|\[\s*1\s*\]|\[\[\s*1\s*\]\]|\(\(\s*1\s*\)\))|until\s+(?:false|!\s*:))"
    r"\s*;?\s*do\b(.*?)\bdone\b"
    r"|\bfor\s*\(\(\s*;\s*;\s*\)\)\s*;?\s*do\b(.*?)\bdone\b",
    re.S,
)
_BACKGROUND: Final = re.compile(r"(?<![&>|])&(?![&>])")
_PIPE: Final = re.compile(r"(?<![|>])\|(?!\|)")  # a pipe (`|`, `|&`), not `||` nor `>|`
_CREATES_FILES: Final = re.compile(
    r"\b(?:touch|mktemp|mkdir|cp|dd|fallocate)\b|(?<![<>2&])>>?\s*\S"
)
_SELF_GROW: Final = re.compile(r"\b(\w+)=[\"']?\$\{?\1\}?[\"']?\$\{?\1\b|\b(\w+)\+=")


def _self_calls(name: str, body: str) -> tuple[int, bool]:
    """How often ``body`` runs ``name`` as a command, and whether one of them is backgrounded or
    piped."""
    # (`builtin cd`, `command cd` inside a function named cd run the program, not the function)
    word = re.compile(
        rf"(?:^|[;&|({{]|(?<!\bbuiltin)(?<!\bcommand)\s){re.escape(name)}(?=$|[\s;&|)}}])"
    )
    hits = list(word.finditer(body))
    spread = bool(hits) and bool(_BACKGROUND.search(body) or _PIPE.search(body))
    return len(hits), spread


def fork_storm(ctx: Ctx) -> MatchResult:
    text = ctx.text
    if "(" in text or "function" in text:
        for m in _FUNC_DEF.finditer(text):
            name = m.group(1) or m.group(2)
            count, spread = _self_calls(name, m.group(3))
            # a copy run in the background or in a pipe is a new process each time; a plain
            # recursive call is one shell that nests (and stops at its own limit)
            if count and spread:
                return Hit(detail=f"the function {name} starts copies of itself without end")
    for m in _ENDLESS_LOOP.finditer(text):
        body = m.group(1) or m.group(2) or ""
        if _BACKGROUND.search(body):
            return Hit(detail="an endless loop starts a background process on every pass")
    for c in ctx.cmds:
        if is_interpreter(c.head) or c.head in ("node", "deno", "bun"):
            code = one_liner(c)
            if code and endless(code) and calls(code, ApiKind.FORK):
                return Hit(detail=f"{c.head} code starts processes in an endless loop")
    return None


def memory_bomb(ctx: Ctx) -> MatchResult:
    for m in _ENDLESS_LOOP.finditer(ctx.text):
        body = m.group(1) or m.group(2) or ""
        if _SELF_GROW.search(body):
            return Hit(detail="an endless loop doubles a shell variable on every pass")
    for c in ctx.cmds:
        if not is_interpreter(c.head):
            continue
        code = one_liner(c)
        if not code:
            continue
        if endless(code) and calls(code, ApiKind.GROW):
            return Hit(detail=f"{c.head} code grows a value in an endless loop")
        if calls(code, ApiKind.HUGE):
            return Hit(detail=f"{c.head} code makes a value of a gibibyte or more at once")
    return None


# --- bytes that reach a file -------------------------------------------------------------------


def _endless_source(c: Cmd) -> bool:
    """Whether ``c`` writes an endless (or huge) stream to its standard output."""
    h = c.head
    if h == "yes":
        return True
    ops = c.argv.operands
    reads = [*ops, *c.reads]
    if h in ("cat", "pv", "base64", "od", "xxd", "hexdump", "tr", "tee") and any(
        p in ENDLESS_DEVICES for p in reads
    ):
        return True
    if h in ("head", "tail") and any(p in ENDLESS_DEVICES for p in reads):
        size = size_of(c.opt_value("-c", "--bytes") or "")
        lines = size_of(c.opt_value("-n", "--lines") or "")
        if h == "tail":
            return c.has("-f", "-F", "--follow")
        return (size is not None and size >= LIMIT) or (lines is not None and lines >= LIMIT)
    if h == "seq" and any(o in ("inf", "infinity") for o in ops):
        return True
    if h == "openssl" and c.sub(0) == "rand":
        n = size_of(ops[-1]) if len(ops) >= 2 else None
        return n is not None and n >= LIMIT
    return False


def _bounded(c: Cmd) -> bool:
    """A filter that passes on only a bounded part of its input (``head -c 1M``)."""
    if c.head == "head":
        size = size_of(c.opt_value("-c", "--bytes") or c.opt_value("-n", "--lines") or "10")
        return size is not None and size < LIMIT
    return c.head in ("wc", "sha256sum", "md5sum", "sha1sum", "cksum", "grep")


def _writes_file(c: Cmd) -> str:
    """A file (not a device) ``c`` writes its input or output to, or ''."""
    for t in c.writes:
        if not t.startswith("/dev/") and not t.isdigit():
            return t
    if c.head == "tee":
        return next((p for p in c.argv.operands if not p.startswith("/dev/")), "")
    if c.head in ("dd", "dcfldd"):
        return next(
            (a[3:] for a in c.args if a.startswith("of=") and not a[3:].startswith("/dev/")), ""
        )
    return ""


def _dd_size(c: Cmd) -> int | None:
    """How many bytes ``dd`` copies (None: until its input ends)."""
    kv = dict(a.split("=", 1) for a in c.args if "=" in a)
    count = size_of(kv.get("count", ""))
    if count is None:
        return None
    block = size_of(kv.get("bs", kv.get("obs", "512"))) or 512
    return count * block


def disk_fill(c: Cmd) -> MatchResult:
    h = c.head
    if h in ("fallocate", "mkfile", "xfs_mkfile"):
        raw = c.opt_value("-l", "--length") if h == "fallocate" else next(iter(c.pos), "")
        size = size_of(raw or "")
        if size is not None and size >= LIMIT:
            return Hit(detail=f"{h} allocates {raw} at once")
        return None
    if h in ("dd", "dcfldd"):
        src = next((a[3:] for a in c.args if a.startswith("if=")), "")
        out = _writes_file(c)
        if src in ENDLESS_DEVICES and out:
            size = _dd_size(c)
            if size is None or size >= LIMIT:
                return Hit(detail=f"dd copies an endless device into {out} without a bound")
        return None
    if not _endless_source(c):
        return None
    consumers = c.consumers
    # In a pipeline only the last stage's output reaches a redirection of the whole pipeline.
    out = "" if consumers else _writes_file(c)
    if out:
        return Hit(detail=f"{h} writes an endless stream into {out}")
    for k, peer in enumerate(consumers):
        if _bounded(peer):
            return None
        out = _writes_file(peer) if (k == len(consumers) - 1 or peer.head == "tee") else ""
        if out:
            return Hit(detail=f"an endless stream from {h} is written into {out}")
    return None


def file_flood(ctx: Ctx) -> MatchResult:
    for m in _ENDLESS_LOOP.finditer(ctx.text):
        body = m.group(1) or m.group(2) or ""
        if _CREATES_FILES.search(body):
            return Hit(detail="an endless loop creates files until the disk or its inodes run out")
    return None


# --- a program that keeps its input, reading what never ends --------------------------------

_KEEPS_ALL: Final = frozenset({"sort", "tac", "shuf", "jq", "sponge"})
_KEEPS_LINE: Final = frozenset({"tail", "grep", "egrep", "fgrep", "awk", "sed", "less", "uniq"})


def endless_read(c: Cmd) -> MatchResult:
    h = c.head
    if h not in _KEEPS_ALL and h not in _KEEPS_LINE:
        return None
    if h == "tail" and c.has("-c", "--bytes"):
        return None
    skip = 1 if h in ("grep", "egrep", "fgrep", "awk", "sed") else 0
    named = [*c.argv.operands[skip:], *c.reads]
    devices = [p for p in named if p in ENDLESS_DEVICES]
    for feeder in reversed(c.feeders):  # the nearest first: a bounded filter ends the stream
        if _bounded(feeder):
            break
        if _endless_source(feeder):
            fed = [*feeder.argv.operands, *feeder.reads]
            devices.extend(p for p in fed if p in ENDLESS_DEVICES)
            if feeder.head == "yes" or (h in _KEEPS_ALL and not devices):
                devices.append("yes" if feeder.head == "yes" else feeder.head)
    for dev in devices:
        if h in _KEEPS_ALL or dev in _NO_NEWLINES:
            return Hit(detail=f"{h} keeps what it reads from {dev}, which never ends")
    return None


RULES: tuple[Rule, ...] = (
    Rule(
        "exhaust.fork-storm",
        D,
        "This starts processes without end ({detail}): the machine runs out of processes.",
        fork_storm,
        on_facts=True,
        remedy="start a bounded number of processes and let each one finish",
        examples=(
            "x(){ x & x; }; x",
            "bomb() { bomb | bomb & }; bomb",
            "perl -e 'fork while 1'",
            "ruby -e 'loop { fork }'",
            "python3 -c 'import os\nwhile True: os.fork()'",
            "sh -c 'while :; do \"$0\" & done' sh",
            "while true; do sleep 100 & done",
        ),
        counter=(
            "f(){ echo hi; }; f",
            'cd() { builtin cd "$@" || return; ls; }',
            "up() { cd .. || exit; }; up",
            "for i in 1 2 3; do sleep 1 & done; wait",
            "while true; do curl -s localhost:8000/health && break; sleep 1; done",
            "python3 -c 'import os; print(os.getpid())'",
            "perl -e 'print 1 while 0'",
        ),
    ),
    Rule(
        "exhaust.memory",
        D,
        "This fills the machine's memory ({detail}).",
        memory_bomb,
        on_facts=True,
        remedy="bound the loop, or the size",
        examples=(
            "python3 -c 'a=[]\nwhile True: a.append(\" \"*10**8)'",
            "node -e 'let a=[]; while(1) a.push(Buffer.alloc(1e9))'",
            "perl -e '$x=\"x\"; while(1){ $x .= $x }'",
            "awk 'BEGIN{s=\"x\"; while(1) s=s s}'",
            "python3 -c 'b=bytearray(10**12)'",
            "x=a; while :; do x=$x$x; done",
        ),
        counter=(
            "python3 -c 'a=[]\nfor i in range(3): a.append(i)'",
            "awk '{s=s $0} END{print length(s)}' notes.txt",
            "python3 -c 'print(2**10)'",
        ),
    ),
    Rule(
        "exhaust.disk",
        D,
        "This fills the disk ({detail}).",
        disk_fill,
        heads=frozenset(
            {"fallocate", "mkfile", "xfs_mkfile", "dd", "dcfldd", "yes", "cat", "pv", "head"}
            | {"tail", "seq", "openssl", "base64", "od", "xxd", "hexdump", "tr", "tee"}
        ),
        remedy="write a bounded amount (head -c SIZE, dd count=N) to a temporary folder",
        examples=(
            "fallocate -l 900G big.img",
            "yes > f",
            "head -c 2T /dev/zero > f",
            "cat /dev/urandom > f",
            "dd if=/dev/zero of=fill bs=1M",
            "yes | tee f >/dev/null",
            "cat /dev/zero | gzip > z.gz",
        ),
        counter=(
            "fallocate -l 1M test.img",
            "head -c 1M /dev/urandom > key.bin",
            "dd if=/dev/zero of=disk.img bs=1M count=64",
            "yes | head -n 3",
            "cat notes.txt > copy.txt",
        ),
    ),
    Rule(
        "exhaust.file-flood",
        D,
        "This creates files without end ({detail}).",
        file_flood,
        on_facts=True,
        remedy="create a bounded number of files",
        examples=(
            "while :; do touch f$RANDOM; done",
            "while true; do mktemp; done",
            "for ((;;)); do echo x > $RANDOM.txt; done",
            "until false; do mkdir d$RANDOM; done",
        ),
        counter=(
            "for i in 1 2 3; do touch f$i; done",
            "while true; do sleep 5; done",
        ),
    ),
    Rule(
        "exhaust.endless-read",
        D,
        "This fills memory: {detail}.",
        endless_read,
        tried_on=among(_KEEPS_ALL, _KEEPS_LINE),
        remedy="read a bounded part (head -c SIZE) of it",
        examples=(
            "tail /dev/zero",
            "sort /dev/zero",
            "sort < /dev/urandom",
            "yes | sort",
            "cat /dev/zero | grep x",
            "shuf /dev/urandom",
        ),
        counter=(
            "tail -c 16 /dev/urandom",
            "sort notes.txt",
            "yes | head -n 2 | sort",
            "tail -n 20 app.log",
        ),
    ),
)

__all__ = ["ENDLESS_DEVICES", "LIMIT", "RULES", "size_of"]
