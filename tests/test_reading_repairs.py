"""The reader's repairs (gatesh/reading/_repair.py) and rejoined words (issue 2).

Each repair reads text bash accepts but tree-sitter-bash rejects; each must keep every command
bash would run in view (security tests below) and must not make text bash rejects readable.
Where a test states what bash does, ``test_bash_agrees`` checks it against the installed bash.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from gatesh._types import Facts, Rung, Stage
from gatesh.config import default
from gatesh.pipeline import decide
from gatesh.reading import read
from gatesh.reading._peel import head_of
from gatesh.reading._repair import repair

CONFIG = default()
BASH = shutil.which("bash") or ""


def _cmds(facts: Facts) -> list[tuple[str, list[str]]]:
    return [(c.head, [w.text for w in c.argv]) for c in facts.commands]


def _repaired(facts: Facts) -> bool:
    return any(n.startswith("repaired") for n in facts.notes)


def _refused_hardline(text: str) -> None:
    for rung in (Rung.AUTO, Rung.BYPASS):
        d = decide(text, cwd="/tmp", config=CONFIG, rung=rung)
        assert not d.allowed and d.stage is Stage.HARDLINE, (text, rung, d.stage, d.reason)


# --- what bash does, checked against bash itself ----------------------------------------------

# (text, the words bash passes to the last printf, one per <…>)
BASH_CASES = [
    ("printf '<%s>' a \\", ["a", "\\"]),  # a lone final backslash is a literal word
    ("printf '<%s>' a\\", ["a\\"]),  # … or the end of the word it touches
    ("printf '<%s>' a$/b x$%y $.", ["a$/b", "x$%y", "$."]),  # `$` before no name is literal
    ("printf '<%s>' $(($(echo 1)0))", ["10"]),  # operands side by side make one number
    ("printf '<%s>' 'a'b$/'c'", ["ab$/c"]),  # one word, though tree-sitter splits it
    ("printf '<%s>' x`echo y`z", ["xyz"]),
]


@pytest.mark.skipif(not BASH, reason="needs bash")
@pytest.mark.parametrize(("text", "words"), BASH_CASES)
def test_bash_agrees(text: str, words: list[str]) -> None:
    out = subprocess.run([BASH, "-c", text], capture_output=True, text=True, timeout=10).stdout
    assert out == "".join(f"<{w}>" for w in words)


@pytest.mark.parametrize(
    ("text", "words"), [c for c in BASH_CASES if "`" not in c[0] and "$(" not in c[0]]
)
def test_reader_reads_the_words_bash_passes(text: str, words: list[str]) -> None:
    facts = read(text)
    assert facts.readable, facts.unreadable
    assert _cmds(facts)[0][1][2:] == words


@pytest.mark.skipif(not BASH, reason="needs bash")
def test_bash_ends_an_open_heredoc_at_the_end() -> None:
    p = subprocess.run(
        [BASH, "-c", "bash <<'EOT'\necho one\necho two"], capture_output=True, text=True, timeout=10
    )
    assert p.returncode == 0 and p.stdout == "one\ntwo\n" and "warning" in p.stderr
    p = subprocess.run(
        [BASH, "-c", "set -- a b; for f do printf '<%s>' $f; done"],
        capture_output=True,
        text=True,
        timeout=10,
    )
    assert p.stdout == "<a><b>"
    p = subprocess.run(
        [BASH, "-c", "((echo a) && (echo b))"], capture_output=True, text=True, timeout=10
    )
    assert p.stdout == "a\nb\n"


# --- a lone backslash at the end --------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "find . -inum 7 -exec rm {} \\",
        "nl -ba long-file \\",
        "cat f.html | grep -o \\",
        "set p=\\[`id -nu`\\]\\#\\",
        "find /s -exec chmod -x+r {} \\; \\",
    ],
)
def test_trailing_backslash_is_read(text: str) -> None:
    facts = read(text)
    assert facts.readable and _repaired(facts), (facts.unreadable, facts.notes)
    assert any(c.argv[-1].text.endswith("\\") for c in facts.commands), _cmds(facts)


def test_command_hidden_before_a_trailing_backslash_is_hardline() -> None:
    facts = read("rm -rf ~ \\")
    assert ("rm", ["rm", "-rf", "~", "\\"]) in _cmds(facts)
    _refused_hardline("rm -rf ~ \\")
    _refused_hardline("ls; rm -rf / \\")
    _refused_hardline("bash -c 'rm -rf ~ \\'")


def test_even_backslashes_are_not_repaired() -> None:
    facts = read("echo a\\\\")
    assert facts.readable and not _repaired(facts)
    assert _cmds(facts)[0][1] == ["echo", "a\\"]


def test_a_lone_backslash_command_has_its_own_head() -> None:
    assert head_of("\\") == "\\"
    assert head_of("C:\\Windows\\cmd.exe") == "cmd"
    assert ("\\", ["\\"]) in _cmds(read("ls &&\\"))


# --- a here-document open at the end ----------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "ssh user@server /bin/bash <<'EOT'",
        "ssh host <<\\EOI",
        'ssh -T host <<"EOI"',
        "cat << EOF > f <Enter> x <Enter> EOF",
        "cat <<-EOF\n\tline",
    ],
)
def test_open_heredoc_is_read(text: str) -> None:
    facts = read(text)
    assert facts.readable and _repaired(facts), (facts.unreadable, facts.notes)


def test_command_in_an_open_heredoc_body_is_hardline() -> None:
    for text in (
        "bash <<EOF\nrm -rf ~",
        "sh <<'EOF'\necho hi\nrm -rf / \\",
        "bash <<EOF\nls\nrm -rf ~\n",
    ):
        facts = read(text)
        assert facts.readable and any(h == "rm" for h, _ in _cmds(facts)), _cmds(facts)
    _refused_hardline("bash <<EOF\nrm -rf ~")
    _refused_hardline("sh <<'EOF'\necho hi\nrm -rf / \\")


def test_a_closed_heredoc_is_not_reopened() -> None:
    # The delimiter line is there, so bash ends the body there: no repair applies.
    assert repair(b"cat <<EOF\nx\nEOF\nfi") is None
    assert repair(b"cat <<'EOF\nx") is None  # an unterminated quote: bash rejects it


# --- for NAME do, ((…)) as subshells, lone $, arithmetic operands ------------------------------


def test_for_without_in_is_read() -> None:
    facts = read('for f do rm -rf "$f"; done')
    assert facts.readable and _repaired(facts)
    assert [h for h, _ in _cmds(facts)] == ["rm"]  # `done` is no command
    _refused_hardline("for f do rm -rf ~; done")


def test_double_paren_subshells_are_read() -> None:
    text = "(([[ -f x ]] && grep -l k x) || ([[ x =~ k ]] && rm -rf ~))"
    facts = read(text)
    assert facts.readable and _repaired(facts)
    assert {"grep", "rm"} <= {h for h, _ in _cmds(facts)}
    _refused_hardline(text)


def test_arithmetic_double_paren_is_left_alone() -> None:
    for text in ("(( x = (1 + 2) * 3 ))", "((x++))"):
        facts = read(text)
        assert facts.readable and not _repaired(facts)
    assert repair(b"(( a + (b c) ))") is None  # bash reads arithmetic here: no subshells


@pytest.mark.parametrize(
    "text",
    [
        "sed -i 's/x$//' f; echo a$/b; rm -rf ~",
        "fcrackzip -c a:$% archive; rm -rf ~",
        "grep total$. f && rm -rf ~",
    ],
)
def test_lone_dollar_is_read(text: str) -> None:
    facts = read(text)
    assert facts.readable
    assert ("rm", ["rm", "-rf", "~"]) in _cmds(facts)
    _refused_hardline(text)


def test_arithmetic_operands_side_by_side() -> None:
    facts = read("sleep $(($(date +%s)000))")
    assert facts.readable and _repaired(facts)
    assert {"sleep", "date"} == {h for h, _ in _cmds(facts)}
    _refused_hardline("sleep $(($(rm -rf ~)0))")


# --- text bash rejects stays unreadable -------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        'echo "abc \\',
        "cat <file> | wc -l",
        "<Ctrl x> <Ctrl c>",
        'ssh -t host "sudo <cmd>"',
        "cat <<'EOF",
    ],
)
def test_text_bash_rejects_stays_unreadable(text: str) -> None:
    facts = read(text)
    assert not facts.readable and not _repaired(facts), facts.notes


def test_repair_never_removes_a_byte() -> None:
    for text in (
        b"rm -rf ~ \\",
        b"bash <<E\nrm -rf ~",
        b"for f do rm x; done",
        b"echo a$/b",
        b"(( (ls) || (rm x) ))x",
        b"sleep $(($(date)0))",
    ):
        fixed = repair(text)
        if fixed is None:
            continue
        it = iter(fixed[0])
        assert all(b in it for b in text), (text, fixed[0])  # the original is a subsequence


# --- words tree-sitter splits but bash reads whole ---------------------------------------------


def test_backquote_inside_a_command_name_makes_it_dynamic() -> None:
    # bash runs `rm -rf ~`; tree-sitter read a command `r` with an argument `` `true`m ``.
    facts = read("r`true`m -rf ~")
    first = facts.commands[0]
    assert first.head == "" and first.argv[0].text == "r`true`m" and not first.argv[0].static
    assert any("split a word" in n for n in facts.notes)
    d = decide("r`true`m -rf ~", cwd="/tmp", config=CONFIG, rung=Rung.AUTO)
    assert not d.allowed, d.reason


def test_backquote_inside_a_shell_string_keeps_it_dynamic() -> None:
    # bash -c gets "echo hi; rm -rf ~": the string must not be read as just 'echo hi'.
    text = "bash -c 'echo hi'`true`'; rm -rf ~'"
    facts = read(text)
    assert ("echo", ["echo", "hi"]) not in _cmds(facts)
    assert any(c.head == "bash" and not c.argv[2].static for c in facts.commands), _cmds(facts)
    d = decide(text, cwd="/tmp", config=CONFIG, rung=Rung.AUTO)
    assert not d.allowed, d.reason


def test_literal_dollar_inside_a_shell_string_hides_nothing() -> None:
    text = "bash -c ':;'x$/';rm -rf ~'"
    assert ("rm", ["rm", "-rf", "~"]) in _cmds(read(text))
    _refused_hardline(text)


def test_split_words_are_joined_everywhere() -> None:
    assert _cmds(read("rm -rf $a/$b/c"))[0][1] == ["rm", "-rf", "$a/$b/c"]
    assert _cmds(read("find . -exec rm {}\\;"))[0][1][-1] == "{};"  # bash: one word `{};`
    red = read("echo x >/tmp/a`x`b").commands[0].redirects[0]
    assert red.op == ">" and red.target is None  # the whole target is one dynamic word
    assert _cmds(read("cat <<E a`x`b\nE"))[0][1] == ["cat", "a`x`b"]
    local = read("local a`x`=1").commands[0]
    assert [w.text for w in local.argv] == ["local", "a`x`=1"] and not local.argv[1].static
    assert not any("split a word" in n for n in read("echo a b 'c'd").notes)


# --- aliases ------------------------------------------------------------------------------------


def test_global_alias_piece_is_read() -> None:
    facts = read("alias -g X=\"| cut -d' ' -f2\"")
    assert facts.readable and ("cut", ["cut", "-d ", "-f2"]) in _cmds(facts)
    assert read("alias -g L='ls -l |'").readable
    _refused_hardline("alias -g X='| rm -rf ~'")
    _refused_hardline("alias X='rm -rf ~ &&'")


def test_alias_name_that_can_never_be_used() -> None:
    facts = read("alias p=php -E '$o = json_decode($argn); print $o;'")
    assert facts.readable and any("can never be used" in n for n in facts.notes)
    assert [h for h, _ in _cmds(facts)] == ["alias", "php"]


def test_redirection_target_on_the_next_line_is_not_shell() -> None:
    # tree-sitter-bash takes `rm -rf ~` as the targets of `>`; bash rejects the line.
    for text in ("echo a >\nrm -rf ~", "echo <<X >\nrm -rf ~"):
        facts = read(text)
        assert not facts.readable and not _repaired(facts), facts.notes
        _refused_hardline(text)  # unreadable: matched on the raw text
    assert read("cat <<X > \\\nout\nbody\nX").readable  # a line continuation is no line end


def test_repair_is_bounded() -> None:
    assert repair(b"echo " + b"a" * 9000 + b" \\") is None  # longer than MAX_REPAIR_BYTES
    assert repair(b"echo x$. " * 20) is None  # many error sites: not a line with a slip
    assert repair(b"echo a \\", deadline=0.0) is None  # no time left in the reading's budget
    assert repair(b"echo a \\") == (
        b"echo a \\\\",
        ["a lone backslash ends the command: read as the literal backslash bash -c passes"],
    )
