"""What fuzzing found in the reader (issue 21), each fixed at its mechanism and pinned here.

- bashlex looped forever on ``${`` with no ``}`` inside a word it expands (``$'…${…'``): one
  56-character line held the daemon for minutes. The second reader now reports a parse error.
- tree-sitter-bash continued the last command of a long pipeline onto the next line when that
  line has a redirection: a ``bash <<'EOF'`` heredoc after such a line was never read.
- A string that starts like the Codex shim but goes on with ``;``, ``&&``, a newline or an
  expansion was split by ``shlex`` into words, so the commands after the shim were never read.
- Raw-text rules for unreadable text missed a head split by nested quoting (``r'"'"''m``).
- Brace expansion of a word with an unclosed ``"`` before a multi-byte character raised
  ``UnicodeDecodeError`` (an internal reader error).
- ``git -c`` as the last words of a command (its value missing) made the command-valued positions
  look past the end of the arguments (``IndexError``, an internal reader error).
- After a tree-sitter parse error the union with bashlex matched commands by name alone: a
  ``find / -delete`` tree-sitter lost was taken for an earlier ``find`` it had read, so the
  hardline command was allowed at every rung (the 1,000,000-case run found it once). Names are
  counted now.
- A bare ``eval`` (no arguments) raised ``UnboundLocalError`` (an internal reader error).
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from gatesh._types import Rung, Stage
from gatesh.config import default
from gatesh.pipeline import decide
from gatesh.reading import read
from gatesh.reading._second import read_second

CONFIG = default()
# A reading takes well under 10 ms; a loop is caught long before this.
WATCHDOG_S = 10.0


class _Hung(Exception):
    pass


@contextlib.contextmanager
def _watchdog(seconds: float) -> Iterator[None]:
    """Raise in this (main) thread after ``seconds``: bashlex is pure Python, so a loop in it
    is interrupted, and the test fails instead of hanging."""

    def fire(signum: int, frame: object) -> None:
        raise _Hung(f"no answer within {seconds:g} s")

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


# --- the reader's slow path: an unclosed ${ in a word bashlex expands --------------------------

FULLWIDTH = [chr(c) for c in range(0xFF21, 0xFF3B)] + [chr(c) for c in range(0xFF41, 0xFF5B)]
# The class the fuzzer found: fullwidth letters, quotes, `${`, a tab and a newline.
HANG_CLASS = st.lists(
    st.sampled_from([*FULLWIDTH, "'", '"', "$'", "${", "\t", "\n", " ", "x", "}"]),
    min_size=1,
    max_size=40,
).map("".join)


@pytest.mark.parametrize(
    "text",
    [
        "$'${'",
        "a $'\\t${'",
        "echo $'ＡＢ${Ｃ\\t\"q\"'\nls",
        "ｘ=$'\"${ｙ\t'\nｚ 'ｗ' \"${ｖ}\"\t$'Ｕ${Ｔ'",
    ],
)
def test_unclosed_brace_in_ansi_c_string_is_a_bashlex_error_not_a_loop(text: str) -> None:
    with _watchdog(WATCHDOG_S):
        second, why = read_second(text)
        facts = read(text, cwd="/tmp")
    assert second is None and "no closing" in why
    assert not facts.unreadable.startswith(("too slow", "unreadable: internal")), facts.unreadable


# No shrinking: a hang costs the watchdog's time per try, and the first example found is enough.
@settings(
    max_examples=300,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
    phases=[Phase.explicit, Phase.generate],
)
@given(HANG_CLASS, HANG_CLASS)
def test_the_hang_class_always_returns(before: str, inside: str) -> None:
    text = (before + "$'" + inside + "${" + inside + "'\n" + before)[:56]
    with _watchdog(WATCHDOG_S):
        facts = read(text, cwd="/tmp")
    assert "internal reader error" not in facts.unreadable


# --- tree-sitter gluing two lines into one command --------------------------------------------

HEREDOC = "bash <<'EOF'\n{core}\nEOF\n"


@pytest.mark.parametrize(
    "before",
    [
        "tee $((1+2)) -rf /tmp/x é |& time ${#A[@]} |& find",  # found by the fuzzer
        "ls \\; | grep é | wc -l",
        "a | b | c",
        "a | b | c # a comment",
        "a | b | export c",
        "a | b | c\n\n  ",
    ],
)
@pytest.mark.parametrize("core", ["find ~ -exec rm -rf {} +", "command rm -rf ~"])
def test_heredoc_after_a_long_pipeline_is_read(before: str, core: str, tmp_path: Path) -> None:
    text = before + "\n" + HEREDOC.format(core=core)
    facts = read(text, cwd=str(tmp_path))
    assert "rm" in [c.head for c in facts.commands if c.depth >= 1], facts.commands
    for rung in (Rung.AUTO, Rung.BYPASS):
        d = decide(text, cwd=str(tmp_path), config=CONFIG, rung=rung)
        assert d.stage is Stage.HARDLINE, (rung, d.stage, d.reason)


def test_glued_lines_keep_their_words_and_offsets() -> None:
    text = "a | b | c x\nd y > f\n"
    facts = read(text, cwd="/tmp")
    assert [tuple(w.text for w in c.argv) for c in facts.commands] == [
        ("a",),
        ("b",),
        ("c", "x"),
        ("d", "y"),
    ]
    assert [c.raw for c in facts.commands][2:] == ["c x", "d y > f"]
    assert not any("tree-sitter read with errors" in n for n in facts.notes)


def test_a_line_continuation_is_not_a_line_break() -> None:
    text = "a | b | c \\\n x <<EOF\nbody\nEOF\n"
    facts = read(text, cwd="/tmp")
    assert ("c", "x") in [tuple(w.text for w in c.argv) for c in facts.commands]


# --- Codex-looking strings with more after them -------------------------------------------------

SHIM = 'bash -c \'. "$1" && shift && exec "$@"\' bash /root/.codex/shell_snapshots/s.sh '


@pytest.mark.parametrize(
    "tail",
    [
        "ls; rm -rf ~",
        "ls && rm -rf ~",
        "ls\nrm -rf ~",
        "ls | sh <<< 'rm -rf ~'",
        "echo $(rm -rf ~)",
        "bash -c ls\nbash <<'EOF'\nrm -rf ~\nEOF\n",
    ],
)
def test_codex_shim_followed_by_more_is_gated_whole(tail: str, tmp_path: Path) -> None:
    for rung in (Rung.AUTO, Rung.BYPASS):
        d = decide(SHIM + tail, cwd=str(tmp_path), config=CONFIG, rung=rung)
        assert d.stage is Stage.HARDLINE, (rung, d.stage, d.reason)


def test_codex_shim_string_still_unwraps() -> None:
    from gatesh.reading.harness import unwrap

    assert unwrap(SHIM + "bash -c 'ls -la'") == ("codex", "ls -la")
    assert unwrap(SHIM + "git status --short") == ("codex", "git status --short")
    assert unwrap(SHIM + "bash -c 'echo '\"'\"'hi'\"'\"''") == ("codex", "echo 'hi'")


# --- raw text of unreadable commands: quoting that splits a word -------------------------------


def _nested_codex(core: str, levels: int) -> str:
    import shlex

    text = core
    for _ in range(levels):
        text = SHIM + "bash -c " + shlex.quote(text)
    return text


@pytest.mark.parametrize("core", ["r''m -rf ~", 'r"m" -rf /', "$'\\x72\\x6d' -rf ~"])
def test_too_deep_text_is_matched_with_quotes_removed(core: str, tmp_path: Path) -> None:
    text = _nested_codex(core, 5)
    d = decide(text, cwd=str(tmp_path), config=CONFIG, rung=Rung.BYPASS)
    assert not d.facts.readable and d.facts.unreadable.startswith("too deep")
    assert d.stage is Stage.HARDLINE, d.reason


def test_quote_removal_does_not_make_ordinary_text_hardline(tmp_path: Path) -> None:
    d = decide(
        _nested_codex("r''m -rf ./build", 5), cwd=str(tmp_path), config=CONFIG, rung=Rung.BYPASS
    )
    assert d.stage is not Stage.HARDLINE


# --- brace expansion next to an unclosed quote and a multi-byte character -----------------------


@pytest.mark.parametrize(
    "text", ['""\u0301\u0301-)"{a,b}é', 'Ａ🎉~\u0301Ａ{a,b},"é', '.é\\\nß{a,b}-"\né']
)
def test_unclosed_quote_before_multibyte_is_no_internal_error(text: str) -> None:
    facts = read(text, cwd="/tmp")
    assert "internal reader error" not in facts.unreadable, facts.unreadable


# --- a git global option whose value is missing -------------------------------------------------


@pytest.mark.parametrize(
    "text", ["true && git -c", "git -c", "git -C", "git -c x=y -c", "ls | git --git-dir"]
)
def test_git_option_without_its_value_is_no_internal_error(text: str) -> None:
    facts = read(text, cwd="/tmp")
    assert "internal reader error" not in facts.unreadable, facts.unreadable
    assert [c.argv[0].text for c in facts.commands][-1] == "git"


def test_git_option_without_its_value_still_reads_what_follows(tmp_path: Path) -> None:
    d = decide("git -c\nsh -c 'rm -rf ~'", cwd=str(tmp_path), config=CONFIG, rung=Rung.BYPASS)
    assert d.stage is Stage.HARDLINE, d.reason


# --- the union of the two readers counts names ----------------------------------------------------

# The long run's own input: tree-sitter stops at the here-string after ``{}``; bashlex reads on.
LOST_AFTER_ERROR = "git -la; rm -- !!\nls /tmp/x; printf -rf | ssh <in.txt 2>/dev/null --\nsudo 'a b' \\; ~ -la |& echo -exec naïve /tmp/x ${!p} | find naïve 日本語 \\; | grep 2>/dev/null {} <<<x\nls\nfind / -delete"


def test_a_command_lost_after_a_parse_error_is_not_hidden_by_one_of_its_name(
    tmp_path: Path,
) -> None:
    facts = read(LOST_AFTER_ERROR, cwd=str(tmp_path))
    assert [" ".join(w.text for w in c.argv) for c in facts.commands][-1] == "find / -delete"
    for rung in (Rung.AUTO, Rung.BYPASS):
        d = decide(LOST_AFTER_ERROR, cwd=str(tmp_path), config=CONFIG, rung=rung)
        assert d.stage is Stage.HARDLINE, (rung, d.reason)


@pytest.mark.parametrize("text", ["eval", "bash -c 'eval'", "true && eval; ls"])
def test_a_bare_eval_is_no_internal_error(text: str) -> None:
    facts = read(text, cwd="/tmp")
    assert "internal reader error" not in facts.unreadable, facts.unreadable
