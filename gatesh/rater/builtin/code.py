"""Inline code and commands-as-data: shell commands and file deletions inside ``python -c``,
``perl -e``, ``node -e``, interpreter heredocs, ``osascript``, GNU parallel inputs and ORM calls.

Shell strings found inside code are read with the real reader and rated with the same tables
(bounded depth), so ``os.system('rm -rf ~')`` is judged exactly like ``rm -rf ~``.
"""

from __future__ import annotations

import re
import shlex
from typing import Final

from gatesh._types import CodeSource, Facts, Outcome
from gatesh.rater.builtin._base import (
    Cmd,
    D,
    Hit,
    MatchResult,
    Rule,
    among,
    interpreters_and,
    outcome_of,
    severity_of,
)
from gatesh.rater.builtin.files import _judge
from gatesh.vocab.inline import ApiKind, calls, pattern_of
from gatesh.vocab.programs.interpreters import interpreter, invocation, is_interpreter
from gatesh.vocab.pycode import run_lines

MAX_DEPTH: Final = 2
_SHELL_CALL: Final = re.compile(
    r"(?:os\.system|os\.popen|subprocess\.(?:run|call|check_call|check_output|Popen|getoutput|getstatusoutput)"
    r"|\bsystem|\bexec(?:Sync)?|\bpassthru|\bshell_exec|\bpopen|\bspawnSync|child_process\.\w+|\bqx|%x"
    r"|do shell script|Runtime\.getRuntime\(\)\.exec|\brun|\bos\.execute|\bio\.popen"
    r"|\(\s*shell-command(?:-to-string)?|\(\s*call-process-shell-command)"
    r"\s*\(?\s*(?:\[\s*)?(['\"`])(.+?)(?<!\\)\1",
    re.S,
)
_BACKTICK: Final = re.compile(r"`([^`]{2,})`")
_LIST_ARGV: Final = re.compile(r"\[\s*((?:['\"][^'\"]*['\"]\s*,\s*)+['\"][^'\"]*['\"])\s*\]")
_FILE_OPS: Final = re.compile(
    r"(?P<fn>shutil\.rmtree|os\.remove|os\.unlink|os\.rmdir|os\.removedirs|\.unlink|\.rmtree|rmSync|rmdirSync|"
    r"unlinkSync|FileUtils\.rm_rf|FileUtils\.rm_r|FileUtils\.remove_dir|FileUtils\.rm|File\.delete|"
    r"Dir\.rmdir|\bunlink|\brmtree|remove_tree|fs\.rm|fs\.promises\.rm|Files\.delete|delete POSIX file"
    r"|\(\s*delete-directory|\(\s*delete-file|(?<![\w.])rm(?=\s*\())"
    r"\s*\(?\s*(?:glob\s*\(\s*)?(?:Path\s*\(\s*)?(['\"])(?P<path>[^'\"]+)\2",
    re.I,
)
# Tcl: `exec rm -rf src` (words, no quotes) and `file delete -force src`.
_TCL_EXEC: Final = re.compile(r"(?:^|[;\[{\n])\s*exec\s+([^;\]\n}]+)")
_TCL_DELETE: Final = re.compile(r"\bfile\s+delete\s+(-force\s+)?(?:--\s+)?([^;\]\n}]+)")
_RECURSIVE_FN: Final = re.compile(
    r"rmtree|rm_rf|rm_r|remove_dir|removedirs|remove_tree|rmSync|fs\.rm|delete POSIX"
    r"|delete-directory",
    re.I,
)
_ORM: Final = re.compile(
    r"\b(?:destroy_all|delete_all|drop_table|dropDatabase|deleteIndex|deleteMany|"
    r"clearObjects|clear_index|truncate_table|flushall|flushdb|drop_collection|"
    r"drop_database|purge_queue|delete_bucket|\.destroy!?\(|\.delete\()",
    re.I,
)
_CODE_HEADS_EXTRA: Final = frozenset(
    {
        "emacs",
        "emacsclient",
        "osascript",
        "gitlab-rails",
        "rails",
        "jshell",
        "deno",
        "bun",
        "tsx",
        "ts-node",
        "node",
        "irb",
        "java",
        "kotlin",
        "scala",
    }
)
_DATA_HEADS: Final = frozenset(
    {
        "echo",
        "printf",
        "grep",
        "egrep",
        "rg",
        "ag",
        "cat",
        "git",
        "sed",
        "awk",
        "jq",
        "curl",
        "wget",
        "http",
        "psql",
        "mysql",
        "sqlite3",
        "mongosh",
        "redis-cli",
        "tee",
    }
)


# The running interpreter's own path, as code names it: a list argv that starts with it runs that
# language's interpreter (`subprocess.run([sys.executable, 'server.py'])` is `python3 server.py`).
_SELF_INTERPRETER: Final = re.compile(r"\bsys\.executable\b|\bprocess\.execPath\b")


def _named_interpreter(code: str, head: str) -> str:
    """``code`` with the running interpreter's path written as its name (a literal the code
    rules read: the command it starts is then judged like the same command line)."""
    if "executable" not in code and "execPath" not in code:
        return code
    name = "node" if head in ("node", "nodejs", "bun", "deno") else "python3"
    return _SELF_INTERPRETER.sub(f"'{name}'", code)


def code_of(c: Cmd) -> str:
    """The program text ``c`` runs inline: -c/-e arguments, or its heredoc body."""
    lang = interpreter(c.head)
    parts = (
        list(invocation(lang, c.args).inline)
        if lang is not None
        else c.opt_values("-c", "-e", "-E", "-r", "--eval", "-eval", "-x", "--execute", "--command")
    )
    if c.head in ("gitlab-rails", "rails") and c.sub(0) == "runner":
        parts.extend(c.pos[1:])
    if c.heredoc_fed or (c.feeders and not c.pos):
        parts.append(c.sc.raw)
    for r in c.sc.redirects:
        if r.op == "<<<" and r.target:
            parts.append(r.target)
    parts.extend(code.text for code in c.ctx.facts.code if code.command == c.index and code.text)
    return _named_interpreter("\n".join(parts), c.head)


# Inline code longer than this is a program, not a one-liner: its loops are read by a person or
# the model, not by the loop rules below (a program's `while True:` has its own way out).
_ONE_LINER: Final = 2000


def one_liner(c: Cmd) -> str:
    """The code ``c`` is given inline (``-c``/``-e``, a heredoc, a here-string, a pipe), not a
    file the line wrote earlier; "" when there is none or it is longer than a one-liner."""
    lang = interpreter(c.head)
    parts = (
        list(invocation(lang, c.args).inline)
        if lang is not None
        else c.opt_values("-c", "-e", "-E", "-r", "--eval", "-eval", "-x", "--execute")
    )
    if c.heredoc_fed or (c.feeders and not c.pos):
        parts.append(c.sc.raw)
    for r in c.sc.redirects:
        if r.op == "<<<" and r.target:
            parts.append(r.target)
    parts.extend(
        code.text
        for code in c.ctx.facts.code
        if code.command == c.index and code.text and code.source is not CodeSource.DEFINED
    )
    text = "\n".join(parts)
    return text if len(text) <= _ONE_LINER else ""


# A way out of a loop: an endless loop holding one of these ends when its condition is met.
_LOOP_EXIT: Final = re.compile(
    r"\b(?:break|return|exit|raise|throw|last|die|quit|os\._exit|sys\.exit|process\.exit)\b"
)


def endless(code: str) -> bool:
    """An endless loop with no way out in ``code``."""
    return calls(code, ApiKind.LOOP) and _LOOP_EXIT.search(code) is None


def rate_inner(text: str, c: Cmd) -> Hit | None:
    """Rate ``text`` as a shell command line with the same tables (bounded depth)."""
    if c.sc.depth >= MAX_DEPTH + 3 or len(text) > 4000:
        return None
    from gatesh.reading import read

    if c.ctx.rate_line is None:
        return None
    try:
        facts: Facts = read(text, cwd=c.ctx.cwd)
    except Exception:
        return None
    found = c.ctx.rate_line(facts, c.ctx.depth + 1)  # the tables, re-entered for the inner command
    # A safe finding is a reason the inner command is harmless, not a hit on the code around it.
    harmful = [f for f in found if f.outcome is not Outcome.SAFE]
    if not harmful:
        return None
    top = max(harmful, key=lambda f: f.outcome.rank)
    reason = top.reason.rstrip(".")
    return Hit(
        severity=severity_of(top.outcome),
        detail=f"runs `{text[:60]}`: {reason[:1].lower() + reason[1:]}",
        remedy=top.remedy,
    )


def _worse(a: Hit | None, b: Hit | None) -> Hit | None:
    """The graver of two hits (``a`` on a tie); a hit of no stated severity counts as the rule's
    own, destructive or graver."""
    if a is None:
        return b
    if b is None:
        return a

    def rank(h: Hit) -> int:
        return outcome_of(h.severity).rank if h.severity is not None else Outcome.DESTRUCTIVE.rank

    return b if rank(b) > rank(a) else a


def inline_code(c: Cmd) -> MatchResult:
    h = c.head
    if not (is_interpreter(h) or h in _CODE_HEADS_EXTRA):
        return None
    if c.ctx.depth > MAX_DEPTH:
        return None
    code = code_of(c)
    if not code:
        return None
    worst: Hit | None = None
    # A list of string literals is an argv: it is rated whole below, not by its first word.
    lists = [m.span(1) for m in _LIST_ARGV.finditer(code)]
    for m in _SHELL_CALL.finditer(code):
        if any(a <= m.start(2) < b for a, b in lists):
            continue
        worst = _worse(worst, rate_inner(m.group(2), c))
    for m in _LIST_ARGV.finditer(code):
        words = re.findall(r"['\"]([^'\"]*)['\"]", m.group(1))
        if words:
            worst = _worse(worst, rate_inner(shlex.join(words), c))
    if h in ("perl", "ruby", "julia") or h.startswith(("perl", "ruby")):
        for m in _BACKTICK.finditer(code):
            worst = _worse(worst, rate_inner(m.group(1), c))
    if h.startswith(("tclsh", "wish", "expect")):
        for m in _TCL_EXEC.finditer(code):  # Tcl's `exec PROGRAM ARGS…` runs its words
            worst = _worse(worst, rate_inner(m.group(1).strip(), c))
        for m in _TCL_DELETE.finditer(code):
            hit = _judge(c, m.group(2).split(), bool(m.group(1)), "deletes")
            if hit:
                worst = _worse(worst, Hit(severity=hit.severity, detail=hit.detail))
    for m in _FILE_OPS.finditer(code):
        path = m.group("path")
        recursive = (
            bool(_RECURSIVE_FN.search(m.group("fn"))) or "recursive" in code[m.end() : m.end() + 40]
        )
        hit = _judge(c, [path], recursive, "deletes")
        if hit:
            worst = _worse(worst, Hit(severity=hit.severity, detail=hit.detail, remedy=hit.remedy))
    if worst is None and _ORM.search(code):
        worst = Hit(detail="deletes application data")
    return worst


# Every match of orm_args holds one: a word _ORM looks for (lower-cased), or ":restore".
_ORM_NEEDS: Final = (
    "destroy_all",
    "delete_all",
    "drop_table",
    "dropdatabase",
    "deleteindex",
    "deletemany",
    "clearobjects",
    "clear_index",
    "truncate_table",
    "flushall",
    "flushdb",
    "drop_collection",
    "drop_database",
    "purge_queue",
    "delete_bucket",
    ".destroy",
    ".delete(",
    ":restore",
)


def orm_args(c: Cmd) -> MatchResult:
    if c.head in _DATA_HEADS or is_interpreter(c.head) or c.head in _CODE_HEADS_EXTRA:
        return None
    for a in c.args:
        if len(a) > 6 and _ORM.search(a):
            return Hit(detail=f"{c.head} is given code that deletes application data")
        if re.search(r":restore\b|backup:restore", a):
            return Hit(detail=f"{c.head} restores a backup over current data")
    return None


def parallel_inputs(c: Cmd) -> MatchResult:
    """GNU parallel with no command runs each input as a command line."""
    if c.head != "parallel" or ":::" not in c.args:
        return None
    k = c.args.index(":::")
    before = [a for a in c.args[:k] if not a.startswith("-")]
    if before:
        return None
    worst: Hit | None = None
    for inp in c.args[k + 1 :]:
        if inp in (":::", "::::"):
            continue
        worst = _worse(worst, rate_inner(inp, c))
    return worst


# A call that runs a shell command whose first argument is not a literal (a string, or a list of
# strings): the command is put together when the code runs (`system(c)`, `os.system(f"…")`).
# `.exec(` as a method is left out: in JavaScript that is mostly a regular expression's.
_COMPUTED_CALL: Final = re.compile(
    r"(?:os\.system|os\.popen|subprocess\.\w+|child_process(?:['\"]\))?\.\w+|(?<![.\w])(?:system|exec|execSync"
    r"|passthru|shell_exec|popen|spawnSync|proc_open))\s*\(\s*+(?!['\"`)]|\[\s*['\"](?![^\]]{0,256}\]\s*\.))"
)


def _program_text(c: Cmd) -> tuple[str, ...]:
    """The program texts an interpreter is given in its argv."""
    lang = interpreter(c.head)
    return invocation(lang, c.args).inline if lang is not None else ()


# A formatted string literal (Python's f"…"): its text, up to the closing quote.
_FORMATTED: Final = re.compile(r"""(?:[rR]?[fF]|[fF][rR])(['"])((?:\\.|(?!\1).)*)\1""", re.S)
_HOLE: Final = re.compile(r"\{[^{}]*\}")


def _formatted_command(code: str, at: int) -> str | None:
    """The command line of an f-string handed to a call at ``at``, its holes read as words
    only known when it runs (``f'lsof -i :{port}'`` is ``lsof -i :$VALUE``); None when the
    argument is no f-string, or a hole is in the program's place (then what runs is not known)."""
    m = _FORMATTED.match(code, at)
    if m is None or "{{" in m.group(2):
        return None
    text = _HOLE.sub("$VALUE", m.group(2))
    head = text.lstrip().split(maxsplit=1)[0] if text.strip() else ""
    if not head or "$" in head:
        return None
    return text


def computed_command(c: Cmd) -> MatchResult:
    """Inline code that runs a command assembled at run time: the gate cannot read what runs.
    A formatted string whose program is spelled out, or (Python) a name bound once to a command
    the text spells out (:func:`gatesh.vocab.pycode.run_lines`), is read as that command line."""
    worst: Hit | None = None
    spelled: dict[int, str] | None = None
    for code in _program_text(c):
        named = _named_interpreter(code, c.head)
        for m in _COMPUTED_CALL.finditer(named):
            line = _formatted_command(named, m.end())
            if line is None:
                if spelled is None:
                    lang = interpreter(c.head)
                    python = lang is not None and lang.name == "python"
                    spelled = run_lines(named) if python else {}
                line = spelled.get(m.start())
            if line is None:
                return Hit(
                    detail=f"runs a command it assembles at run time ({m.group(0).strip()}…)"
                )
            hit = rate_inner(line, c)
            if hit is not None:
                worst = _worse(
                    worst, Hit(severity=hit.severity or D, detail=hit.detail, remedy=hit.remedy)
                )
        spelled = None
    return worst


_DELETE_OR_WRITE: Final = re.compile(
    rf"(?:{pattern_of(ApiKind.DELETE)}|{pattern_of(ApiKind.WRITE)}|(?<![\w.])open)"
    r"\s*\(?\s*(?![\s'\"`)])[A-Za-z_$@]"
)


def computed_files(c: Cmd) -> MatchResult:
    """Inline code that lists files and deletes or rewrites each one it lists: the files are
    chosen when it runs (``[os.remove(f) for f in os.listdir('.')]``)."""
    if not (is_interpreter(c.head) or c.head in _CODE_HEADS_EXTRA):
        return None
    code = one_liner(c)
    if not code or not calls(code, ApiKind.LIST):
        return None
    row = interpreter(c.head)
    lang = row.name if row is not None else c.head
    for m in _DELETE_OR_WRITE.finditer(code):
        if m.group(0).startswith("open") and _opens_to_read(code, m.start(), lang):
            continue
        return Hit(
            detail=f"deletes or rewrites files it lists when it runs ({m.group(0).strip()}…)"
        )
    return None


# Languages whose `open(NAME)` with no mode reads NAME (Python's and Ruby's default mode is
# "r"); Perl's two-argument open takes its mode from the name, so it is never read as a read.
_OPEN_READS_BY_DEFAULT: Final = frozenset({"python", "pypy", "ruby", "irb"})
# A mode string that only reads: Python's r/b/t/U letters, Ruby's "r"/"rb", Perl's "<".
_READ_MODE: Final = re.compile(r"""\s*(?:mode\s*=\s*)?(['"])(?:[rbtU]+(?::[\w-]+)?|<)\1\s*""")


def _opens_to_read(code: str, at: int, lang: str) -> bool:
    """Whether the ``open(…)`` call at ``at`` in ``code`` only reads the file it opens: its mode
    is a literal read mode (``open(f, 'r')``, ``open(f, mode="rb")``, Perl's ``open($fh, '<',
    $f)``), or it has none in a language whose default mode reads (``open(f)`` in Python)."""
    paren = code.find("(", at)
    if paren < 0 or code[at + 4 : paren].strip():
        return False  # `open f` without parentheses: the arguments are not delimited here
    args: list[str] = []
    depth, start, quote, k = 0, paren + 1, "", paren + 1
    while k < len(code):
        ch = code[k]
        if quote:
            if ch == "\\":
                k += 1
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                args.append(code[start:k])
                break
            depth -= 1
        elif ch == "," and depth == 0:
            args.append(code[start:k])
            start = k + 1
        k += 1
    else:
        return False  # no closing parenthesis: the call is not read whole
    args = [a for a in args if a.strip()]
    rest = [a for a in args[1:] if not re.match(r"\s*(?:encoding|errors|newline|buffering)\s*=", a)]
    if not rest:
        return len(args) == 1 and lang in _OPEN_READS_BY_DEFAULT
    return len(rest) <= 2 and _READ_MODE.fullmatch(rest[0]) is not None


# GNU sed's commands; a script holding anything else is refused before it runs.
_SED_LETTERS: Final = frozenset("{}=aAbcdDeFgGhHiIlLnNpPqQrRsStTvwWxyz#:")
_SED_FLAGS: Final = re.compile(r"[gpiImMe0-9]*w?")


def sed_commands(script: str) -> list[tuple[str, str]]:
    """The commands of a sed script as ``(letter, rest)``: for ``s`` the rest is
    ``replacement\0flags``, for ``e`` the command line; the text of ``a``, ``i`` and ``c`` (and
    everything after a command sed reads to the end of its line) is skipped, not parsed."""
    out: list[tuple[str, str]] = []
    k, n = 0, len(script)
    while k < n:
        ch = script[k]
        if ch in " \t\n;{}!":
            k += 1
            continue
        # an address: a line number, $, /regex/ or \cregexc, and a range or step after it
        while k < n and (script[k].isdigit() or script[k] in "$,~+"):
            k += 1
        if k < n and script[k] in "/\\":
            delim = script[k + 1] if script[k] == "\\" and k + 1 < n else "/"
            k += 2 if script[k] == "\\" else 1
            while k < n and script[k] != delim:
                k += 2 if script[k] == "\\" else 1
            k += 1
            continue  # the command letter follows (after a range, a second address)
        if k >= n:
            break
        letter = script[k]
        k += 1
        if letter in "aicrRwWbtTe:#":  # the rest of the line: text, a file, a label, a command
            end = script.find("\n", k)
            end = n if end < 0 else end
            while letter in "aic" and end < n and script[:end].endswith("\\"):
                nxt = script.find("\n", end + 1)  # a text line ending in a backslash goes on
                end = n if nxt < 0 else nxt
            if letter == "e":
                out.append(("e", script[k:end].strip()))
            k = end
            continue
        if letter in "sy" and k < n:
            delim = script[k]
            parts: list[str] = []
            k += 1
            for _ in range(2):
                start = k
                while k < n and script[k] != delim:
                    k += 2 if script[k] == "\\" else 1
                parts.append(script[start:k])
                k += 1
            start = k
            while k < n and (script[k].isalnum() or script[k] in "+"):
                k += 1
            if letter == "s":
                out.append(("s", parts[1] + "\0" + script[start:k]))
            continue
        out.append((letter, ""))
    return out


def sed_exec(c: Cmd) -> MatchResult:
    """sed runs a shell command: the `e` flag of an `s` command runs the line it made, and an
    `e COMMAND` runs COMMAND."""
    scripts = list(c.opt_values("-e", "--expression"))
    if not scripts and not c.has("-f", "--file") and c.pos:
        scripts = [c.pos[0]]
    worst: Hit | None = None
    for script in scripts:
        commands = sed_commands(script)
        if any(letter not in _SED_LETTERS for letter, _ in commands):
            continue  # sed refuses a script with a command it does not know: nothing runs
        for letter, rest in commands:
            if letter == "s":
                replacement, _, flags = rest.partition("\0")
                if "e" not in flags or not _SED_FLAGS.fullmatch(flags):
                    continue  # no `e`, or flags sed refuses (`s/a/b/server`): nothing runs
                if re.search(r"\\\d|&", replacement):
                    return Hit(
                        detail="sed runs each line it rewrites as a command, built from the input"
                    )
                command = replacement
            elif letter == "e":
                if not rest:
                    return Hit(detail="sed runs each line of its input as a command")
                command = rest
            else:
                continue
            worst = _worse(worst, rate_inner(command, c) or Hit(detail=f"sed runs `{command}`"))
    return worst


RULES: tuple[Rule, ...] = (
    Rule(
        "code.computed-files",
        D,
        "Inline code {detail}: the gate cannot tell which files are lost.",
        computed_files,
        tried_on=interpreters_and(_CODE_HEADS_EXTRA),
        remedy="delete or rewrite the files by name, as plain shell commands",
        examples=(
            "python3 -c 'import os; [os.remove(f) for f in os.listdir(\".\")]'",
            'python3 -c \'import glob\nfor f in glob.glob("src/*.py"): open(f, "w")\'',
            'node -e \'const fs=require("fs"); for (const f of fs.readdirSync(".")) fs.rmSync(f)\'',
            "ruby -e 'Dir.glob(\"**/*\").each { |f| File.delete(f) }'",
            "perl -e 'unlink $_ for glob \"*\"'",
            'python3 -c \'import glob\nfor f in glob.glob("*.py"): open(f, "r+").truncate()\'',
        ),
        counter=(
            "python3 -c 'import os; print(os.listdir(\".\"))'",
            'python3 -c \'open("out.txt", "w").write("x")\'',
            # a file it lists, opened to be read: nothing is lost
            'python3 -c \'import glob\nfor p in glob.glob("/proc/[0-9]*"): print(open(p + "/cmdline", "r").read())\'',
            "python3 -c 'import glob\nfor f in glob.glob(\"*.log\"): print(open(f).read())'",
            'perl -e \'for (glob "*.txt") { open(my $fh, "<", $_); print <$fh> }\'',
            'node -e \'console.log(require("fs").readdirSync("."))\'',
        ),
    ),
    Rule(
        "code.sed-exec",
        D,
        "This {detail}.",
        sed_exec,
        heads=frozenset({"sed", "gsed"}),
        remedy="run the command itself, written out, so the gate can read it",
        examples=(
            "sed 's/.*/rm -rf src/e' notes.txt",
            "sed -e 's/x/git clean -fdx/e' f",
            "sed '1e rm -rf src' f",
            "gsed -n 's/^/sh /ep' list.txt",
        ),
        counter=("sed 's/a/b/g' f", "sed -n 's/x/y/p' f", "sed -e 's/e/E/' f"),
    ),
    Rule(
        "code.computed-command",
        D,
        "Inline code {detail}, which the gate cannot read.",
        computed_command,
        tried_on=interpreters_and(),
        remedy="run the command itself, written out, so the gate can read it",
        examples=(
            'awk \'BEGIN{c="r" "m -rf ~"; system(c)}\'',
            "python3 -c 'import os; os.system(cmd)'",
            "perl -e 'system($ENV{X})'",
            "php -r 'shell_exec($argv[1]);'",
            "node -e \"require('child_process').exec(['rm','-rf',d].join(' '))\"",
        ),
        counter=(
            "awk '{print $1}' f",
            "python3 -c \"import os; os.system('ls')\"",
            "python3 -c \"import subprocess; subprocess.run(['ls', '-l'])\"",
            "node -e \"/x/.exec('y')\"",
            "awk 'BEGIN{system(\"date\")}'",
        ),
    ),
    Rule(
        "code.inline",
        D,
        "Inline code {detail}.",
        inline_code,
        tried_on=interpreters_and(_CODE_HEADS_EXTRA),
        remedy="do the file or shell operation as a plain shell command the gate can read",
        examples=(
            "python -c \"import shutil; shutil.rmtree('/home/user')\"",
            "perl -e \"system('rm -rf /home/user')\"",
            "node -e \"require('fs').rmSync('/', {recursive:true})\"",
            "ruby -e \"FileUtils.rm_rf('/')\"",
            "python3 <<EOF\nimport os\nos.remove('/etc/passwd')\nEOF",
            "osascript -e 'do shell script \"rm /var/log/system.log\"'",
        ),
        counter=(
            "python -c \"print('rm -rf /')\"",
            "python -c \"import shutil; shutil.rmtree('build')\"",
            "node -e 'console.log(1)'",
        ),
    ),
    Rule(
        "code.orm-delete",
        D,
        "This {detail}.",
        orm_args,
        remedy="name exactly what will be deleted, with a filter",
        examples=("gitlab-rake gitlab:backup:restore", "sidekiq-cli exec 'Job.delete_all'"),
        counter=("rails runner 'puts User.count'",),
        needs=_ORM_NEEDS,
    ),
    Rule(
        "code.parallel-inputs",
        D,
        "GNU parallel {detail}.",
        parallel_inputs,
        tried_on=among(("parallel",)),
        remedy="run each command directly",
        examples=("parallel ::: 'rm -rf /home/x' \"$(cat more)\"",),
        counter=("parallel echo ::: a b",),
    ),
)
