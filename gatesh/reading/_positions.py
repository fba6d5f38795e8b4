"""Command-valued positions and variables (S2.1): the payload is read and judged as a command.

``trap 'git clean -fdx' INT`` runs its string later; ``git -c core.pager='sh -c …' log``,
``man -P CMD``, ``kubectl exec pod -- CMD``, ``PAGER=CMD man ls`` run theirs now. The rows are the
vocabulary's (``POSITION_ROWS`` and ``GIT_KEY_ROWS`` of :mod:`gatesh.vocab.programs.positions`,
``ENV_ROWS`` of :mod:`gatesh.vocab.programs.variables`); this module finds the payload in an
argv and hands it to the reader: a shell command line is read as ``sh -c``, an argv is finalized
as a command, a payload that runs in a container or on another host is read as running there. A
payload only known when it runs is opaque code.

:class:`PositionReading` is a part of the reader: it takes the reading's
:class:`~._state.ReadState`.
"""

from __future__ import annotations

import os
import posixpath
import re
import shlex
from collections.abc import Sequence
from dataclasses import replace
from typing import Final

from gatesh._types import Code, CodeSource, Context, SimpleCommand, Word
from gatesh.vocab.grammar import Argv, Opt, grammar_of, parse
from gatesh.vocab.programs.positions import Payload, Position, Where, git_key, positions
from gatesh.vocab.programs.variables import EnvKind, env_var

from ._state import Again, Inherit, ReadState
from ._walk import RawCommand

# `git config` modes in which no value follows the key (it reads, removes or edits instead):
# its options that say so, and the subcommand words of the newer spelling.
_GIT_CONFIG_NO_VALUE: Final = frozenset(
    {
        "--unset",
        "--unset-all",
        "--get",
        "--get-all",
        "--get-regexp",
        "-l",
        "--list",
        "--remove-section",
        "--rename-section",
        "-e",
        "--edit",
        "--get-urlmatch",
        "--get-color",
        "--get-colorbool",
    }
)
_GIT_CONFIG_NO_VALUE_VERBS: Final = frozenset(
    {"unset", "get", "list", "edit", "remove-section", "rename-section"}
)
# ssh -o keys whose value runs on this machine.
_SSH_LOCAL_COMMAND: Final = re.compile(
    r"(?i)^(?:proxycommand|localcommand|knownhostscommand)\s*[= ]\s*(.+)$", re.S
)
# The parts of an ex command line that run a shell command: `!CMD` (`:!`, `silent !`, `r !`,
# `w !`, a range before it) runs the rest of the line; `system('CMD')` and `systemlist()` run CMD.
_EX_BANG: Final = re.compile(
    r"^[\s:]*(?:silent!?\s*|exe(?:cute)?\s+['\"]?)?(?:[\d.,$%]*\s*)?(?:r(?:ead)?|w(?:rite)?)?"
    r"\s*!(?!=)(.*)$",
    re.S,
)
_EX_SYSTEM: Final = re.compile(r"\bsystem(?:list)?\s*\(\s*(['\"])(.*?)(?<!\\)\1", re.S)


_HOME_SOURCE: Final = re.compile(r"^(?:~|\$HOME|\$\{HOME\})(?=/|$)")
_CWD_SOURCE: Final = re.compile(r"^(?:\.|\$PWD|\$\{PWD\}|\$\(pwd\)|`pwd`)(?=/|$)")


def _mounts(cmd: SimpleCommand, cwd: str | None, home: str) -> list[tuple[str, str]]:
    """(container folder, host folder) of each bind mount of a ``docker run`` (``-v SRC:DST``,
    ``--mount type=bind,source=SRC,target=DST``), the host side with ``~``, ``$HOME``, ``$PWD``
    and ``.`` put in; mounts whose host side is only known when it runs are left out."""
    args = list(cmd.argv[1:])
    argv = parse(cmd.head, [w.text for w in args], [w.static for w in args])
    out: list[tuple[str, str]] = []
    for o in argv.opts("-v", "--volume", "--mount"):
        value = (o.value or "").replace('"', "").replace("'", "")
        if o.name == "--mount":
            kv = dict(p.split("=", 1) for p in value.split(",") if "=" in p)
            src = kv.get("source", kv.get("src", ""))
            dst = kv.get("target", kv.get("destination", kv.get("dst", "")))
        else:
            parts = value.split(":")
            if len(parts) < 2:
                continue
            src, dst = parts[0], parts[1]
        src = _HOME_SOURCE.sub(home, src, count=1)
        if cwd:
            src = _CWD_SOURCE.sub(cwd, src, count=1)
        if not src.startswith("/") or not dst.startswith("/") or "$" in src or "`" in src:
            continue
        out.append((posixpath.normpath(dst), posixpath.normpath(src)))
    return sorted(out, key=lambda m: -len(m[0]))


def mounted_twin(
    cmd: SimpleCommand, words: list[Word], cwd: str | None, home: str = ""
) -> list[Word]:
    """The container command ``words`` as it acts on this machine's files: its paths under a bind
    mount written as the host paths (``docker run -v "$HOME":/h alpine rm -rf /h/.ssh`` is ``rm
    -rf ~/.ssh`` here); other absolute paths, which stay inside the container, left out. Empty
    when no word lies under a mount."""
    mounts = _mounts(cmd, cwd, home or os.path.expanduser("~"))
    if not mounts or not words:
        return []
    out: list[Word] = [words[0]]
    mapped = False
    for w in words[1:]:
        text = w.text
        if not w.static or not text.startswith("/"):
            out.append(w)
            continue
        norm = posixpath.normpath(text)
        for dst, src in mounts:
            if norm == dst or norm.startswith(dst.rstrip("/") + "/"):
                out.append(Word(src + norm[len(dst.rstrip("/")) :] if dst != "/" else src + norm))
                mapped = True
                break
    return out if mapped else []


def ex_commands(text: str) -> list[str]:
    """The shell command lines an ex command line (``vim -c X``, ``+X``) runs."""
    out: list[str] = []
    for part in text.split("\n"):
        m = _EX_BANG.match(part)
        if m and m.group(1).strip():
            out.append(m.group(1))
        out.extend(m2.group(2) for m2 in _EX_SYSTEM.finditer(part))
    return out


# tmux key names: Enter and its kin end a typed line; the others are keys, not text (C-c, Up, F5).
_TMUX_ENTER: Final = frozenset({"Enter", "C-m", "C-j", "KPEnter", "^M", "^J"})
_TMUX_KEY: Final = re.compile(
    r"^(?:[CMS]-.+|\^.|Escape|Tab|BTab|BSpace|Space|Up|Down|Left|Right|Home|End|IC|DC|Insert|"
    r"Delete|PageUp|PageDown|PgUp|PgDn|PPage|NPage|F\d{1,2}|KP\w+)$"
)


def typed_lines(words: Sequence[Word], args: Sequence[Word]) -> list[str]:
    """The command lines ``tmux send-keys`` types (its ``words`` after the options; ``args`` its
    whole argv, for ``-l``): a line ended by Enter runs in the pane's shell, and so may one left
    unended (a later Enter runs it), so both are read. Key names are keys, not text."""
    literal = any(w.static and w.text.startswith("-") and "l" in w.text[1:] for w in args[:3])
    lines: list[str] = []
    cur = ""
    for w in words:
        t = w.text
        if not literal and t in _TMUX_ENTER:
            lines.append(cur)
            cur = ""
        elif not literal and t == "Space":
            cur += " "
        elif not literal and _TMUX_KEY.match(t):
            continue
        else:
            cur += t
    lines.append(cur)
    return [line for line in lines if line.strip()]


class PositionReading:
    """Finding and reading payloads (a part of the reader)."""

    def __init__(self, st: ReadState, again: Again) -> None:
        self.st = st
        self.again = again

    def read_positions(
        self, cmd: SimpleCommand, raw: RawCommand, index: int, depth: int, inherit: Inherit
    ) -> list[int]:
        """Read every payload of ``cmd``'s command-valued positions."""
        out: list[int] = []
        for row in positions(cmd.head):
            for payload in _payloads(row, list(cmd.argv[1:]), cmd.head):
                out.extend(self._run_payload(row, payload, cmd, raw, index, depth, inherit))
        return out

    def _run_payload(
        self,
        row: Position,
        words: list[Word],
        cmd: SimpleCommand,
        raw: RawCommand,
        index: int,
        depth: int,
        inherit: Inherit,
    ) -> list[int]:
        if not words:
            return []
        if row.payload is Payload.GIT_CONFIG:
            return self._git_setting(row, words, cmd, raw, index, depth, inherit)
        if not all(w.static for w in words):
            self._opaque(
                index,
                cmd.head,
                f"{row.reason}, and this one is only known when it runs "
                f"({' '.join(w.text for w in words)[:60]})",
            )
            return []
        where = inherit
        context = Context.SH_C
        if row.where is not Where.HERE:
            where = replace(inherit, remote=True, privileged=False)
            context = Context.CONTAINER if row.where is Where.CONTAINER else Context.REMOTE
        if not row.id.startswith("tmux-"):
            # (a pane's command line or typed lines are read whole: nothing to note for tmux)
            self.st.note(f"{row.id}: {row.reason}")
        if row.id == "entr-shell" and any(w.static and w.text == "-s" for w in cmd.argv[1:]):
            return self.again.read_text(
                " ".join(w.text for w in words), context, depth + 1, where
            )  # entr -s CMD
        if row.payload is Payload.ARGV:
            sub = RawCommand(list(words), context, raw.frame, raw.start, raw.raw)
            out = self.again.finalize(sub, depth + 1, where)[0]
            if row.id == "docker-run":
                twin = mounted_twin(cmd, words, self.st.cwd, self.st.home or "")
                if twin:  # what the container does to this machine's files it was given
                    self.st.note("docker-run: the container's paths under its mounts are read here")
                    here = RawCommand(twin, context, raw.frame, raw.start, raw.raw)
                    out.extend(self.again.finalize(here, depth + 1, inherit)[0])
            return out
        text = " ".join(w.text for w in words)
        if row.payload is Payload.KEYS:
            # keystrokes may go to any program in the pane (an editor, a REPL): a line no shell
            # reader can parse is a note, not an unreadable command
            return [
                i
                for line in typed_lines(words, cmd.argv[1:])
                for i in self.again.read_text(line, context, depth + 1, where, tolerant=True)
            ]
        if row.payload is Payload.EX:
            return [
                i
                for line in ex_commands(text)
                for i in self.again.read_text(line, context, depth + 1, where)
            ]
        if row.id == "ssh-proxy-command":
            m = _SSH_LOCAL_COMMAND.match(text)
            if m is None:
                return []
            text = m.group(1)
        if row.id == "npm-pkg-set-script":
            return [i for w in words for i in self._npm_script(w.text, depth, where)]
        return self.again.read_text(text, context, depth + 1, where)

    def _npm_script(self, setting: str, depth: int, inherit: Inherit) -> list[int]:
        key, eq, value = setting.partition("=")
        if not eq or not key.startswith("scripts."):
            return []
        return self.again.read_text(value, Context.SH_C, depth + 1, inherit)

    def _git_setting(
        self,
        row: Position,
        words: list[Word],
        cmd: SimpleCommand,
        raw: RawCommand,
        index: int,
        depth: int,
        inherit: Inherit,
    ) -> list[int]:
        """``KEY=VALUE`` (git -c) or ``KEY VALUE`` (git config): the value, when git runs it."""
        if len(words) == 1:
            key, eq, value = words[0].text.partition("=")
            static = words[0].static
            if not eq:
                return []
        else:
            if not words[0].static:
                return []
            key, value, static = words[0].text, words[1].text, words[1].static
        setting = git_key(key)
        if setting is None or value.casefold() in setting.ignore:
            return []
        if not static:
            self._opaque(
                index, "git", f"git runs the setting {key}, only known when it runs ({value[:60]})"
            )
            return []
        self.st.note(f"{row.id}: {setting.reason} ({key})")
        if value.startswith("!"):
            return self.again.read_text(value[1:], Context.SH_C, depth + 1, inherit)
        try:
            parts = shlex.split(value)
        except ValueError:
            parts = value.split()
        if setting.git_subcommand:
            sub = RawCommand(
                [Word("git"), *(Word(p) for p in parts)],
                Context.SH_C,
                raw.frame,
                raw.start,
                raw.raw,
            )
            return self.again.finalize(sub, depth + 1, inherit)[0]
        if setting.program_prefix and parts and "/" not in parts[0]:
            return self.again.read_text(
                setting.program_prefix + value, Context.SH_C, depth + 1, inherit
            )
        return self.again.read_text(value, Context.SH_C, depth + 1, inherit)

    def _opaque(self, index: int, language: str, why: str) -> None:
        self.st.code.append(Code(index, language, CodeSource.SETTING, opaque=why))
        self.st.note(f"opaque code: {why}")

    # --- variables --------------------------------------------------------------------------

    def env_commands(
        self, assignments: tuple[str, ...] | list[str], depth: int, inherit: Inherit
    ) -> tuple[list[int], list[str]]:
        """What an environment makes its programs run: a command variable's value is read as a
        command, a sourced-file variable's file as a script. Returns the commands read and, for
        variables that make a program load code gatesh cannot see, why (an opaque fact each)."""
        out: list[int] = []
        opaque: list[str] = []
        for a in assignments:
            name, eq, value = a.partition("=")
            row = env_var(name) if eq and value else None
            if row is None:
                continue
            try:
                parts = shlex.split(value)
                value = parts[0] if len(parts) == 1 else value
            except ValueError:
                pass
            if row.kind is EnvKind.LOADS:
                if re.search(row.loads, value):
                    opaque.append(f"{name}={value[:60]}: {row.reason}")
                continue
            if row.kind is EnvKind.LIBRARY:
                opaque.append(f"{name}={value[:60]}: {row.reason}")
                continue
            if "$" in value or "`" in value:
                self.st.note(f"{name} runs a dynamic command: {value[:80]!r}")
                if row.kind is EnvKind.COMMAND:
                    opaque.append(f"{name} names a command only known when it runs ({value[:60]})")
                continue
            if row.kind is EnvKind.SOURCED:
                out.extend(self.again.script(Word(value), "sh", depth, inherit))
            elif row.kind is EnvKind.COMMAND:
                self.st.note(f"{name} runs a command: {value[:80]!r}")
                out.extend(self.again.read_text(value, Context.SH_C, depth + 1, inherit))
        return out, opaque


def _payloads(row: Position, args: list[Word], head: str) -> list[list[Word]]:
    """The payloads of ``row`` in ``args`` (argv[1:] of program ``head``), each as its words."""
    if grammar_of(head) is not None:
        argv = parse(head, [w.text for w in args], [w.static for w in args])
        return _grammar_payloads(row, args, argv)
    out: list[list[Word]] = []
    with_arg = row.with_arg
    if row.options:
        stop = _subcommand_end(row, args, with_arg) if row.subcommand else None
        if row.subcommand and stop is None:
            return []
        start = stop if stop is not None else 0
        out.extend(_option_values(row.options, args, start, len(args)))
        if row.id == "ssh-proxy-command":  # only -o keys whose value runs a command
            out = [
                v
                for v in out
                if _SSH_LOCAL_COMMAND.match(v[0].text.replace('"', "").replace("'", ""))
            ]
        if row.id == "ansible-args" and not _ansible_runs_command(args):
            return []
        return out
    stop = _subcommand_end(row, args, with_arg)
    if stop is None:
        return []
    rest = args[stop:]
    if row.operand is not None:
        operands = [w for w in rest if not (w.static and w.text.startswith("-") and w.text != "-")]
        if row.id == "trap":
            operands = [w for w in rest if not (w.static and w.text in ("--",))]
            if rest and rest[0].static and rest[0].text.startswith("-") and rest[0].text != "-":
                return []  # trap -p / -l: only prints
        if len(operands) >= max(row.min_operands, row.operand + 1):
            w = operands[row.operand]
            if not (w.static and w.text in ("", "-")):
                out.append([w])
        return out
    if row.after_dashdash:
        k = next((i for i, w in enumerate(rest) if w.static and w.text == "--"), None)
        if k is not None:
            return [rest[k + 1 :]]
    k, skipped = 0, 0
    while k < len(rest):
        w = rest[k]
        if w.static and w.text == "--":
            k += 1
            break
        if w.static and w.text.startswith("-") and w.text != "-":
            k += 2 if (w.text in with_arg and "=" not in w.text) else 1
            continue
        if skipped < row.skip:
            skipped += 1
            k += 1
            continue
        break
    if skipped < row.skip:
        return []
    return [rest[k:]] if k < len(rest) else []


# Ansible modules whose -a arguments are a command line (the default module is `command`).
_ANSIBLE_COMMAND_MODULES: Final = frozenset(
    {
        "command",
        "shell",
        "raw",
        "script",
        "ansible.builtin.command",
        "ansible.builtin.shell",
        "ansible.builtin.raw",
        "ansible.builtin.script",
    }
)


def _ansible_runs_command(args: list[Word]) -> bool:
    for k, w in enumerate(args):
        name, eq, val = w.text.partition("=")
        if name in ("-m", "--module-name"):
            module = val if eq else (args[k + 1].text if k + 1 < len(args) else "")
            return module in _ANSIBLE_COMMAND_MODULES
        if w.text.startswith("-m") and len(w.text) > 2 and not w.text.startswith("--"):
            return w.text[2:] in _ANSIBLE_COMMAND_MODULES
    return True


def _subcommand_end(row: Position, args: list[Word], with_arg: frozenset[str]) -> int | None:
    """The index after ``row``'s subcommand words in ``args`` (options before them skipped),
    or None when the subcommand is not there."""
    k, want = 0, list(row.subcommand)
    while want:
        if k >= len(args) or not args[k].static:
            return None
        t = args[k].text
        if t.startswith("-"):
            k += 2 if (t in with_arg and "=" not in t) else 1
            continue
        if t != want[0]:
            return None
        want.pop(0)
        k += 1
    return k


def _value_word(args: list[Word], o: Opt) -> Word:
    """The word holding option ``o``'s value (a part of the option's own word when attached)."""
    if o.value_at > o.at:
        return args[o.value_at]
    return Word(o.value or "", args[o.at].static)


def _grammar_payloads(row: Position, args: list[Word], argv: Argv) -> list[list[Word]]:
    """The payloads of ``row`` in ``args``, read through the program's grammar (``argv``)."""
    depth = len(row.subcommand)
    if argv.path[:depth] != row.subcommand:
        return []
    if row.options:
        level = 0 if row.id == "git-config-command" else depth
        out = [
            [_value_word(args, o)]
            for o in argv.opts(*row.options, level=level)
            if o.value is not None
        ]
        if "+" in row.options:  # vim's `+CMD` operands
            out.extend(
                [Word(args[k].text[1:], True)]
                for k in argv.operand_at
                if args[k].static and args[k].text.startswith("+") and len(args[k].text) > 1
            )
        if row.id == "ssh-proxy-command":  # only -o keys whose value runs a command
            out = [
                v
                for v in out
                if _SSH_LOCAL_COMMAND.match(v[0].text.replace('"', "").replace("'", ""))
            ]
        return out
    start = argv.path_at[depth - 1] + 1 if depth else 0
    ops = [k for k in argv.operand_at if k >= start]
    if row.operand is not None:
        if len(ops) < max(row.min_operands, row.operand + 1):
            return []
        w = args[ops[row.operand]]
        return [] if (w.static and w.text in ("", "-")) else [[w]]
    if row.id == "git-config-set":
        if argv.sub(1) in _GIT_CONFIG_NO_VALUE_VERBS or argv.has(*_GIT_CONFIG_NO_VALUE):
            return []
        return [[args[k] for k in ops[:2]]] if len(ops) >= 2 else []
    if row.after_dashdash and argv.dashdash >= start:
        rest = args[argv.dashdash + 1 :]
        return [rest] if rest else []
    return [args[ops[row.skip] :]] if len(ops) > row.skip else []


def _option_values(
    names: frozenset[str], args: list[Word], start: int, limit: int
) -> list[list[Word]]:
    out: list[list[Word]] = []
    k, limit = start, min(limit, len(args))
    while k < limit:
        w = args[k]
        t = w.text
        if not w.static:
            k += 1
            continue
        name, eq, val = t.partition("=")
        if t in names and k + 1 < len(args):
            out.append([args[k + 1]])
            k += 2
            continue
        if eq and name in names and name.startswith("--"):
            out.append([Word(val, True)])
        elif "+" in names and t.startswith("+") and len(t) > 1:
            out.append([Word(t[1:], True)])
        elif not t.startswith("--"):
            for n in names:
                if len(n) == 2 and n[0] == "-" and t.startswith(n) and len(t) > 2:
                    out.append([Word(t[2:], True)])
                    break
        k += 1
    return out
