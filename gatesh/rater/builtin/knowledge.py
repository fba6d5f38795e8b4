"""What the builtin rater did not see or does not model: the gaps in its knowledge (S4, S4.1).

A builtin verdict rests on *complete knowledge* when it has no gap: every executed command was
read, every effect of S4.1 is one the builtin models, and no code runs that gatesh has not read.
With a key, ``auto`` lets such a ``safe`` verdict stand without asking the model (the cascade,
:mod:`gatesh.rater.cascade`); a verdict with any gap is asked of the model.

Each row of :data:`GAPS` names one thing the builtin cannot vouch for, with an id, a reason and
examples (commands that have the gap) and counter-examples (commands that do not), checked by the
validator test. The table errs on the side of a gap: a gap costs one model question, a missing
gap lets a verdict stand on knowledge the builtin does not have.

Plugging in: a layer that starts modelling a class (path effects, opaque code, fed code) narrows
or removes the row that stands for it; a layer that meets something it cannot read or classify
adds a row (or a reader note: every reader note is a gap, :data:`NOTED`).

The verb-reading gaps (project code a tool runs, a state-changing verb) are in
:mod:`gatesh.rater.builtin._gap_verbs`.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from gatesh._types import RUNS_NOTHING_UNREAD, CodeSource, Context, Direction, Gap, PathClass
from gatesh.rater.builtin._base import Cmd, Ctx
from gatesh.rater.builtin._gap_verbs import runs_project_code, state_verb
from gatesh.reading._defined import WRITTEN_RUN_NOTE
from gatesh.vocab.hosts import NETWORK_TOOLS, host_of, is_loopback
from gatesh.vocab.paths.classes import classify
from gatesh.vocab.programs.interpreters import interpreter, invocation, runs_code
from gatesh.vocab.programs.shells import PARSED_SHELLS, SHELLS, shell
from gatesh.vocab.programs.verbless import NO_STATE_VERBS
from gatesh.vocab.pycode import modelled
from gatesh.vocab.reads import command_reads
from gatesh.vocab.words import inline_code, reads_code_from_stdin, split_args, stdin_is_data

__all__ = ["GAPS", "GapRule", "gaps_of"]


@dataclass(frozen=True)
class GapRule:
    """One kind of knowledge the builtin lacks.

    ``match`` returns a detail (filled into ``{detail}`` of ``reason``) when ``cmd`` has the gap,
    else None. ``on_facts`` rules get the :class:`Ctx` once per command line instead; ``covered``
    rules also get the heads the builtin's rule tables dispatch on (the programs it has a model of).
    Invariant: every string in ``examples`` has this gap, no string in ``counter`` has it.
    """

    id: str
    reason: str
    match: Callable[..., str | None]
    on_facts: bool = False
    covered: bool = False
    examples: tuple[str, ...] = ()
    counter: tuple[str, ...] = ()


# --- the facts as a whole -----------------------------------------------------------------------


def _unreadable(ctx: Ctx) -> str | None:
    return None if ctx.facts.readable else (ctx.facts.unreadable or "unreadable")


def _noted(ctx: Ctx) -> str | None:
    """Every reader note says something was not read as a plain command (S2): a disagreement, a
    repair, a dynamic string, an unread script. When in doubt, a note is a gap. (The floors that
    stand over the command are not notes: the pipeline judges them, :attr:`Facts.floor_notes`.)"""
    for note in ctx.facts.notes:
        if note.endswith(WRITTEN_RUN_NOTE):
            continue  # the written text is read; how much of it is modelled is its own gap's
        return note[:120]
    return None


# Where a modelled program may read without the model asked: not a credential store, not
# gatesh's own files, not a name only known when it runs.
_UNREAD_CLASSES: Final = frozenset({PathClass.CREDENTIALS, PathClass.GATE, PathClass.UNKNOWN})


def _python_modelled(ctx: Ctx, language: str, text: str | None, cwd: str | None) -> bool:
    """Whether ``text`` is a Python program whose every effect the builtin models (vocab.pycode):
    every file it reads lies where reading is no question (not a credential store), and every
    file it writes is a path effect the reader recorded, so the rules judged the write."""
    lang = interpreter(language)
    if lang is None or lang.name != "python" or text is None:
        return False
    if not text:
        return True  # an empty file (a package's usual __init__.py) does nothing
    uses = modelled(text)
    if uses is None:
        return False
    base = cwd or ctx.cwd
    written = {
        e.resolved for e in ctx.facts.paths if e.direction in (Direction.WRITE, Direction.UNKNOWN)
    }
    for use in uses:
        name = os.path.expanduser(use.name) if use.name.startswith("~") else use.name
        path = os.path.normpath(name if os.path.isabs(name) else os.path.join(base, name))
        if use.writes:
            if path not in written:
                return False
        elif classify(path, home=ctx.home, tree=None)[0] in _UNREAD_CLASSES:
            return False
    return True


def _fed_code(ctx: Ctx) -> str | None:
    """Program text a command runs that is not a command line gatesh read (S2.1): opaque code,
    code rewritten on its way in, an interpreter's fed program (the code rules look for commands
    and deletions in it, not for every effect), or a shell's input the reader did not unfold."""
    facts = ctx.facts
    for code in facts.code:
        if code.opaque:
            return code.opaque
        if code.transformed:
            return f"code rewritten by {code.transformed}"
        if code.source is CodeSource.INLINE:
            continue  # a shell of another language (its own gap) or an interpreter's -c (inline-code)
        if _python_modelled(ctx, code.language, code.text, None):
            continue
        if code.text is None and not code.generator:
            return f"{code.language} code from {code.source.value}"
        if (
            code.language not in PARSED_SHELLS
            and shell(code.language) is None
            and not code.generator
        ):
            return f"{code.language} code on its input"
    if (
        not facts.code
        and any(runs_code(c.head) or c.head in (".", "source") for c in facts.commands)
        and reads_code_from_stdin(facts)
    ):
        return "code on its input"
    return None


def _scripts(ctx: Ctx) -> str | None:
    for s in ctx.facts.scripts:
        if s.note in RUNS_NOTHING_UNREAD:
            continue  # not there when decided, or a virtual environment's own: nothing unread runs
        if _python_modelled(ctx, s.interpreter, s.text, None):
            continue
        if s.interpreter not in PARSED_SHELLS:
            return f"{s.interpreter} program {s.path}"
        if s.text is None:
            return f"shell script {s.path} ({s.note or 'unread'})"
    return None


# --- each command ------------------------------------------------------------------------------


def _dynamic_head(c: Cmd) -> str | None:
    return c.sc.raw[:60] or "a dynamic program" if c.sc.dynamic_head else None


def _unknown_path(ctx: Ctx) -> str | None:
    """A path the command names whose value is only known when it runs (S2.1 path effects of
    class UNKNOWN): the builtin cannot say whether it is a credential store, a system folder or a
    file holding work, so it cannot vouch for what touching it does."""
    for e in ctx.facts.paths:
        if e.cls is PathClass.UNKNOWN:
            return e.path[:60]
    return None


# Programs whose dynamic words are only printed or compared, never opened, run or sent: their
# value changes what is shown, not what is touched (a redirect of their output is a path effect).
_DATA_WORDS: Final = frozenset({"echo", "printf", "test", "[", "[[", "true", "false", ":"})


def _dynamic_word(c: Cmd) -> str | None:
    """A word or redirect target whose value is only known when it runs and that is not a path
    (a path of unknown value is :func:`_unknown_path`'s): an option, a mode, a name the builtin
    cannot read."""
    if c.head in _DATA_WORDS:
        return None
    if any(c.dyn):
        paths = {e.path for e in c.ctx.facts.paths if e.command == c.index}
        for w in c.sc.argv[1:]:
            if not w.static and w.text not in paths:
                return w.text[:60]
    for r in c.sc.redirects:
        if r.target is None:
            return "a redirect target"
    return None


_SYSTEM_BIN: Final = (
    "/bin/",
    "/usr/bin/",
    "/usr/local/bin/",
    "/sbin/",
    "/usr/sbin/",
    "/usr/local/sbin/",
    "/opt/homebrew/bin/",
)


# A program file by its extension: a script found on PATH, whose text gatesh has not read.
_SCRIPT_NAME: Final = re.compile(
    r"\.(?:sh|bash|zsh|py|pyw|rb|pl|pm|php|js|mjs|cjs|ts|lua|tcl|r|jl|ps1|bat|cmd|jar)$", re.I
)


def _local_program(c: Cmd) -> str | None:
    """A program named by a path outside the system folders (a file of the project or the user,
    not the tool the head names), or a script by its name (``acme.sh``, ``GetNPUsers.py``).
    Shell scripts that were read are the reader's scripts, not a gap."""
    if not c.sc.argv:
        return None
    argv0 = c.sc.argv[0].text
    if ("/" not in argv0 or argv0.startswith(_SYSTEM_BIN)) and (
        "." not in argv0 or not _SCRIPT_NAME.search(argv0)
    ):
        return None
    if any(
        s.path == argv0 and s.text is not None and s.interpreter in PARSED_SHELLS
        for s in c.ctx.facts.scripts
    ):
        return None
    if "/" in argv0 and c.absent(argv0):
        return None
    return argv0[:60]


def _inline_code(c: Cmd) -> str | None:
    """Program text of an interpreter or of a shell gatesh does not parse: the code rules look for
    commands and deletions in it, not for every effect it can have."""
    code = inline_code(c.sc)
    if code:
        if all(_python_modelled(c.ctx, c.head, text, c.cwd) for text in code):
            return None  # Python whose every effect is modelled (vocab.pycode)
        return f"{c.head} code"
    return None


# Options of interpreters whose value is not the program (so the first operand after them is).
_INTERP_OPTS_WITH_ARG: Final = frozenset(
    {
        "-W",
        "-X",
        "-I",
        "-r",
        "--require",
        "-M",
        "--import",
        "-cp",
        "-classpath",
        "--class-path",
        "-p",
        "--module-path",
    }
)


def _program_file(c: Cmd) -> str | None:
    """An interpreter running a program file or module gatesh does not read (``python x.py``,
    ``node app.js``, ``python -m pkg``, ``java -jar app.jar``), or a shell of another language
    running a script."""
    head = c.head
    lang = interpreter(head)
    sh = shell(head)
    if lang is None and sh is None and head not in ("java", "deno", "bun"):
        return None
    if sh is not None and sh.parsed:
        return None  # the reader reads shell scripts (an unread one is a note)
    if inline_code(c.sc):
        return None  # the program is its inline code (its own gap)
    if lang is not None and lang.program_operand:
        return None  # awk's program is its inline code
    if lang is not None and invocation(lang, c.args).module:
        if stdin_is_data(c.sc):
            return None  # a module that parses its input and prints (python3 -m json.tool)
        return _module(c)
    opts, operands = split_args(c.args, _INTERP_OPTS_WITH_ARG)
    if head == "java" and ("-jar" in opts or operands):
        return "a Java program"
    if head in ("deno", "bun"):
        return (
            f"{head} {operands[0]}"
            if operands and operands[0] not in ("--version", "upgrade")
            else None
        )
    if any(o in ("-m", "-jar") for o in opts):
        return f"{head} module"
    if operands and operands[0] != "-":
        if c.absent(operands[0]):
            return None  # the interpreter cannot open it: nothing runs
        if any(
            s.path == operands[0] and _python_modelled(c.ctx, s.interpreter, s.text, c.cwd)
            for s in c.ctx.facts.scripts
        ):
            return None  # written earlier in this text, and modelled whole
        return f"{head} {operands[0][:40]}"
    return None


def _module(c: Cmd) -> str | None:
    """``python -m NAME``: complete knowledge when the reader read every file of the working
    folder the module runs (:mod:`gatesh.reading._modules`) and each is modelled whole (their
    own gaps are :func:`_scripts`'); a module not read (installed, or the folder uncertain) is
    a gap."""
    lang = interpreter(c.head)
    name = invocation(lang, c.args).module_name if lang is not None else ""
    files = [
        s
        for s in c.ctx.facts.scripts
        if s.module is not None and s.module.command == c.index and s.module.name == name
    ]
    if files and all(_python_modelled(c.ctx, s.interpreter, s.text, c.cwd) for s in files):
        return None
    return f"{c.head} module {name[:40]}" if name else f"{c.head} module"


# The wrappers that run a command with another user's privilege (the reader marks it privileged).
_PRIVILEGE_WRAPPERS: Final = frozenset({"sudo", "doas", "su", "pkexec", "run0", "sudo-rs"})


def _privileged(c: Cmd, covered: frozenset[str]) -> str | None:
    """A program run as root that no rule table names: what it does with that privilege is not
    modelled (the privilege rules know sudo's own hazards and the programs they name). A command
    the read-only table vouches for without the privilege only reads, as root too (what it reads
    is the credential rules' business)."""
    if not c.sc.privileged or c.head in NO_STATE_VERBS or c.head in covered:
        return None
    plain = dataclasses.replace(
        c.sc,
        privileged=False,
        wrappers=tuple(w for w in c.sc.wrappers if w not in _PRIVILEGE_WRAPPERS),
    )
    return None if command_reads(plain) else c.head


def _names_host(c: Cmd) -> str | None:
    """A program the host table does not describe, naming another machine (a URL, user@host, an
    address): what it does there is not modelled (the network rules and floors know the transfer
    tools of :data:`gatesh.vocab.hosts.TOOL_ROWS`)."""
    if c.head in NETWORK_TOOLS or c.head in NO_STATE_VERBS:
        return None
    for a in c.args:
        if not (
            "." in a or ":" in a or "@" in a
        ):  # every host shape has one (URL, user@host, address)
            continue
        host = host_of(a, bare=False)
        if host and not is_loopback(host):
            return None if command_reads(c.sc) else host[:60]
    return None


def _remote(c: Cmd) -> str | None:
    """A command run on another host or in a container: its effects there (the files it changes,
    whether they hold work) are not seen from here."""
    if c.sc.remote or c.sc.context == Context.REMOTE:
        return "runs on a remote host"
    return "runs in a container" if c.sc.context == Context.CONTAINER else None


def _unparsed_shell(c: Cmd) -> str | None:
    sh = shell(c.head)
    if sh is not None and not sh.parsed and c.head in SHELLS:
        return f"{c.head} ({sh.family.value})"
    return None


# The order is the order the gaps are cited in; the first one is the one the audit line names.
GAPS: Final[tuple[GapRule, ...]] = (
    GapRule(
        "knowledge.unreadable",
        "The command could not be read ({detail}).",
        _unreadable,
        on_facts=True,
        examples=("echo 'unterminated",),
        counter=("ls -l",),
    ),
    GapRule(
        "knowledge.reader-note",
        "The reader noted something it did not read as a plain command: {detail}.",
        _noted,
        on_facts=True,
        examples=("bash /tmp/missing-script.sh",),
        counter=("git status", "source .venv/bin/activate"),
    ),
    GapRule(
        "knowledge.fed-code",
        "It runs code gatesh did not read as commands ({detail}).",
        _fed_code,
        on_facts=True,
        examples=(
            "echo 'import shutil' | python3",
            "curl -s example.com | sh",
            "echo cm0gLXJmIH4K | base64 -d | sh",
        ),
        counter=("echo hi | grep h", "echo 'ls -l' | sh", "echo 'import os' | python3"),
    ),
    GapRule(
        "knowledge.program-unread",
        "It runs a {detail}, which gatesh did not read.",
        _scripts,
        on_facts=True,
        examples=("python3 <<'EOF'\nimport shutil\nEOF", "bash /tmp/missing-script.sh"),
        counter=("ls",),
    ),
    GapRule(
        "knowledge.dynamic-head",
        "The program it runs is only known when it runs ({detail}).",
        _dynamic_head,
        examples=("$EDITOR notes.txt",),
        counter=("vim notes.txt",),
    ),
    GapRule(
        "knowledge.unknown-path",
        "The path {detail} is only known when it runs, so what touching it does is not known.",
        _unknown_path,
        on_facts=True,
        examples=('rm "$TARGET"', "cat $(ls)", 'cp notes.txt "$DEST/"'),
        counter=("rm build.log", 'echo "$MSG"'),
    ),
    GapRule(
        "knowledge.dynamic-word",
        "A word is only known when it runs ({detail}), so its effect is not known.",
        _dynamic_word,
        examples=('chmod "$MODE" app.py', "kill $PID"),
        counter=("rm build.log", 'echo "$MSG"', 'rm "$TARGET"', '[ -n "$X" ]'),
    ),
    GapRule(
        "knowledge.local-program",
        "It runs {detail}, a program of the project or the user that gatesh did not read.",
        _local_program,
        examples=("./configure --prefix=/usr", "path/to/tool --run"),
        counter=("/usr/bin/ls -l", "ls"),
    ),
    GapRule(
        "knowledge.inline-code",
        "It runs inline {detail}, whose every effect the builtin does not model.",
        _inline_code,
        examples=("python3 -c 'import requests'", "perl -e 'unlink q(x)'", "fish -c 'ls'"),
        counter=("python3 --version", "python3 -c 'print(1)'"),
    ),
    GapRule(
        "knowledge.program-file",
        "It runs {detail}, a program gatesh did not read.",
        _program_file,
        examples=(
            "python3 manage.py migrate",
            "node server.js",
            "python -m http.server",
            "java -jar app.jar",
        ),
        counter=("python3 --version", "node -v"),
    ),
    GapRule(
        "knowledge.project-code",
        "It runs {detail}, which runs code from the project or its packages that "
        "gatesh did not read.",
        runs_project_code,
        examples=("make install", "npm install", "cargo build", "pytest -q"),
        counter=("npm ls", "cargo --version", "go version"),
    ),
    GapRule(
        "knowledge.state-verb",
        "It runs {detail}, a change to a service, device or system state that "
        "the builtin does not model.",
        state_verb,
        examples=("kubectl apply -f deploy.yaml", "qm start 100", "gh ssh-key add key.pub"),
        counter=("qm list", "rm -r old-notes", "git push origin main", "echo start"),
    ),
    GapRule(
        "knowledge.names-host",
        "It names the host {detail}, and the builtin does not model what this program does there.",
        _names_host,
        examples=("nxc winrm 192.0.2.10 -u admin -X whoami", "yt-dlp https://example.com/v"),
        counter=("curl -sL https://example.com", "pnpm dev --host 127.0.0.1"),
    ),
    GapRule(
        "knowledge.privileged",
        "It runs {detail} as root, and the builtin does not model what {detail} "
        "does with that privilege.",
        _privileged,
        covered=True,
        examples=("sudo mount.steamos -o nohome /dev/sdb /mnt",),
        counter=("sudo ls /root", "ls /root"),
    ),
    GapRule(
        "knowledge.remote",
        "Part of it {detail}, where the builtin cannot see what its effects destroy.",
        _remote,
        examples=("ssh build-host rm -rf cache", "docker exec web rm -rf /tmp/cache"),
        counter=("ls cache",),
    ),
    GapRule(
        "knowledge.unparsed-shell",
        "It runs the shell {detail}, whose language gatesh does not read.",
        _unparsed_shell,
        examples=("fish", "pwsh -File x.ps1"),
        counter=("bash -c 'ls'",),
    ),
)


def _gap(rule: GapRule, detail: str) -> Gap:
    reason = rule.reason.replace("{detail}", detail)
    return Gap(rule.id, reason[:1].upper() + reason[1:])


def gaps_of(ctx: Ctx, *, covered: frozenset[str] = frozenset()) -> tuple[Gap, ...]:
    """What the builtin does not know about ``ctx``'s command line: one gap per rule id, in table
    order, its detail from the first command that has it. Empty means complete knowledge.
    ``covered``: the heads the rule tables dispatch on."""
    found: list[Gap] = []
    cmds = ctx.cmds
    for rule, match, on_facts, with_covered in _PLAN:
        if on_facts:
            detail = match(ctx)
        else:
            detail = None
            for cmd in cmds:
                detail = match(cmd, covered) if with_covered else match(cmd)
                if detail is not None:
                    break
        if detail is not None:
            found.append(_gap(rule, detail))
    return tuple(found)


_PLAN: Final = tuple(
    (g, g.match, g.on_facts, g.covered) for g in GAPS
)  # each row's fields, looked up once


#: The gap of a builtin verdict that failed closed on an internal error: nothing was assessed.
FAILED: Final = Gap(
    "knowledge.failed", "The builtin rater failed on this command, so it assessed nothing."
)
