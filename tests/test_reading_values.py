"""Static values (S2.1, issue 14): assignments, function parameters and loops over static words.

The expander is checked against real bash (``printf '<%s>'`` shows the words a word becomes;
the values are harmless strings). The reader puts in values that are certain, and reads the
command once more per value that is only possible.
"""

from __future__ import annotations

import random
import shutil
import subprocess

import pytest

from gatesh._types import Context, Facts, Rung, Stage, Word
from gatesh.config import default
from gatesh.pipeline import decide
from gatesh.reading import read
from gatesh.reading._values import MAX_LOOP_WORDS, Binding, TextEnv, expand

CONFIG = default()
BASH = shutil.which("bash")


def _runs(facts: Facts) -> list[tuple[str, ...]]:
    return [c.words for c in facts.commands]


_ENV = {
    "a": "x y",
    "b": "",
    "c": "  lead",
    "d": "/etc/shadow",
    "e": "tail  ",
    "f": "*",
    "g": "a\tb\nc",
}
_PARTS = [
    "${a}",
    '"$a"',
    "${b}",
    '"$b"',
    "${c}",
    "${e}",
    "p",
    "'q r'",
    "\\ ",
    '"${d}/x"',
    "$'\\x41'",
    "${f}",
    '"pre$a"',
    "z${b}",
    "${g}",
    '"$g"',
    "'$a'",
    '"\\$a"',
    "$1",
    '"${1}"',
]


@pytest.mark.slow
@pytest.mark.skipif(BASH is None, reason="bash is not installed")
def test_expand_gives_the_words_bash_gives() -> None:
    rng = random.Random(14)
    env = {**_ENV, "1": "one two"}
    assignments = "; ".join(
        f"{k}=$'{v.encode('unicode_escape').decode()}'" for k, v in _ENV.items()
    )
    for _ in range(300):
        src = "".join(rng.choice(_PARTS) for _ in range(rng.randint(1, 4)))
        if "$" not in src:
            continue
        mine = expand(Word(src, False), env.get)
        real = subprocess.run(
            [BASH, "-c", f"{assignments}; set -f; printf '<%s>' {src}", "_", "one two"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert mine is not None
        assert ("".join(f"<{w.text}>" for w in mine) or "<>") == real, src


@pytest.mark.parametrize(
    "src", ['"$(ls)"', "$x", "${x:-y}", '"$@"', "${#x}", "`ls`", "{a,b}$x", "$((1+2))"]
)
def test_expand_leaves_what_it_does_not_compute(src: str) -> None:
    assert expand(Word(src, False), {"y": "1"}.get) is None


def _env(text: str) -> TextEnv:
    from gatesh.reading._walk import walk_text

    return TextEnv(walk_text(text.encode(), "top").bindings, text)


@pytest.mark.parametrize(
    ("text", "name", "value"),
    [
        ("d=/x; rm -rf $d", "d", "/x"),
        ("d=/x; { rm -rf $d; }", "d", "/x"),
        ("d=/x && rm -rf $d", "d", "/x"),
        ("export d=/x; rm $d", "d", "/x"),
        ("d=/x; cd /tmp; rm $d", "d", "/x"),
    ],
)
def test_certain_values(text: str, name: str, value: str) -> None:
    assert _env(text).certain(name, text.rindex("rm")) == value


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("true && d=/x; rm $d", "d"),  # only when true succeeds
        ("if x; then d=/x; fi; rm $d", "d"),  # in a branch
        ("(d=/x); rm $d", "d"),  # in a subshell
        ("d=/x | cat; rm $d", "d"),  # in a pipeline
        ("d=/x & rm $d", "d"),  # in the background
        ("d=/x; read d; rm $d", "d"),  # bound again by read
        ("d=/x; for d in a; do :; done; rm $d", "d"),
        ('d=/x; eval "$y"; rm $d', "d"),  # eval may bind anything
        ("d=/x; source ./env.sh; rm $d", "d"),
        ("d=/x; d=$(pwd); rm $d", "d"),  # a dynamic value
        ("IFS=,; d=/x; rm $d", "d"),  # words split differently
        ("rm $d; d=/x", "d"),  # assigned after the use
    ],
)
def test_uncertain_values(text: str, name: str) -> None:
    assert _env(text).certain(name, text.rindex("rm")) is None


@pytest.mark.parametrize(
    ("text", "runs"),
    [
        ('f=/etc/shadow; cp "$f" x', ("cp", "/etc/shadow", "x")),
        ('src=/etc/passwd; dst=/usr/copy; cp "$src" "$dst"', ("cp", "/etc/passwd", "/usr/copy")),
        ('d=build; rm -rf "$d/cache"', ("rm", "-rf", "build/cache")),
        ("a=rm; $a -rf x", ("rm", "-rf", "x")),
        ('X="git clean"; $X -fdx', ("git", "clean", "-fdx")),
        ('d=/srv; bash -c "rm -rf $d"', ("rm", "-rf", "/srv")),
        ('b=x; a="$b/y"; rm "$a"', ("rm", "x/y")),
        ('f() { rm -rf "$1"; }; f ~', ("rm", "-rf", "~")),
        ('f() { rm -rf "$1/$2"; }; f a b', ("rm", "-rf", "a/b")),
        ('f() { local d="$1"; rm -rf "$d"; }; f /srv', ("rm", "-rf", "/srv")),
        ('f() { "$@"; }; f git reset --hard', ("git", "reset", "--hard")),
        ('for d in a /srv; do rm -rf "$d"; done', ("rm", "-rf", "/srv")),
        ("for f in x y; do for g in 1 2; do cp $f $g; done; done", ("cp", "y", "2")),
        ('d=build; [ -n "$X" ] && d=/srv; rm -rf "$d"', ("rm", "-rf", "/srv")),  # a possible value
        ('t=/etc/x; echo hi > "$t"', ("echo", "hi")),
    ],
)
def test_static_values_are_put_in(text: str, runs: tuple[str, ...]) -> None:
    facts = read(text)
    assert runs in _runs(facts), _runs(facts)


def test_redirect_targets_get_their_value() -> None:
    facts = read('t=/etc/x; echo hi > "$t"')
    assert [r.target for c in facts.commands for r in c.redirects] == ["/etc/x"]


def test_a_possible_value_is_read_beside_the_command_as_written() -> None:
    facts = read('d=build; [ -n "$X" ] && d=/srv; rm -rf "$d"')
    rms = [c.words for c in facts.commands if c.head == "rm"]
    assert (
        ("rm", "-rf", '"$d"') in rms
        and ("rm", "-rf", "/srv") in rms
        and ("rm", "-rf", "build") in rms
    )


def test_loops_are_bounded_and_read_once_per_word() -> None:
    words = " ".join(f"w{k}" for k in range(MAX_LOOP_WORDS + 1))
    assert (
        len([c for c in read(f"for x in {words}; do echo $x; done").commands]) == 1
    )  # past the bound: once
    facts = read("for x in a b c; do echo $x; done")
    assert sorted(c.words for c in facts.commands if c.context is Context.LOOP) == [
        ("echo", "a"),
        ("echo", "b"),
        ("echo", "c"),
    ]


def test_recursive_functions_are_read_once() -> None:
    facts = read('f() { f "$1" x; rm "$1"; }; f y')
    assert facts.readable and ("rm", "y") in _runs(facts)


def test_an_assembled_program_name_is_still_obfuscation() -> None:
    facts = read("a=ba; b=sh; $a$b")
    assert facts.heads == ("bash",) and facts.commands[0].expanded_head == "$a$b"
    d = decide("a=ba; b=sh; $a$b", cwd="/tmp", config=CONFIG, rung=Rung.AUTO)
    assert not d.allowed and d.rule_id == "obfuscation.dynamic-head"
    assert decide("cmd=ls; $cmd -la", cwd="/tmp", config=CONFIG, rung=Rung.AUTO).allowed


@pytest.mark.parametrize(
    "text",
    [
        'f() { rm -rf "$1"; }; f ~',
        "x=~; rm -rf $x",
        'T=/; rm -rf "$T"',
        "a=r; b=m; $a$b -rf ~",
        'CMD=rm; "$CMD" -rf ~',
        "for d in a /; do rm -rf $d; done",
        "d=/dev/sda; dd if=/dev/zero of=$d",
        'd=/; [ -n "$X" ] && d=/tmp; rm -rf "$d"',
    ],
)
def test_static_hardline_is_refused_at_every_rung(text: str) -> None:
    for rung in (Rung.AUTO, Rung.BYPASS):
        d = decide(text, cwd="/tmp", config=CONFIG, rung=rung)
        assert not d.allowed and d.stage is Stage.HARDLINE, (text, rung, d.stage, d.reason)


def test_binding_dataclass_shape() -> None:
    assert Binding("x", "1", 0, True).source == ""
