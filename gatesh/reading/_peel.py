"""Peeling wrappers (sudo, env, timeout, xargs, …) off an argv, driven by the one wrapper table
(:data:`gatesh.vocab.grammar.WRAPPERS`) and read through the one argv parser."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Final

from gatesh._types import Context, Word
from gatesh.vocab.grammar import (
    MODULE_RUNNER,
    SHELL_OPT_ONLY,
    SUBCOMMAND_WRAPPERS,
    WRAPPERS,
    Grammar,
    WrapperSpec,
    module_program,
    read,
)

from ._split import split_words

# Words longer than this are not remembered by ``head_of`` (4,096 such keys at most: a few MiB,
# however long the words an agent sends).
_HEAD_CACHE_WORD: Final = 256


def head_of(text: str) -> str:
    """argv[0]'s head: basename, case-folded, ``.exe`` stripped (``/usr/bin/RM.EXE`` -> ``rm``).

    Asked several times per command; the answer for a short word is remembered (a pure function)."""
    return _cached_head(text) if len(text) <= _HEAD_CACHE_WORD else _head(text)


def _head(text: str) -> str:
    base = text.rstrip("/").rsplit("/", 1)[-1] if "/" in text else text
    if "\\" in base:  # C:\Windows\cmd.exe; a word ending in a backslash (`\`) stays whole
        base = base.rsplit("\\", 1)[-1] or base
    base = base.casefold()
    if base.endswith(".exe"):
        base = base[:-4]
    return base


_cached_head = functools.lru_cache(maxsize=4096)(_head)


def shebang_head(text: str) -> str:
    """The head of the program a ``#!`` line names ("" when none); ``env`` is looked through."""
    if not text.startswith("#!"):
        return ""
    words = text[2:].split("\n", 1)[0].split()
    if not words:
        return ""
    head = head_of(words[0])
    if head == "env":
        rest = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        head = head_of(rest[0]) if rest else ""
    return head


@dataclass
class Peeled:
    """The command inside the wrappers, and what the wrappers told us on the way."""

    argv: list[Word]
    wrappers: list[str] = field(default_factory=list)
    privileged: bool = False
    assignments: list[str] = field(default_factory=list)
    context: Context | None = None  # given to the wrapped command by a wrapper (xargs)
    shell_string: Word | None = None  # a wrapper runs this string with a shell (su -c, watch)
    shell_via: str = ""  # the wrapper that runs shell_string
    placeholders: list[str] = field(default_factory=list)  # words xargs/parallel replace by input
    inputs: list[Word] | None = None  # parallel's `::: a b` inputs (None: none given)
    input_files: bool = False  # parallel reads inputs from files (`::::`): not known here


@dataclass
class _Opts:
    index: int  # where the wrapped command starts
    stopped: bool = False  # an option says no command is run
    shell: Word | None = None  # value of a shell-string option
    split: Word | None = None  # value of a split-string option (env -S)


def _scan(args: list[Word], spec: WrapperSpec, head: str) -> _Opts:
    """Where ``head``'s wrapped command starts in ``args``, read through the grammar: the first
    operand ends the options; an option of ``spec.stop`` means no command runs; a shell-string or
    split-string option's value is handed back."""
    start = 0
    while True:
        rest = args[start:]
        argv = read(
            Grammar(head, options=spec.options), [w.text for w in rest], [w.static for w in rest]
        )
        for o in argv.options:
            if o.name in spec.stop:
                return _Opts(start + o.at, stopped=True)
            if o.name in spec.shell_opt or o.name in spec.split_opt:
                if o.value_at > o.at:
                    value: Word = rest[o.value_at]
                else:
                    value = Word(o.value or "")
                end = start + max(o.at, o.value_at) + 1
                if o.name in spec.shell_opt:
                    return _Opts(end, shell=value)
                return _Opts(end, split=value)
        first = argv.operand_at[0] if argv.operand_at else len(rest)
        if argv.dashdash >= 0 and argv.dashdash < first:
            first = argv.dashdash + 1
        if spec.lone_dash and first < len(rest) and rest[first].static and rest[first].text == "-":
            start += first + 1  # `env -`, `su -`: a lone dash is an option here
            continue
        return _Opts(start + first)


_SU_SHELL_OPT = frozenset({"-c", "--command", "--session-command"})


def _su_shell(args: list[Word], names: frozenset[str] = _SU_SHELL_OPT) -> Word | None:
    """`su [opts] [-] [user] -c STRING`: the -c may come after the user name (getopt permutes,
    so the same holds for `script FILE -c STRING`, `runuser USER -c`, `nix-shell … --run`)."""
    shorts = {n[1] for n in names if len(n) == 2}
    for k, a in enumerate(args):
        if not a.static:
            continue
        if a.text in names and k + 1 < len(args):
            return args[k + 1]
        name, eq, val = a.text.partition("=")
        if eq and name.startswith("--") and name in names:
            return Word(val)
        if (
            a.text.startswith("-")
            and not a.text.startswith("--")
            and a.text[-1] in shorts
            and len(a.text) > 2
            and k + 1 < len(args)
        ):
            return args[k + 1]  # su -lc STRING
    return None


def _argv_after(args: list[Word], names: frozenset[str]) -> list[Word] | None:
    """The words after the first option of ``names`` (`nix develop .#x -c CMD ARGS`)."""
    for k, a in enumerate(args):
        if a.static and a.text in names:
            return args[k + 1 :]
    return None


def _subcommand(head: str, args: list[Word]) -> tuple[WrapperSpec, list[Word]] | None:
    """`uv run CMD`, `bundle exec CMD`: the subcommand's spec and the words after it."""
    table = SUBCOMMAND_WRAPPERS.get(head)
    if table is None:
        return None
    if "" in table:
        return table[""], args
    for k, a in enumerate(args):
        if not a.static:
            return None
        if a.text.startswith("-"):
            continue
        spec = table.get(a.text)
        return (spec, args[k + 1 :]) if spec is not None else None
    return None


def _runs_shell_string(p: Peeled, head: str, string: Word | None, *, privileged: bool) -> Peeled:
    """``p`` once wrapper ``head`` is known to run ``string`` through a shell (``su -c``,
    ``sg GROUP STRING``); unchanged when it runs none."""
    if string is None:
        return p
    p.wrappers.append(head)
    p.privileged = p.privileged or privileged
    p.argv = []
    p.shell_string, p.shell_via = string, f"{head} -c"
    return p


def peel(argv: list[Word]) -> Peeled:
    """Peel every wrapper off ``argv``.

    Guarantees: the result's ``argv`` is the innermost command (possibly empty when the
    wrappers run a shell string, see ``shell_string``); a wrapper that runs no command
    (``sudo -l``, ``command -v x``, bare ``env``) is itself the head.
    """
    p = Peeled(list(argv))
    if argv and argv[0].static:
        first = head_of(argv[0].text)
        if first not in _PEELED_HEADS and not first.startswith(_MODULE_RUNNERS):
            return p  # the loop below would return it at once: no wrapper to peel
    for _ in range(32):  # wrappers nest, but not without bound
        done = _peel_one(p)
        if done is not None:
            return done
    return p


def _peel_one(p: Peeled) -> Peeled | None:
    """Peel the outermost wrapper off ``p.argv`` in place: None when one was peeled (``p.argv``
    is what it runs, maybe another wrapper), else the result (``p``, or ``p`` running a shell
    string): the head is no wrapper, runs no command, or runs a shell or a string."""
    cur = p.argv
    if not cur or not cur[0].static:
        return p
    head = head_of(cur[0].text)
    args = cur[1:]
    spec = WRAPPERS.get(head)
    if spec is None and head.startswith(_MODULE_RUNNERS):
        mod = module_program(head, [w.text for w in args])
        if mod is not None and all(w.static for w in args[: mod[1]]):
            p.wrappers.append(MODULE_RUNNER)  # `python3 -m twine upload …` is twine's argv
            p.argv = [Word(mod[0]), *args[mod[1] :]]
            return None
        return p
    if spec is None:
        sub = _subcommand(head, args)
        if sub is None:
            if head == "sg":
                return _sg(p, args)
            if head == "hyperfine":
                return _hyperfine(p, args)
            if head in _ARGV_FINDERS:
                found = _ARGV_FINDERS[head](args)
                if found is None:
                    return p
                p.wrappers.append(head)
                p.privileged = True  # a system tool, normally run as root
                p.argv = found
                return None
            return p
        spec, args = sub
        if spec.argv_opt:
            found = _argv_after(args, spec.argv_opt)
            if not found:
                return p
            p.wrappers.append(head)
            p.argv = found
            return None
        shell = _su_shell(args, spec.shell_opt) if spec.shell_opt else None
        if shell is not None:
            p.wrappers.append(head)
            p.argv = []
            p.shell_string, p.shell_via = shell, f"{head} shell"
            return p
        if "" in SUBCOMMAND_WRAPPERS[head]:
            return p  # `nix-shell -p x`: no command given, the tool stays the head
    if head == "su" or (
        head == "runuser"
        and not any(
            a.static and (a.text in ("-u", "--user") or a.text.startswith("--user=")) for a in args
        )
    ):
        return _runs_shell_string(p, head, _su_shell(args), privileged=True)
    if head in SHELL_OPT_ONLY:
        return _runs_shell_string(
            p, head, _su_shell(args, spec.shell_opt), privileged=spec.privileged
        )
    return _peel_listed(p, head, args, spec, _scan(args, spec, head))


def _peel_listed(
    p: Peeled, head: str, args: list[Word], spec: WrapperSpec, opts: _Opts
) -> Peeled | None:
    """Peel the wrapper ``head`` of the table (``spec``, its options already scanned into
    ``opts``) off ``p`` as :func:`_peel_one` does: its assignments, placeholders and inputs are
    kept, the command it runs (or the shell string it joins) becomes ``p``'s."""
    if opts.stopped:
        return p
    if opts.shell is not None:
        p.wrappers.append(head)
        p.privileged = p.privileged or spec.privileged
        p.argv = []
        p.shell_string, p.shell_via = opts.shell, f"{head} -c"
        return p
    rest = args[opts.index :]
    if opts.split is not None:
        rest = split_words(opts.split) + rest
    if spec.assignments:
        k = 0
        while k < len(rest) and rest[k].static and _is_assignment(rest[k].text):
            p.assignments.append(rest[k].text)
            k += 1
        rest = rest[k:]
    rest = rest[spec.operands :] if len(rest) > spec.operands else []
    if head == "flock" and rest and rest[0].static and rest[0].text in ("-c", "--command"):
        if len(rest) > 1:
            p.wrappers.append(head)
            p.argv = []
            p.shell_string, p.shell_via = rest[1], "flock -c"
            return p
    if spec.replace_opt:
        p.placeholders.extend(_placeholders(args[: opts.index], spec))
    if spec.end_marker:
        for k, w in enumerate(rest):
            if w.static and w.text.startswith(spec.end_marker):
                p.inputs = [x for x in rest[k:] if not (x.static and x.text.startswith(":::"))]
                p.input_files = any(x.static and x.text.startswith("::::") for x in rest[k:])
                rest = rest[:k]
                break
    if not rest:
        if head == "parallel" and p.inputs:
            # `parallel ::: "cmd1" "cmd2"`: each input is a command line run by a shell.
            p.wrappers.append(head)
            p.context = spec.context
            p.argv = []
            p.shell_string, p.shell_via = Word(""), "parallel"
        return p
    p.wrappers.append(head)
    p.privileged = p.privileged or spec.privileged
    if spec.context is not None:
        p.context = spec.context
    if spec.joins_shell and not (args and args[0].static and args[0].text in ("-x", "--exec")):
        joined = " ".join(w.text for w in rest)
        p.argv = []
        p.shell_string = Word(joined, all(w.static for w in rest))
        p.shell_via = f"{head}"
        return p
    if head == "parallel" and len(rest) == 1 and rest[0].static and " " in rest[0].text:
        p.argv = []
        p.shell_string, p.shell_via = rest[0], "parallel"
        return p
    p.argv = rest
    return None


def _sg(p: Peeled, args: list[Word]) -> Peeled:
    """`sg [-] GROUP [-c] STRING`: /bin/sh runs STRING with GROUP as the group."""
    rest = list(args)
    if rest and rest[0].static and rest[0].text == "-":
        rest = rest[1:]
    if not rest or not rest[0].static or rest[0].text.startswith("-"):
        return p
    rest = rest[1:]
    if rest and rest[0].static and rest[0].text == "-c":
        rest = rest[1:]
    if not rest:
        return p
    p.wrappers.append("sg")
    p.argv = []
    p.shell_string, p.shell_via = rest[0], "sg"
    return p


_HYPERFINE_SHELL: Final = frozenset(
    {"-s", "--setup", "-p", "--prepare", "-c", "--cleanup", "--conclude", "--reference"}
)
_HYPERFINE_WITH_ARG: Final = frozenset(
    {
        "-w",
        "--warmup",
        "-m",
        "--min-runs",
        "-M",
        "--max-runs",
        "-r",
        "--runs",
        "-S",
        "--shell",
        "-n",
        "--command-name",
        "-u",
        "--time-unit",
        "--export-asciidoc",
        "--export-csv",
        "--export-json",
        "--export-markdown",
        "--export-orgmode",
        "--style",
        "--sort",
        "--output",
        "--input",
        "-D",
        "--parameter-step-size",
    }
)


_SSD_EXEC: Final = frozenset({"-x", "--exec"})
_SSD_STARTAS: Final = frozenset({"-a", "--startas"})


def _daemon_argv(args: list[Word]) -> list[Word] | None:
    """`start-stop-daemon … --exec PROG … [-- ARGS]`: the command it starts (--startas, when
    given, is what runs; --exec then only names the process to look for)."""
    found: dict[str, Word] = {}
    rest: list[Word] = []
    for k, a in enumerate(args):
        if not a.static:
            continue
        if a.text == "--":
            rest = args[k + 1 :]
            break
        for kind, names in (("exec", _SSD_EXEC), ("startas", _SSD_STARTAS)):
            if a.text in names and k + 1 < len(args):
                found[kind] = args[k + 1]
            elif any(a.text.startswith(n + "=") for n in names if n.startswith("--")):
                found[kind] = Word(a.text.split("=", 1)[1], True)
    prog = found.get("startas") or found.get("exec")
    return [prog, *rest] if prog is not None else None


# bwrap's options that take more than the one value a plain option has (the rest take none or one).
_BWRAP_ARITY: Final = {
    **dict.fromkeys(
        (
            "--setenv",
            "--bind",
            "--bind-try",
            "--dev-bind",
            "--dev-bind-try",
            "--ro-bind",
            "--ro-bind-try",
            "--file",
            "--bind-data",
            "--ro-bind-data",
            "--symlink",
            "--chmod",
            "--bind-fd",
            "--ro-bind-fd",
        ),
        2,
    ),
    "--overlay": 3,
}
_BWRAP_FLAGS: Final = frozenset(
    {  # bwrap's options that take no value
        "--unshare-all",
        "--share-net",
        "--unshare-user",
        "--unshare-user-try",
        "--unshare-ipc",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-uts",
        "--unshare-cgroup",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--as-pid-1",
        "--clearenv",
        "--disable-userns",
        "--assert-userns-disabled",
        "--level-prefix",
        "--help",
        "--version",
    }
)


def _bwrap_argv(args: list[Word]) -> list[Word] | None:
    """`bwrap [OPTION …] [--] COMMAND …`: options take 0 to 3 values; the first other word
    is the command."""
    k = 0
    while k < len(args):
        a = args[k]
        if not a.static:
            return None
        if a.text == "--":
            return args[k + 1 :] or None
        if not a.text.startswith("--"):
            return args[k:]
        k += 1 + (0 if a.text in _BWRAP_FLAGS else _BWRAP_ARITY.get(a.text, 1))
    return None


def _after_dashdash(args: list[Word]) -> list[Word] | None:
    """The command after `--` (`distrobox-enter NAME -- CMD …`); None without one."""
    for k, a in enumerate(args):
        if a.static and a.text == "--":
            return args[k + 1 :] or None
    return None


# Wrappers whose command is found by a function of their arguments (see each).
_ARGV_FINDERS: Final = {
    "start-stop-daemon": _daemon_argv,
    "bwrap": _bwrap_argv,
    "distrobox-enter": _after_dashdash,
    "distrobox": _after_dashdash,
}


def _hyperfine(p: Peeled, args: list[Word]) -> Peeled:
    """`hyperfine [opts] CMD…`: every operand, and every setup/prepare/cleanup value, is a command
    line run by a shell; they are read as one script, a line each."""
    lines: list[Word] = []
    k = 0
    while k < len(args):
        a = args[k]
        name, eq, val = a.text.partition("=")
        if a.static and name in _HYPERFINE_SHELL:
            if eq:
                lines.append(Word(val))
            elif k + 1 < len(args):
                lines.append(args[k + 1])
            k += 1 if eq else 2
            continue
        if a.static and name in ("-L", "--parameter-list", "-P", "--parameter-scan"):
            k += (3 if name in ("-L", "--parameter-list") else 4) if not eq else 1
            continue
        if a.static and name in _HYPERFINE_WITH_ARG:
            k += 1 if eq else 2
            continue
        if not (a.static and a.text.startswith("-")):
            lines.append(a)
        k += 1
    if not lines:
        return p
    p.wrappers.append("hyperfine")
    p.argv = []
    p.shell_string = Word("\n".join(w.text for w in lines), all(w.static for w in lines))
    p.shell_via = "hyperfine"
    return p


def _placeholders(opts: list[Word], spec: WrapperSpec) -> list[str]:
    """The words the input replaces: ``{}`` always, plus the value of ``-I X``/``--replace=X``."""
    out = ["{}"]
    for k, w in enumerate(opts):
        s = w.text
        for o in spec.replace_opt:
            if s == o and o in spec.with_arg and k + 1 < len(opts):
                out.append(opts[k + 1].text)
            elif s.startswith(o) and len(s) > len(o):
                out.append(s[len(o) :].lstrip("="))
    return [x for x in out if x]


def _is_assignment(s: str) -> bool:
    name, eq, _ = s.partition("=")
    return (
        bool(eq)
        and bool(name)
        and (name[0].isalpha() or name[0] == "_")
        and all(c.isalnum() or c == "_" for c in name)
    )


# Interpreters whose `-m MODULE` may run a program of its own (gatesh.vocab.grammar.MODULE_PROGRAMS).
_MODULE_RUNNERS: Final = ("python", "pypy")

# Every head the loop of ``peel`` does more with than return: the wrappers, the subcommand
# wrappers and the heads with a peeler of their own (keep in step with ``peel``).
_PEELED_HEADS: Final = (
    frozenset(WRAPPERS)
    | frozenset(SUBCOMMAND_WRAPPERS)
    | {"sg", "hyperfine"}
    | frozenset(_ARGV_FINDERS)
)
