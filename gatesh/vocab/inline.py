"""What inline code does, per language: the calls that delete, write, reach the network, run
commands, fork, loop without end or grow memory (S2.1, S4.1).

One table (:data:`API_ROWS`), read from the code text: the reader's path effects take the delete
and write calls with a literal argument (:mod:`gatesh.reading._paths`), the builtin rater's code
and exhaustion rules take the rest (a call whose argument is computed, a fork or a growing value
inside an endless loop). A row names the languages it is written for; its ``pattern`` matches the
call up to where its first argument starts. Patterns are plain text matches: a call spelled
through a variable (``f = os.remove; f(x)``) is not seen, and the rater's opaque-code rules remain
the floor under this table.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Final

__all__ = ["API_ROWS", "Api", "ApiKind", "calls", "pattern_of"]


class ApiKind(enum.StrEnum):
    """What a call does."""

    DELETE = "delete"  # removes or truncates the file it is given
    WRITE = "write"  # writes the file it is given
    LIST = "list"  # lists files (its results are paths chosen when the code runs)
    NETWORK = "network"  # opens a connection or fetches a URL
    EXEC = "exec"  # runs a command line or a program
    FORK = "fork"  # starts another process running code (a copy of itself, a child)
    LOOP = "loop"  # a loop with no end of its own
    GROW = "grow"  # makes a value larger each time it runs (append, concatenate, double)
    HUGE = "huge"  # a size of a gibibyte or more in one allocation


@dataclass(frozen=True)
class Api:
    """One call (or construct) of one or more languages and what it does."""

    id: str
    kind: ApiKind
    languages: frozenset[str]
    pattern: str
    examples: tuple[str, ...]


def _l(*names: str) -> frozenset[str]:
    return frozenset(names)


_PY, _JS, _RB, _PL, _PHP = _l("python"), _l("node"), _l("ruby"), _l("perl"), _l("php")
_JL, _TCL, _LUA, _R, _EL = _l("julia"), _l("tcl"), _l("lua"), _l("r"), _l("elisp")
_ALL: Final = _PY | _JS | _RB | _PL | _PHP | _JL | _TCL | _LUA | _R | _EL | _l("awk")

API_ROWS: Final[tuple[Api, ...]] = (
    # --- delete ---
    Api(
        "py.remove",
        ApiKind.DELETE,
        _PY,
        r"shutil\.rmtree|os\.remove|os\.unlink|os\.rmdir|os\.removedirs|\.unlink|\.rmtree",
        ("os.remove(f)",),
    ),
    Api(
        "js.rm",
        ApiKind.DELETE,
        _JS,
        r"rmSync|rmdirSync|unlinkSync|fs\.rm|fs\.promises\.rm|fs\.unlink|Deno\.remove|rimraf",
        ("fs.rmSync(p, {recursive: true})",),
    ),
    Api(
        "rb.rm",
        ApiKind.DELETE,
        _RB,
        r"FileUtils\.rm\w*|FileUtils\.remove\w*|File\.delete|File\.unlink|Dir\.rmdir",
        ("FileUtils.rm_rf(d)",),
    ),
    Api(
        "pl.unlink",
        ApiKind.DELETE,
        _PL | _PHP | _R,
        r"\bunlink|\brmtree|remove_tree",
        ("unlink $f",),
    ),
    Api("php.rmdir", ApiKind.DELETE, _PHP, r"\brmdir", ('rmdir("x")',)),
    Api("jl.rm", ApiKind.DELETE, _JL, r"(?<![\w.])rm(?=\s*\()", ('rm("src", recursive=true)',)),
    Api("tcl.delete", ApiKind.DELETE, _TCL, r"\bfile\s+delete(?:\s+-force)?(?:\s+--)?", ()),
    Api("lua.remove", ApiKind.DELETE, _LUA | _R, r"\bos\.remove|\bfile\.remove", ()),
    Api("el.delete", ApiKind.DELETE, _EL, r"\(\s*delete-(?:file|directory)", ()),
    # --- write ---
    Api(
        "write.file",
        ApiKind.WRITE,
        _ALL,
        r"writeFileSync|writeFile|appendFileSync|appendFile|createWriteStream|write_text"
        r"|write_bytes|File\.write|IO\.write|file_put_contents|Deno\.writeTextFile|Bun\.write"
        r"|\(\s*write-region|\bwrite-file",
        ('File.write("x", s)',),
    ),
    # --- list ---
    Api(
        "list.dir",
        ApiKind.LIST,
        _ALL,
        r"os\.listdir|os\.scandir|os\.walk|\bglob\.i?glob|\.iterdir|\.r?glob|readdirSync"
        r"|fs\.readdir|Dir\.glob|Dir\[|Dir\.children|Dir\.each_child|\bglob\b|\breaddir"
        r"|\bscandir|\bopendir|\breaddir\(|directory-files|\bfind\.find|\bFind::find",
        ("for f in os.listdir('.')",),
    ),
    # --- network ---
    Api(
        "net.fetch",
        ApiKind.NETWORK,
        _ALL,
        r"\bfetch\s*\(|https?\.(?:get|request)|\bnet\.connect|urllib|urlopen|\brequests\."
        r"|http\.client|\bsocket\.|Net::HTTP|open-uri|URI\.open|TCPSocket|LWP::|HTTP::Tiny"
        r"|IO::Socket|file_get_contents\s*\(\s*['\"]https?:|curl_exec|fsockopen|\bdownload\("
        r"|HTTP\.request|http::geturl|\bsocket\s+-|url-retrieve|make-network-process",
        ('fetch("https://x")',),
    ),
    # --- exec ---
    Api(
        "exec.shell",
        ApiKind.EXEC,
        _ALL,
        r"os\.system|os\.popen|subprocess\.\w+|child_process|execSync|spawnSync|\bspawn\s*\("
        r"|\bsystem\s*\(|\bexec\s*\(|\bpassthru|\bshell_exec|\bproc_open|\bpopen|IO\.popen"
        r"|Open3|\bos\.execute|\bio\.popen|\(\s*shell-command|\(\s*call-process|\(\s*start-process"
        r"|\brun\s*\(\s*`|`[^`\n]+`|%x[({\[]|\bqx[({/]|(?:^|[;\[{]\s*)exec\s+\w",
        ("os.system(c)",),
    ),
    # --- fork ---
    Api(
        "fork",
        ApiKind.FORK,
        _ALL,
        r"\bfork\b|pcntl_fork|Process\.spawn|\bspawn\s*\(|child_process|subprocess\.Popen"
        r"|multiprocessing|os\.exec\w*|process\.argv\[0\]|\$0|\bexec\s*\(",
        ("fork while 1",),
    ),
    # --- endless loops ---
    Api(
        "loop.endless",
        ApiKind.LOOP,
        _ALL,
        r"\bwhile\s*\(?\s*(?:1|true|True|!0|\(\s*\))\s*\)?\s*[:{]|\bwhile\s+(?:1|true|True)\b"
        r"|\bwhile\s*\(\s*1\s*\)|\bfor\s*\(\s*;\s*;\s*\)|\bloop\s*(?:do|\{)|\bforever\b"
        r"|\b(?:while|until)\s*\(?\s*(?:1|true)\s*\)?\s*$|\bwhile\s+1\b|\b1\s+while\b"
        r"|\bwhile\s+fork\b|\bfork\s+while\b|\bsetInterval\s*\(|\bitertools\.count\(|\brepeat\s*\{",
        ("while True:", "loop { }", "fork while 1"),
    ),
    # --- growth ---
    Api(
        "grow.append",
        ApiKind.GROW,
        _ALL,
        r"\.append\s*\(|\.push\s*\(|\.extend\s*\(|\+=|\.=|<<\s*['\"\w]|\bs\s*=\s*s\s+s\b"
        r"|\.concat\s*\(|\*=\s*2|\bx\s*=\s*x\s*\+|\$\w+\s*\.=\s*\$\w+|\.repeat\s*\(",
        ("a.append(' ' * 10**8)",),
    ),
    # --- huge sizes ---
    Api(
        "huge.size",
        ApiKind.HUGE,
        _ALL,
        # a size of 2**30 or more given to an allocation or a repetition (`bytearray(10**12)`,
        # `"x" * 10**10`, `Buffer.alloc(1e12)`, perl's `"x" x 1e10`), not any large number
        r"(?:(?:alloc|Array|bytearray|bytes|repeat|malloc|calloc|zeros|ones|empty|full|fill"
        r"|Buffer\.alloc\w*)\s*\(\s*|['\"\]]\s*(?:\*|\bx)\s*\(?\s*)"
        r"(?:10\s*\*\*\s*(?:9|1\d)|2\s*\*\*\s*(?:3\d|[4-9]\d)|1e(?:9|1\d)|\d{10,}"
        r"|\d+\s*<<\s*(?:3\d|[4-9]\d))\b",
        ("bytearray(10**10)", '" " * 10**12'),
    ),
)


def pattern_of(kind: ApiKind) -> str:
    """One regular expression fragment matching any call of ``kind`` (alternatives, ungrouped)."""
    return "|".join(f"(?:{row.pattern})" for row in API_ROWS if row.kind is kind)


_COMPILED: Final = {k: re.compile(pattern_of(k), re.M) for k in ApiKind}


def calls(code: str, kind: ApiKind) -> bool:
    """Whether ``code`` holds a call (or construct) of ``kind``."""
    return _COMPILED[kind].search(code) is not None
