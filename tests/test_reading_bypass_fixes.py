"""Regression tests for reader and raw-text bypasses (.notes/bypass_failures.md #1, #2/#14, #3, #12, #13)."""

from __future__ import annotations

import shutil
import subprocess
import time

import pytest

from gatesh._types import Facts, Rung, Stage
from gatesh.config import default
from gatesh.pipeline import decide
from gatesh.policy import hardline
from gatesh.policy.selfprotect import _rules as _sp_rules
from gatesh.reading import read

CONFIG = default()


def _cmds(facts: Facts) -> list[tuple[str, list[str]]]:
    return [(c.head, [w.text for w in c.argv]) for c in facts.commands]


def _refused_hardline(text: str) -> None:
    for rung in (Rung.AUTO, Rung.BYPASS):
        d = decide(text, cwd="/tmp", config=CONFIG, rung=rung)
        assert not d.allowed and d.stage is Stage.HARDLINE, (text, rung, d.stage, d.reason)


# --- #1: newlines inside a double-quoted code string --------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        'bash -c "echo a\nrm -rf ~"',
        'sh -c "ls\nrm -rf /"',
        'eval "ls\nrm -rf \\"\\$HOME\\""',
        'sh -c "if false; then\n:\nelse\nfind / -delete\nfi"',
    ],
)
def test_double_quoted_newlines_are_kept(text: str) -> None:
    facts = read(text)
    assert facts.readable
    assert any(h in ("rm", "find") for h, _ in _cmds(facts)), _cmds(facts)
    _refused_hardline(text)


def test_double_quoted_value_keeps_gaps_and_escapes() -> None:
    facts = read('echo "a\n\n b" "x\\"y" "p\\\nq" "" $"t\nu"')
    assert _cmds(facts)[0][1] == ["echo", "a\n\n b", 'x"y', "pq", "", "t\nu"]
    dyn = read('echo "a\n$X\nb"').commands[0].argv[1]
    assert not dyn.static and dyn.text == '"a\n$X\nb"'


# --- #2/#14: a line starting with a backslash ----------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "x=$( ls\n\\rm -rf ~\n)",
        "sh <<'EOF'\n\\rm -rf ~\nEOF",
        "ls\n\\rm -rf ~",
        "{ ls\n\\rm -rf ~\n}",
        "echo `ls\n\\rm -rf ~`",
        "ls\r\n\\rm -rf ~",
        "ls\n\n\\rm -rf ~",
    ],
)
def test_backslash_at_line_start_starts_a_command(text: str) -> None:
    facts = read(text)
    assert ("rm", ["rm", "-rf", "~"]) in _cmds(facts), _cmds(facts)
    _refused_hardline(text)


def test_backslash_repair_keeps_offsets_and_quotes() -> None:
    facts = read("echo 'a\n\\b'\n\\ls")
    assert _cmds(facts) == [("echo", ["echo", "a\n\\b"]), ("ls", ["ls"])]
    assert not any("disagree" in n for n in facts.notes), facts.notes


# --- #3: positional parameters of sh -c STRING ARG0 ARGS… -----------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "bash -c '\"$@\"' _ rm -rf ~",
        "sh -c 'exec \"$@\"' sh rm -rf ~",
        'bash -c "\\$0 \\$1 \\$2" rm -rf ~',
        "bash -c '$1' _ 'rm -rf ~'",
        "bash -c 'shift 2; \"$@\"' _ a b rm -rf ~",
        "bash -c 'eval \"$@\"' _ rm -rf ~",
        'true && bash -c \'. "$1" && shift && exec "$@"\' bash /root/.codex/shell_snapshots/s.sh rm -rf ~',
        "( bash -c '. \"$1\" && shift && exec \"$@\"' bash /root/.codex/shell_snapshots/s.sh bash -c 'rm -rf ~' )",
    ],
)
def test_positional_args_are_read(text: str) -> None:
    assert "rm" in [h for h, _ in _cmds(read(text))], _cmds(read(text))
    _refused_hardline(text)


def test_positional_args_follow_quoting_and_scope() -> None:
    assert _cmds(read("bash -c 'echo \"$@\"' _ rm -rf ~")) == [("echo", ["echo", "rm", "-rf", "~"])]
    # a function's "$@" is its own; `set --` replaces the parameters: both stay dynamic
    assert "rm" not in [h for h, _ in _cmds(read("bash -c 'f() { \"$@\"; }; f ls' _ rm -rf ~"))]
    assert "rm" not in [h for h, _ in _cmds(read("bash -c 'set -- ls; \"$@\"' _ rm -rf ~"))]
    # xargs appends arguments: "$@" keeps a dynamic tail
    xargs = [c for c in read("echo . | xargs sh -c 'rm \"$@\"' _").commands if c.head == "rm"]
    assert xargs and not xargs[0].argv[-1].static


def test_unread_shell_script_is_not_safe() -> None:
    d = decide(
        'bash -c \'. "$1" && shift && exec "$@"\' bash /nonexistent/evil.sh ls',
        cwd="/tmp",
        config=CONFIG,
        rung=Rung.AUTO,
    )
    assert not d.allowed and d.rule_id == "reader.script-unread", (d.stage, d.rule_id, d.reason)


# --- #12: raw-text regexes are linear ----------------------------------------------------------------

ADVERSARIAL_UNITS = (
    "a",
    "a(",
    ":",
    " ",
    "\n",
    "while ",
    "a(){ a|a",
    "rm ",
    "rm -r ",
    "dd ",
    "chmod -R ",
    "find / ",
    "a=1;",
    "a={ ",
    "(a=1 ",
)


# Growth, not a time limit: the same rules over 128 KiB and over 1 MiB (8x the text), back to back so
# the machine's load touches both alike (the median of three small runs, the best of two big ones, so
# one scheduling hiccup moves neither). Linear matching takes ~8x as long; a quadratic pattern takes
# ~64x, an exponential one never returns. 24x leaves room for noise and catches both.
SMALL, BIG, MAX_GROWTH = 128 * 1024, 1024 * 1024, 24.0


def _search_all(text: str) -> float:
    patterns = [r.pattern for r in hardline.TEXT_RULES] + [_sp_rules._HOOK_ASSIGN_TEXT]
    start = time.perf_counter()
    for p in patterns:
        p.search(text)
    return time.perf_counter() - start


@pytest.mark.slow
@pytest.mark.parametrize("unit", ADVERSARIAL_UNITS)
def test_raw_text_rules_are_linear(unit: str) -> None:
    small = sorted(_search_all("echo " + unit * (SMALL // len(unit))) for _ in range(3))[1]
    big = min(_search_all("echo " + unit * (BIG // len(unit))) for _ in range(2))
    assert big <= MAX_GROWTH * max(small, 0.005), f"{unit!r}: {small:.3f} s -> {big:.3f} s"


def test_fork_bomb_text_rule_still_matches() -> None:
    fb = next(r for r in hardline.TEXT_RULES if r.id == "hardline.fork-bomb").pattern
    for text in (
        ":(){ :|:& };:",
        "bomb(){ bomb|bomb& }; bomb",
        "x; f () { f | f & }",
        "while (1) { fork() }",
    ):
        assert fb.search(text), text
    assert not fb.search("f() { g | h & }")


def test_hook_assign_text_still_matches() -> None:
    p = _sp_rules._HOOK_ASSIGN_TEXT
    for text in (
        "PROMPT_COMMAND=",
        "x=1 PROMPT_COMMAND='true'",
        "{ PROMPT_COMMAND=x; }",
        "(PS0=x)",
        "A={x} PROMPT_COMMAND=evil",
        'A="a b" PROMPT_COMMAND=evil',
        "A=$(a;b) PS0=x",
        "ls\n  preexec_functions+=(x)",
        "precmd_functions[0]=x",
    ):
        assert p.search(text), text
    assert not p.search("echo PROMPT_COMMAND=x")


# --- #13: find -delete on a vital root, in unreadable text ------------------------------------------


def test_unreadable_find_delete_is_hardline() -> None:
    text = "find / -delete; echo '"  # an unclosed quote: neither reader can read it
    assert not read(text).readable
    d = decide(text, cwd="/tmp", config=CONFIG, rung=Rung.BYPASS)
    assert d.stage is Stage.HARDLINE and d.rule_id == "hardline.find-delete-root", (
        d.stage,
        d.rule_id,
    )
    ok = decide("find . -name '*.pyc' -delete; echo '", cwd="/tmp", config=CONFIG, rung=Rung.BYPASS)
    assert ok.stage is not Stage.HARDLINE


# --- substitutions tree-sitter leaves unparsed (gatesh/reading/_subst.py) ---------------------------


@pytest.mark.parametrize(
    "text",
    [
        "cat <<EOF\n`rm -rf ~`\nEOF",  # backquotes in an unquoted heredoc body
        "cat <<-EOF\n\t`rm -rf ~`\n\tEOF",
        "cat <<EOF\n\\\\$(rm -rf ~)\nEOF",  # `\\` is one backslash there; `$(` still runs
        "cat <<EOF\n$'$(rm -rf ~)'\nEOF",  # `$'` means nothing there (tree-sitter errors)
        "x=1; cat <<EOF\n${x#`rm -rf ~`}\nEOF",
        "x=1; echo ${x#$(rm -rf ~)}",  # the pattern of # % ^ , is a `regex` leaf to tree-sitter
        "x=1; echo ${x,,$(rm -rf ~)}",
        "x=1; echo ${x/$'\\x27'$(rm -rf ~)/}",
        "echo $((10#$(rm -rf ~)))",  # a substitution inside a `number` node
    ],
)
def test_unparsed_substitutions_are_read(text: str) -> None:
    facts = read(text)
    assert ("rm", ["rm", "-rf", "~"]) in _cmds(facts), _cmds(facts)
    _refused_hardline(text)


def test_quoted_heredoc_body_runs_nothing() -> None:
    for text in (
        "cat <<'EOF'\n`rm -rf ~` $(rm -rf ~)\nEOF",
        "cat <<\\EOF\n`rm -rf ~`\nEOF",
        "cat <<EOF\n\\`rm -rf ~\\` \\$(rm -rf ~)\nEOF",
    ):
        assert [h for h, _ in _cmds(read(text))] == ["cat"], text


def test_substitution_scanner() -> None:
    from gatesh.reading._subst import substitutions

    found = [
        inner
        for _, _, inner in substitutions(
            b"a `x \\` y` \\$(no) $((1 + $(z))) $((p) ) $(echo ')' # )\n) q"
        )
    ]
    assert found == ["x ` y", "z", "(p) ", "echo ')' # )\n"]


# --- brace expansion (gatesh/reading/_braces.py) ---------------------------------------------------

BRACES = [  # (word, the words bash makes of it), checked against bash below
    ("{a,b}", ["a", "b"]),
    ("x{a,{b,c}}y", ["xay", "xby", "xcy"]),
    ("{a{b,c}", ["{ab", "{ac"]),
    ("{x}{a,b}", ["{x}a", "{x}b"]),
    ("'{a,b}'", ["{a,b}"]),
    ("\\{a,b}", ["{a,b}"]),
    ('"x"{a,b}', ["xa", "xb"]),
    ("{'a,b',c}", ["a,b", "c"]),
    ("{1..3}", ["1", "2", "3"]),
    ("{01..3}", ["01", "02", "03"]),
    ("{a..e..2}", ["a", "c", "e"]),
    ("{a,}", ["a"]),
    ("/{,}", ["/", "/"]),
    ("{a..1}", ["{a..1}"]),
    ("{}", ["{}"]),
    ("{a\\,b,c}", ["a,b", "c"]),
]


@pytest.mark.skipif(not shutil.which("bash"), reason="needs bash")
@pytest.mark.parametrize(("word", "words"), BRACES)
def test_braces_as_bash_expands_them(word: str, words: list[str]) -> None:
    out = subprocess.run(
        ["bash", "-c", f"printf '<%s>' {word}"], capture_output=True, text=True, timeout=10
    ).stdout
    assert out == "".join(f"<{w}>" for w in words)
    assert _cmds(read(f"printf '<%s>' {word}"))[0][1][2:] == words


@pytest.mark.parametrize(
    "text",
    [
        "rm -rf {/,/tmp/x}",
        "{rm,-rf,~}",
        "r{m,} -rf ~",
        "{r,}m -rf ~",
        "rm -rf {x,$HOME}",
        "chmod -R 777 {/,x}",
        "kill -9 {-1,-1}",
        "dd if=/dev/zero {of=/dev/sda,bs=1}",
        "rm -rf /{e,}tc",
    ],
)
def test_brace_expansion_is_read(text: str) -> None:
    _refused_hardline(text)


def test_brace_expansion_limits() -> None:
    words = _cmds(read("echo {1..5000}"))[0][1]
    assert len(words) == 2 and not read("echo {1..5000}").commands[0].argv[1].static
    assert _cmds(read("echo x >{a,b}"))[0][1] == ["echo", "x"]  # a target is not expanded
    assert _cmds(read("a={x,y} env"))[0][1] == ["env"]


# --- ssh: options after the host, loopback spellings ------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "host", "rest"),
    [
        ("ssh host -- rm -rf ~", "host", ["rm", "-rf", "~"]),
        ("ssh host -p 22 -o A=b rm", "host", ["rm"]),
        ("ssh -tp 22 host ls -la", "host", ["ls", "-la"]),
        ("ssh -- host -- rm", "host", ["--", "rm"]),  # `--` before the host ends ssh's options
        ("ssh host", "host", []),
    ],
)
def test_ssh_split_reads_options_after_the_host(argv: str, host: str, rest: list[str]) -> None:
    from gatesh._types import Word
    from gatesh.reading._hosts import ssh_split

    h, r = ssh_split(tuple(Word(w) for w in argv.split()))
    assert h is not None and h.text == host and [w.text for w in r] == rest


@pytest.mark.parametrize(
    "text",
    [
        "ssh localhost -t",
        "ssh localhost -p 22",
        "ssh localhost exec bash",
        "ssh localhost 'bash -i'",
        "ssh ::ffff:127.0.0.1",
        "ssh 0x7f000001",
        "ssh localhost. /usr/bin/env bash",
    ],
)
def test_ssh_loopback_spellings_are_escapes(text: str) -> None:
    d = decide(text, cwd="/tmp", config=CONFIG, rung=Rung.AUTO)
    assert not d.allowed, (text, d.stage, d.reason)
    assert d.rule_id == "escape.ssh-loopback" or "ssh" in (d.reason or ""), (text, d.rule_id)


@pytest.mark.parametrize("text", ["0{\\\x80", "a{\\é,b}", "{x,y}\\ü"])
def test_brace_expansion_of_an_escaped_multibyte_character_reads(text: str) -> None:
    facts = read(text)
    assert "internal reader error" not in facts.unreadable, facts.unreadable
