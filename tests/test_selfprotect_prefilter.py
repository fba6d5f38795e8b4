"""Self-protection's shortcuts lose no match (S3.4): a plain command is asked only the rules its
head can match (each row's ``heads``), the places' patterns are one alternation, a literal
precheck stands in front of the hooks-off pattern, and a place is found by table lookups. Each is
compared with asking everything, over every rule's examples and counter-examples, the tamper
corpus and seeded splices of their words, against an installation laid out away from the
defaults (so the install record adds places)."""

from __future__ import annotations

import random
import re
import shlex
import tomllib
from pathlib import Path

import pytest

from gatesh import _paths
from gatesh._types import Facts
from gatesh.policy import selfprotect
from gatesh.policy.selfprotect import _places, _rules, _settings
from gatesh.reading import read
from gatesh.vocab import places
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
    named = sorted({h for r in selfprotect.RULES if r.heads for h in r.heads})
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


def test_every_rule_is_indexed_by_heads_or_asked_of_every_command() -> None:
    """A new rule decides whether a plain command's head limits it: only the path rules (answered
    from the command's path effects) and the interpreter escape are asked of every command."""
    unindexed = {r.id for r in selfprotect.RULES if r.heads is None}
    assert unindexed == {
        "self.files-delete",
        "self.files-write",
        "self.files-cwd",
        "self.install",
        "self.harness-settings",
        "self.transcript",
        "self.harness-snapshot",
        "self.git-hooks",
        "self.unknown-target",
        "self.interpreter-escape",
    }


def test_the_corpus_decides_the_same_with_the_index(installed: Installed) -> None:
    cwd = str(installed.project)
    for text in _TEXTS:
        _same(read(text, cwd=cwd), cwd)


def test_the_index_is_what_skips_rules(installed: Installed) -> None:
    """The steps of a plain command of a head no rule names leave out the head-bound rules (so the
    comparison above compares two different ways of deciding)."""
    asked = {rule.id for rule in _rules._PLAIN_DEFAULT[False]}
    assert (
        "self.hook" not in asked and "self.daemon-kill" not in asked and "self.files-write" in asked
    )
    facts = read("mytool ~/.config/gatesh/config.toml", cwd=str(installed.project))
    assert _rules.plain(facts.commands[0])
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


def test_the_places_alternation_is_each_pattern_in_turn(installed: Installed) -> None:
    """One alternation of the guarded places' patterns answers as trying each in specificity
    order would (the installation's parts before the folders holding them)."""
    paths = [w for w in _words() if "/" in w] + [
        "/home/bob/.local/share/gatesh/venv/bin/pip",
        "/home/bob/.local/share/gatesh/git-hooks/pre-push",
        "/home/bob/.config/gatesh/config.toml",
        "/tmp/gatesh-1000/daemon.sock",
        "/run/user/1000/gatesh/x",
        "/usr/share/man/man1/gatesh.1.gz",
        "/p/.claude/settings.local.json",
        "/p/.codex/sessions/x",
        "/p/.gemini/tmp/y",
        "/srv/x/.local/state/gatesh/audit.jsonl.1",
    ]
    for path in paths:
        expected = None
        for place, pattern in _places._ANYWHERE_ROWS:
            if re.search(pattern.replace("{H}", places.HOME_PATTERN), path):
                expected = _places._KIND_OF_PLACE[place.kind]
                break
        assert _places.anywhere(path) is expected, path


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
        assert _settings._HOOKS_OFF_TEXT.search(text) and _settings.says_hooks_off(text), text
