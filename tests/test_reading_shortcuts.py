"""The reader's shortcuts (done for speed) give exactly what the long way gives.

Each shortcut skips work for a common kind of text; each test here runs the long way on the same
text and compares, over hand-picked edge cases and seeded random texts.
"""

from __future__ import annotations

import random

import pytest

from gatesh.reading import _walk

# Plain lines (``_walk.PLAIN``) that tree-sitter may read as something other than one command of
# plain words: reserved words, assignments, declarations, numbers, job specs, odd spacing.
EDGE_PLAIN = [
    "",
    " ",
    "ls",
    "  ls  -la  ",
    "git rm path/to/file",
    "head -n 5 file",
    "5",
    "2 3 4",
    "%1",
    "fg %1",
    "a=1",
    "a=1 b",
    "a=1 b=2 cmd x",
    "a= cmd",
    "export a=1",
    "export PATH",
    "local x=1",
    "readonly x",
    "declare -x a=b",
    "typeset x",
    "unset x",
    "unset -f f",
    "if x",
    "then",
    "fi",
    "for x",
    "do x",
    "done",
    "case x",
    "esac",
    "while x",
    "until x",
    "function f",
    "select x",
    "in",
    "time ls",
    "coproc x",
    "exec ls",
    "- -",
    "-",
    ":",
    ":: :",
    "=",
    "==",
    "a==b",
    "x =y",
    "dd if=a of=b bs=1M",
    "cmd --opt=a,b@c%d+e",
    "./run.sh",
    "../x/y",
    "/bin/ls /",
    "cmd 10.0.0.1:80",
    "cmd 1e5 0x1f 077",
    "cmd -1 +1 1.5",
    "a.b.c d.e",
    "cmd a:b=c",
    "cmd @x",
    "cmd x+",
    "cmd ,",
    "elif x",
    "else",
]

_VOCAB = [
    "ls",
    "git",
    "rm",
    "-rf",
    "-n",
    "5",
    "10",
    "0x1f",
    "1.5",
    "a=1",
    "X=y",
    "export",
    "local",
    "unset",
    "if",
    "then",
    "fi",
    "for",
    "do",
    "done",
    "in",
    "case",
    "esac",
    "time",
    "function",
    "%1",
    "-",
    ":",
    "=",
    "path/to/file",
    "./x",
    "/etc/hosts",
    "a,b",
    "u@h",
    "+x",
    "--k=v",
    "declare",
    "readonly",
    "while",
    "select",
    "coproc",
    "exec",
    "1",
    "2",
    "a.b",
]


def _long_way(data: bytes) -> _walk.Walk:
    """The full walk of ``data``, node by node (what ``walk_text`` does without the shortcut)."""
    return _walk._walk_tree(_walk.parse(data), data, "top", float("inf")).result


def _random_plain(rng: random.Random) -> str:
    words = [rng.choice(_VOCAB) for _ in range(rng.randint(1, 7))]
    return "".join(w + " " * rng.choice((1, 1, 1, 2)) for w in words).rstrip(
        " " if rng.random() < 0.7 else ""
    )


@pytest.mark.parametrize("text", EDGE_PLAIN)
def test_plain_walk_equals_the_full_walk(text: str) -> None:
    data = text.encode()
    assert _walk.PLAIN.fullmatch(text)
    assert _walk.walk_text(data, "top") == _long_way(data)


def test_plain_walk_equals_the_full_walk_on_random_plain_lines() -> None:
    rng = random.Random(14)
    taken = 0
    for _ in range(3000):
        text = _random_plain(rng)
        data = text.encode()
        assert _walk.walk_text(data, "top") == _long_way(data), text
        taken += _walk._plain_walk(_walk.parse(data), data, "top") is not None
    assert taken > 300  # the shortcut was actually taken, not only declined


def test_plain_walk_keeps_the_context() -> None:
    data = b"rm -rf x"
    assert (
        _walk.walk_text(data, "sh -c")
        == _walk._walk_tree(_walk.parse(data), data, "sh -c", float("inf")).result
    )
    assert _walk.walk_text(data, "sh -c").commands[0].context == "sh -c"


def _shipped_texts() -> list[str]:
    """Every command of the shipped reader, bypass and generalisation cases."""
    from _fixtures import load

    texts = [c.cmd for c in load("reader_cases").CASES]
    texts += [c.command for c in load("bypass").CASES]
    texts += [t for spellings in load("generalisation").CASES.values() for t in spellings]
    return texts


def test_node_kind_and_named_answer_what_the_node_answers() -> None:
    from gatesh.reading._nodes import kind, named

    rng = random.Random(140)
    texts = _shipped_texts()
    # broken texts too, so ERROR and MISSING nodes are among the nodes compared
    texts += ["".join(rng.sample(t, len(t))) for t in texts[:400]] + [
        "if then fi ((",
        "echo 'x",
        "a |",
        ")(",
    ]
    seen = set()
    for text in texts:
        stack = [_walk.parse(text.encode("utf-8", "surrogatepass")).root_node]
        while stack:
            node = stack.pop()
            assert kind(node) == node.type and named(node) == node.is_named, (text, node.type)
            seen.add(node.type)
            stack.extend(node.children)
    assert {"ERROR", "word", "command", "string", '"', "heredoc_body"} <= seen


def test_harness_shapes_tried_only_on_their_starts_lose_no_match(monkeypatch) -> None:
    """``Shape.starts`` skips a shape for a text that cannot be one; every shape classifies the
    shipped harness texts (and their look-alikes) exactly as without the filter."""
    import dataclasses

    from gatesh.reading import harness as H

    snap = "/home/u/.claude/shell-snapshots/snapshot-bash-1796119462734-bfqii3.sh"
    claude = (
        "shopt -u extglob 2>/dev/null || true && eval 'git status' < /dev/null && "
        "pwd -P >| /tmp/claude-a1b1-cwd"
    )
    texts = [
        claude,
        f"source {snap} 2>/dev/null || true && " + claude,
        claude.split(" && ", 1)[1],
        claude.replace("shopt -u extglob", "setopt NO_EXTENDED_GLOB"),
        "shopt -u promptvars nullglob extglob nocaseglob dotglob; { ls; }; __code=$?; "
        "pgrep -g 0 >/tmp/shell_pgrep_abc123.tmp 2>&1; exit $__code;",
        "shopt -u promptvars nullglob extglob nocaseglob dotglob; _bgpids_file=/tmp/gemini-shell-s0WX/bgpids.tmp\n"
        "(\n  trap 'jobs -p > \"$_bgpids_file\"' EXIT\nls\n)\n__code=$?\nexit $__code",
        'set -e; . "/home/u/.codex/shell_snapshots/01a2.tmp-17961"',
        f"SNAPSHOT_FILE={snap}\nls\n",
        "__CODEX_SNAPSHOT_OVERRIDE_SET_0=1\nls",
        " " + claude,
        "ls",
        "",
        *_shipped_texts()[:200],
    ]
    before = [H.classify(t) for t in texts]
    assert sum(b is not None for b in before) >= 6
    monkeypatch.setattr(H, "SHAPES", tuple(dataclasses.replace(s, starts=()) for s in H.SHAPES))
    assert [H.classify(t) for t in texts] == before


def test_word_caches_hold_no_long_word() -> None:
    """The reader's remembered answers keep only short words as keys, so a flood of long distinct
    words (64 KiB each) cannot grow the daemon (same answers as computed afresh)."""
    from gatesh.reading import _path_resolve as _paths
    from gatesh.reading import _peel

    heads, paths = (
        _peel._cached_head.cache_info().currsize,
        _paths._looks_like_path.cache_info().currsize,
    )
    for i in range(50):
        long = f"/usr/bin/{i}" + "x" * 65_000
        assert _peel.head_of(long) == _peel._head(long)
        assert _paths.looks_like_path(long) is False
    assert _peel._cached_head.cache_info().currsize == heads
    assert _paths._looks_like_path.cache_info().currsize == paths
    assert _peel.head_of("/usr/bin/RM.EXE") == "rm" and _paths.looks_like_path("~/.ssh/id_rsa")
