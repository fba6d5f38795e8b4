"""Paths named by inline code (``python -c``, ``node -e``, ``perl -e``, ``awk``): string
literals, written when they are the target of a file-writing call, removed when the call
deletes (the one table of inline-code calls is ``gatesh.vocab.inline``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

from gatesh._types import (
    Direction,
    SimpleCommand,
    Via,
)
from gatesh.vocab import inline, pycode
from gatesh.vocab.programs import interpreters

from ._path_collector import _Collector

R, W, U = Direction.READ, Direction.WRITE, Direction.UNKNOWN


def _is_python(head: str) -> bool:
    lang = interpreters.interpreter(head)
    return lang is not None and lang.name == "python"


def _python_files(col: _Collector, code: str, i: int, cwd: str | None) -> None:
    """The files Python ``code`` opens by a name it spells out, relative names included (``open``
    is given a path whatever it looks like)."""
    for use in pycode.file_uses(code):
        col.add(
            use.name, True, W if use.writes else R, i, cwd, Via.INLINE_CODE, replaces=use.replaces
        )


_INLINE_FLAGS: Final = frozenset(
    {"-c", "-e", "-E", "-r", "--eval", "-eval", "-p", "--print", "-x", "--execute"}
)

# Programs that are not interpreters of the table but run the code they are given inline: awk,
# and emacs's --eval (Lisp).
_CODE_PROGRAMS: Final = frozenset({"awk", "gawk", "mawk", "nawk", "emacs", "emacsclient"})

_LITERAL: Final = re.compile(r"""(['"`])((?:/|~/|\./|\.\./)[^'"`\s$]{1,512}?)\1""")

# A relative file name in program text: a dotted name or a name with a folder (`.git/config`).
_REL_LITERAL: Final = re.compile(r"""(['"`])((?:\.[\w.-]+|[\w.-]+/[\w./-]+))\1""")

# A perl/ruby open mode written into the literal: open(F, ">/etc/x"), open(">>log").
_MODE_LITERAL: Final = re.compile(r"""(['"])\s*(\+?[<>]{1,2})\s*((?:/|~/)[^'"\s]{1,512})\1""")

# A file-writing call of the table whose first argument is a literal path, and `open(LIT, "w")`:
# the path is written whatever it looks like (`File.write("src/app.py", "")`).
_WRITE_LITERAL: Final = re.compile(
    rf"(?:{inline.pattern_of(inline.ApiKind.WRITE)})\s*\(?\s*(['\"])([^'\"\n]{{1,512}})\1"
)

_OPEN_LITERAL: Final = re.compile(
    r"(?<![\w.])(?:open|fopen|File\.open|io\.open|codecs\.open)\s*\(\s*(['\"])([^'\"\n]{1,512})\1"
    r"\s*,\s*(?:mode\s*=\s*)?['\"]([rwax+bt]+)['\"]"
)

_WRITE_CALL: Final = re.compile(
    r"(?:writeFileSync|writeFile|appendFileSync|appendFile|createWriteStream|copyFileSync|copyFile|renameSync|rename"
    r"|symlinkSync|symlink|linkSync|write_text|write_bytes|File\.write|IO\.write|file_put_contents|fputs|fwrite"
    r"|shutil\.(?:copy\w*|move)|os\.(?:rename|replace|symlink|link)|Files\.write\w*|FileWriter|FileOutputStream"
    r"|PrintWriter|fs\.promises\.writeFile|Deno\.writeTextFile|Deno\.writeFile|Bun\.write|\bcp\s*\("
    r"|\bprint\b[^;\n]*>|\bprintf\b[^;\n]*>)\s*\(?[^;\n]*$"
)

# A call that reads the file it is given, or lists the folder (or pattern) it is given: a listing
# reads names, what is then done with each name found is the code rules' business.
_READ_CALL: Final = re.compile(
    r"(?:readFileSync|readFile|createReadStream|read_text|read_bytes|File\.read|IO\.read|file_get_contents|readlines"
    r"|Files\.read\w*|FileReader|FileInputStream|Deno\.readTextFile|Bun\.file|getline|\bopen|\bfopen|\brequire"
    rf"|\bload|\bslurp|\bcat|{inline.pattern_of(inline.ApiKind.LIST)})\s*\(?[^;\n]*$"
)

# Calls that delete or truncate the file they are given, in the languages inline code is written in
# (the one table of inline-code calls, gatesh.vocab.inline, and Java's).
_DELETERS: Final = inline.pattern_of(inline.ApiKind.DELETE) + r"|Files\.delete\w*"

_CALL_OPEN: Final = r"\s*\(?\s*(?:glob\s*\(?\s*)?(?:Path\s*\(\s*)?"

_DELETE_CALL: Final = re.compile(rf"(?:{_DELETERS}|\.unlink|\.rmtree|\btruncate){_CALL_OPEN}$")

# A deletion call's literal argument, whatever it looks like (`os.remove('notes.txt')`).
_DELETE_LITERAL: Final = re.compile(rf"(?:{_DELETERS}){_CALL_OPEN}(['\"])([^'\"\n]{{1,512}})\1")

_APPEND_CALL: Final = re.compile(r"append|>>\s*$|['\"]a\+?['\"]")

# A mode after the literal: open("/etc/x", "w"), fopen("/x", "a"), File.open("/x", "w").
_MODE_AFTER: Final = re.compile(r"""^\s*,\s*(?:mode\s*=\s*)?['"]([rwax+bt]+)['"]""")


def _inline_code(cmd: SimpleCommand) -> Iterator[str]:
    args = cmd.argv[1:]
    head = cmd.head
    if head in ("awk", "gawk", "mawk", "nawk"):
        for w in args:
            if w.static and not w.text.startswith("-") and len(w.text) > 3:
                yield w.text
                return
        return
    flags = interpreters.inline_opts(head) or _INLINE_FLAGS
    for k, w in enumerate(args):
        if w.static and w.text in flags and k + 1 < len(args) and args[k + 1].static:
            yield args[k + 1].text
        elif w.static and len(w.text) > 2 and w.text[:2] in flags and not w.text.startswith("--"):
            yield w.text[2:]
    if any(r.op.startswith("<<") for r in cmd.redirects) and cmd.raw:
        yield cmd.raw[:65536]


def removed(code: str) -> frozenset[str]:
    """The literal paths ``code`` hands a deletion call (``os.remove('x')``, ``unlink "/y"``)."""
    if len(code) > 65536:
        code = code[:65536]
    out = {m.group(2) for m in _DELETE_LITERAL.finditer(code)}
    for m in _LITERAL.finditer(code):
        before = code[max(0, m.start() - 80) : m.start()]
        if _DELETE_CALL.search(before.rsplit(";", 1)[-1].rsplit("\n", 1)[-1]):
            out.add(m.group(2))
    return frozenset(out)


def code_paths(code: str) -> Iterator[tuple[str, Direction, bool]]:
    """(path, direction, replaces) for each path literal in ``code``, by the call it is given to."""
    if len(code) > 65536:
        code = code[:65536]
    for m in _MODE_LITERAL.finditer(code):
        mode = m.group(2)
        if ">" in mode:
            yield m.group(3), W, ">>" not in mode and "+<" not in mode
        else:
            yield m.group(3), R, False
    taken: set[int] = set()
    for m in _DELETE_LITERAL.finditer(code):
        taken.add(m.start(2))
        yield m.group(2), W, True
    for m in _WRITE_LITERAL.finditer(code):
        if m.start(2) not in taken:
            taken.add(m.start(2))
            yield m.group(2), W, "append" not in m.group(0).lower()
    for m in _OPEN_LITERAL.finditer(code):
        if m.start(2) not in taken:
            taken.add(m.start(2))
            mode = m.group(3)
            if any(ch in mode for ch in "wax+"):
                yield m.group(2), W, "w" in mode
            else:
                yield m.group(2), R, False
    for m in _REL_LITERAL.finditer(code):
        # a relative name (`'.git/config'`, `'.gitconfig'`) counts only as a file call's argument
        if m.start(2) in taken:
            continue
        before = code[max(0, m.start() - 80) : m.start()]
        before = before.rsplit(";", 1)[-1].rsplit("\n", 1)[-1]
        after = _MODE_AFTER.match(code[m.end() : m.end() + 24])
        if after is not None:
            taken.add(m.start(2))
            mode = after.group(1)
            if any(ch in mode for ch in "wax+"):
                yield m.group(2), W, "w" in mode
            else:
                yield m.group(2), R, False
        elif _WRITE_CALL.search(before):
            taken.add(m.start(2))
            yield m.group(2), W, not _APPEND_CALL.search(before)
    for m in _LITERAL.finditer(code):
        path = m.group(2)
        if m.start(2) in taken:
            continue
        before = code[max(0, m.start() - 80) : m.start()]
        before = before.rsplit(";", 1)[-1].rsplit("\n", 1)[-1]
        after = _MODE_AFTER.match(code[m.end() : m.end() + 24])
        if after is not None:
            mode = after.group(1)
            if any(ch in mode for ch in "wax+"):
                yield path, W, "w" in mode
            else:
                yield path, R, False
        elif _DELETE_CALL.search(before):
            yield path, W, True
        elif _WRITE_CALL.search(before):
            yield path, W, not _APPEND_CALL.search(before)
        elif _READ_CALL.search(before):
            yield path, R, False
        else:
            yield path, U, False
