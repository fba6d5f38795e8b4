"""Self-protection's shortcuts lose no match (S3.4): a plain command is asked only the rules its
head can match (``selfprotect._PLAIN_HEADS``), literal prechecks stand in front of the path
patterns, and a root is found by table lookups. Each is compared with asking everything, over
every rule's examples and counter-examples, the tamper corpus and seeded splices of their words,
against an installation laid out away from the defaults (so the install record adds roots)."""

from __future__ import annotations

import posixpath
import random
import re
import shlex
import tomllib
from pathlib import Path

import pytest

from gatesh import _paths
from gatesh._types import Facts
from gatesh.policy import selfprotect
from gatesh.policy._rules import canon_path, unquote
from gatesh.reading import read
from tests.test_tamper import Installed, lay_out_installation

_TAMPER = tomllib.loads((Path(__file__).parent / "fixtures" / "tamper.toml").read_text())
_TEXTS: tuple[str, ...] = tuple(
    dict.fromkeys(
        [t for r in selfprotect.RULES for t in (*r.examples, *r.counter)]
        + [c["command"] for c in (*_TAMPER["case"], *_TAMPER["ordinary"])]
    )
)
# Heads no rule names (the default steps), and wrappers the reader peels.
_OTHER_HEADS = (
    "mytool",
    "make",
    "npm",
    "docker",
    "kubectl",
    "cargo",
    "grep",
    "ls",
    "cat",
    "jq",
    "ffmpeg",
)
_WRAPPERS = ("", "", "", "sudo ", "nohup ", "env ", "time ", "strace -f ", "xargs ", "command ")
_JOINS = (" ; ", " && ", " | ", " || ")


def words_of(texts: tuple[str, ...]) -> list[str]:
    """Every distinct word of ``texts`` (shell-split; split at blanks where quoting is broken)."""
    out: list[str] = []
    for text in texts:
        try:
            out += shlex.split(text)
        except ValueError:
            out += text.split()
    return list(dict.fromkeys(out))


def _words() -> list[str]:
    return words_of(_TEXTS)


def _heads() -> list[str]:
    named = sorted({h for heads in selfprotect._PLAIN_HEADS.values() for h in heads})
    return named + list(_OTHER_HEADS)


def _splices(n: int, seed: int) -> list[str]:
    """``n`` commands: a head (every head a rule names, and others), 0-4 words taken from the
    corpus (quoted as needed), sometimes a wrapper, an assignment, a redirection or a second part."""
    rng = random.Random(seed)
    words, heads = _words(), _heads()

    def part() -> str:
        args = " ".join(shlex.quote(rng.choice(words)) for _ in range(rng.randrange(5)))
        prefix = rng.choice(_WRAPPERS) + ("A=1 " if rng.random() < 0.05 else "")
        tail = " > " + shlex.quote(rng.choice(words)) if rng.random() < 0.05 else ""
        return f"{prefix}{rng.choice(heads)} {args}{tail}".strip()

    return [part() + (rng.choice(_JOINS) + part() if rng.random() < 0.3 else "") for _ in range(n)]


def _same(facts: Facts, cwd: str) -> None:
    paths = _paths.current()
    fast = selfprotect.check(facts, paths, cwd)
    full = selfprotect.check(facts, paths, cwd, every_rule=True)
    assert fast == full, (facts.text, fast, full)


@pytest.fixture
def installed(isolated_home: Path) -> Installed:
    return lay_out_installation(isolated_home)


def test_every_test_is_indexed_by_heads_or_asked_of_every_command() -> None:
    """A new rule (or path test) decides whether a plain command's head limits it: only these two
    are asked of every plain command."""
    tests: set[object] = set()
    for rule in selfprotect.RULES:
        tests |= set(rule.test.tests) if isinstance(rule.test, selfprotect._On) else {rule.test}
    assert tests - set(selfprotect._PLAIN_HEADS) == {
        selfprotect._written,
        selfprotect._interpreter_escape,
    }


def test_the_corpus_decides_the_same_with_the_index(installed: Installed) -> None:
    cwd = str(installed.project)
    for text in _TEXTS:
        _same(read(text, cwd=cwd), cwd)


def test_the_index_is_what_skips_rules(installed: Installed) -> None:
    """The steps of a plain command of a head no rule names leave out the head-bound rules (so the
    comparison above compares two different ways of deciding)."""
    asked = {rule.id for rule, _, _ in selfprotect._PLAIN_DEFAULT}
    assert (
        "self.hook" not in asked and "self.daemon-kill" not in asked and "self.files-write" in asked
    )
    facts = read("mytool ~/.config/gatesh/config.toml", cwd=str(installed.project))
    assert selfprotect._plain(facts.commands[0])
    found = selfprotect.check(facts, _paths.current())
    assert found is not None and found.rule_id == "self.files-write"


def test_seeded_splices_decide_the_same_with_the_index(installed: Installed) -> None:
    cwd = str(installed.project)
    texts = _splices(2500, seed=14)
    matched = 0
    for text in texts:
        facts = read(text, cwd=cwd)
        _same(facts, cwd)
        matched += selfprotect.check(facts, _paths.current(), cwd) is not None
    assert matched > 100  # the splices reach the rules, not only their absence


def test_literal_prechecks_lose_no_path_match(installed: Installed) -> None:
    """Every word the generic or project-harness patterns match holds the literal searched first."""
    words = _words() + [w for t in _splices(1500, seed=15) for w in t.split()]
    words += [
        "$XDG_DATA_HOME/gatesh/venv",
        "${XDG_RUNTIME_DIR}/gatesh",
        "/run/user/1000/gatesh/x",
        "/tmp/gatesh-0",
        "${CLAUDE_CONFIG_DIR}/settings.local.json",
        "$CODEX_HOME/hooks.json",
        "$CODEX_HOME/sessions",
        "a/.gemini/tmp",
        "x/.codex/sessions/",
        "p/.claude/projects",
        ".claude/",
        "sub/.gemini",
        "./.codex/config.toml",
        "a/../.claude/settings.json",
        "/usr/share/man/man1/gatesh.1.gz",
    ]
    for word in words:
        text = unquote(word)
        if selfprotect._GENERIC_ANY.search(text):
            assert selfprotect._GENERIC_NEEDS.search(text), word
        if selfprotect._PROJECT_HARNESS.search(
            canon_path(text)
        ) or selfprotect._PROJECT_HARNESS_DIR.search(text):
            assert selfprotect._HARNESS_NAMES.search(text), word


def _kind_by_scan(prot: selfprotect.Protected, path: str) -> selfprotect.Kind | None:
    """The most specific root holding ``path``, by comparing it with every root."""
    best: tuple[int, selfprotect.Kind] | None = None
    for root, kind in prot.roots:
        if (path == root or path.startswith(root + "/")) and (best is None or len(root) > best[0]):
            best = (len(root), kind)
    return best[1] if best else None


def test_root_lookup_matches_a_scan_of_every_root(installed: Installed) -> None:
    prot = selfprotect.protected_for(_paths.current(), str(installed.project))
    paths = [
        "/",
        "//",
        "/tmp",
        "/etc",
        "/etc/gatesh",
        "/etc/gatesh/",
        "/etc/gatesh2",
        "//etc/gatesh",
    ]
    for root, _ in prot.roots:
        parent = root.rsplit("/", 1)[0]
        paths += [
            root,
            root + "/",
            root + "/x",
            root + "/x/y",
            root + "x",
            root + "//x",
            parent,
            parent + "/",
            root[:-1],
            "/" + root,
        ]
    for path in paths:
        assert prot.kind_of(path) is _kind_by_scan(prot, path), path


def test_hooks_off_precheck_holds_for_every_letter_the_pattern_takes() -> None:
    """Every character the case-blind pattern takes for a letter of ``hooks`` case-folds to that
    letter, so a text it matches holds ``hooks`` once case-folded (the precheck loses no match)."""
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    for letter in "hooks":
        taken = {m.group() for m in re.finditer(letter, every, re.IGNORECASE)}
        assert taken and all(c.casefold() == letter for c in taken), (letter, taken)
    for text in (
        "disableAllHookſ",
        "DISABLEALLHOOKS",
        "features.hooKs = off",
        "x hooks=0",
        "enableHOOKS': false",
    ):
        assert selfprotect._HOOKS_OFF_TEXT.search(text) and selfprotect._says_hooks_off(text), text


def test_absolute_is_canon_path_with_home_made_absolute(installed: Installed) -> None:
    prot = selfprotect.protected_for(_paths.current())
    for word in [
        *_words(),
        "~",
        "~/",
        "~/x/../y",
        "$HOME/a//b",
        "${HOME}",
        "/a/./b/",
        "//x",
        "rel/../x",
        "~other/x",
    ]:
        path = canon_path(word)
        if path == "~" or path.startswith("~/"):
            path = prot.home + path[1:]
        expected = posixpath.normpath(path) if path.startswith("/") else path
        assert selfprotect._absolute(word, prot) == expected, word


def test_a_relative_word_without_a_gate_name_names_nothing(installed: Installed) -> None:
    """What ``_touches`` skips (a word not led by ``/``, ``~`` or ``$`` holding no _RELATIVE_NEEDS
    literal) is a word every test after the skip would pass over: not made absolute, no generic or
    project-harness match, no ``.git``."""
    prot = selfprotect.protected_for(_paths.current())
    words = (
        _words()
        + [w for t in _splices(1500, seed=16) for w in t.split()]
        + [" /etc/gatesh", "\t~/x", "a b"]
    )
    skipped = 0
    for word in words:
        text = unquote(word)
        if not text or text.startswith("-"):
            continue
        lead = text.lstrip()[:1]
        if lead in ("/", "~", "$") or selfprotect._RELATIVE_NEEDS.search(text):
            continue
        skipped += 1
        assert not selfprotect._absolute(text, prot).startswith("/"), word
        assert not selfprotect._GENERIC_ANY.search(text) and ".git" not in text, word
        assert not selfprotect._PROJECT_HARNESS.search(canon_path(text))
        assert not selfprotect._PROJECT_HARNESS_DIR.search(text), word
    assert skipped > 500
