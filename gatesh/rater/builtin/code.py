"""Inline code and commands-as-data: shell commands and file deletions inside ``python -c``,
``perl -e``, ``node -e``, interpreter heredocs, ``osascript``, GNU parallel inputs and ORM calls.

Shell strings found inside code are read with the real reader and rated with the same tables
(bounded depth), so ``os.system('rm -rf ~')`` is judged exactly like ``rm -rf ~``.
"""

from __future__ import annotations

import re
import shlex
from typing import Final

from gatesh._types import Facts, Outcome
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
from gatesh.vocab.programs import interpreter, invocation, is_interpreter
from gatesh.vocab.pycode import run_lines

MAX_DEPTH: Final = 2
_SHELL_CALL: Final = re.compile(
    r"(?:os\.system|os\.popen|subprocess\.(?:run|call|check_call|check_output|Popen|getoutput|getstatusoutput)"
    r"|\bsystem|\bexec(?:Sync)?|\bpassthru|\bshell_exec|\bpopen|\bspawnSync|child_process\.\w+|\bqx|%x"
    r"|do shell script|Runtime\.getRuntime\(\)\.exec|\brun)\s*\(?\s*(?:\[\s*)?(['\"`])(.+?)(?<!\\)\1",
    re.S,
)
_BACKTICK: Final = re.compile(r"`([^`]{2,})`")
_LIST_ARGV: Final = re.compile(r"\[\s*((?:['\"][^'\"]*['\"]\s*,\s*)+['\"][^'\"]*['\"])\s*\]")
_FILE_OPS: Final = re.compile(
    r"(?P<fn>shutil\.rmtree|os\.remove|os\.unlink|os\.rmdir|os\.removedirs|\.unlink|\.rmtree|rmSync|rmdirSync|"
    r"unlinkSync|FileUtils\.rm_rf|FileUtils\.rm_r|FileUtils\.remove_dir|FileUtils\.rm|File\.delete|"
    r"Dir\.rmdir|\bunlink|\brmtree|remove_tree|fs\.rm|fs\.promises\.rm|Files\.delete|delete POSIX file)"
    r"\s*\(?\s*(?:glob\s*\(\s*)?(?:Path\s*\(\s*)?(['\"])(?P<path>[^'\"]+)\2",
    re.I,
)
_RECURSIVE_FN: Final = re.compile(
    r"rmtree|rm_rf|rm_r|remove_dir|removedirs|remove_tree|rmSync|fs\.rm|delete POSIX", re.I
)
_ORM: Final = re.compile(
    r"\b(?:destroy_all|delete_all|drop_table|dropDatabase|deleteIndex|deleteMany|"
    r"clearObjects|clear_index|truncate_table|flushall|flushdb|drop_collection|"
    r"drop_database|purge_queue|delete_bucket|\.destroy!?\(|\.delete\()",
    re.I,
)
_CODE_HEADS_EXTRA: Final = frozenset(
    {
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
        else c.opt_values("-c", "-e", "-E", "-r", "--eval", "-x", "--execute", "--command")
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
    if h in ("perl", "ruby") or h.startswith(("perl", "ruby")):
        for m in _BACKTICK.finditer(code):
            worst = _worse(worst, rate_inner(m.group(1), c))
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


RULES: tuple[Rule, ...] = (
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
