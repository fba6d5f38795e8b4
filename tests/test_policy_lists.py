"""Allow, deny and escalate lists (S3.6)."""

from __future__ import annotations

import pytest

from gatesh._types import Facts
from gatesh.policy import lists
from gatesh.policy.lists import ListEntry
from gatesh.reading import read


def m(entries: list[ListEntry], text: str, kind: str) -> str | None:
    found = lists.match(entries, read(text, cwd="/tmp"), kind=kind)  # type: ignore[arg-type]
    return found.describe() if found else None


def E(match: str, pattern: str, **kw) -> ListEntry:
    entry = ListEntry(match, pattern, **kw)  # type: ignore[arg-type]
    entry.validate()
    return entry


def test_describe() -> None:
    assert E("prefix", "git push").describe() == 'prefix "git push"'


@pytest.mark.parametrize(
    ("match", "pattern", "problem"),
    [
        ("fuzzy", "x", "match must be one of"),
        ("regex", "(", "does not compile"),
        ("regex", "(a+)+$", "exponential"),
        ("regex", r"(\w+\s?)*x", "exponential"),
        ("prefix", "  ", "non-empty"),
        ("prefix", "'open", "split"),
    ],
)
def test_validate_names_the_problem(match: str, pattern: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        ListEntry(match, pattern).validate()  # type: ignore[arg-type]


def test_prefix_compares_words() -> None:
    deny = [E("prefix", "git push")]
    assert m(deny, "git push --force origin main", "deny")
    assert m(deny, "git pushx", "deny") is None
    assert m(deny, "git   push", "deny")
    assert m(deny, "sudo git push", "deny")  # wrappers peeled
    assert m(deny, "cd repo && git push", "deny")  # any part
    assert m(deny, "echo $(git push)", "deny")


def test_exact_and_glob_compare_whole_normalised_text() -> None:
    assert m([E("exact", "make test")], "make    test", "deny")
    assert m([E("exact", "make test")], "make test2", "deny") is None
    assert m([E("glob", "terraform *")], "cd infra && terraform destroy", "escalate")
    assert m([E("glob", "*destroy*")], "terraform destroy -auto-approve", "escalate")


def test_regex_searches_and_undecided_is_a_match_for_deny_only() -> None:
    assert m([E("regex", r"rm\s+-rf")], "ls && rm -rf x", "deny")
    huge = "echo " + "a" * (lists.REGEX_MAX_INPUT + 10)
    assert m([E("regex", "zzz")], huge, "deny") == 'regex "zzz"'
    assert m([E("regex", "zzz")], huge, "escalate") == 'regex "zzz"'
    assert m([E("regex", "echo")], huge, "allow") is None


def test_allow_needs_every_part() -> None:
    allow = [E("prefix", "git status"), E("prefix", "git diff")]
    assert m(allow, "git status && git diff", "allow") == 'prefix "git status"'
    assert m(allow, "git status && rm -rf x", "allow") is None
    assert m(allow, "git status $(rm -rf x)", "allow") is None
    assert m([E("glob", "git *")], "git status; rm -rf x", "allow") is None
    assert m([E("glob", "git *")], "git status", "allow") == 'glob "git *"'
    assert m([E("exact", "make test && make lint")], "make test && make lint", "allow")


def test_allow_does_not_look_past_privilege() -> None:
    assert m([E("prefix", "git pull")], "sudo git pull", "allow") is None
    assert m([E("prefix", "sudo git pull")], "sudo git pull", "allow")


def test_allow_never_matches_unreadable() -> None:
    facts = Facts(text="git status", readable=False, unreadable="unreadable")
    assert lists.match([E("exact", "git status")], facts, kind="allow") is None
    assert lists.match([E("exact", "git status")], facts, kind="deny") is not None


def test_deny_matches_unreadable_text() -> None:
    facts = read("git push --force $((", cwd="/tmp")
    assert not facts.readable
    assert lists.match([E("prefix", "git push")], facts, kind="deny") is not None


def test_empty_lists() -> None:
    assert lists.match([], read("ls", cwd="/tmp"), kind="deny") is None


# --- an entry means the command, not its spelling (issue 28) ------------------------------------

PROBE = "/tmp/probe-lists/MARK"


@pytest.mark.parametrize(
    "text",
    [
        f"touch {PROBE}",
        f"touch -a {PROBE}",
        f"touch -c -m {PROBE}",
        "touch /tmp/probe-lists//MARK",
        "touch /tmp/probe-lists/./MARK",
        "touch /tmp/../tmp/probe-lists/MARK",
        "cd /tmp/probe-lists && touch MARK",
        "cd /tmp; cd probe-lists; touch ./MARK",
        f"/usr/bin/touch {PROBE}",
        f"touch -- {PROBE}",
        f"cp /dev/null {PROBE}",
        f": > {PROBE}",
        f"echo hi >> {PROBE}",
        f"tee {PROBE} < /dev/null",
        f"echo {PROBE} | xargs touch",
        "find /tmp/probe-lists -maxdepth 0 -exec touch {}/MARK \\;",
        f"env -i touch {PROBE}",
        f"sudo touch {PROBE}",
    ],
)
def test_deny_matches_the_command_in_any_spelling(text: str) -> None:
    deny = [E("prefix", f"touch {PROBE}")]
    assert m(deny, text, "deny") == f'prefix "touch {PROBE}"', text


@pytest.mark.parametrize(
    "text",
    [
        "touch /tmp/probe-lists/OTHER",
        f"cat {PROBE}",
        f"ls -l {PROBE}",
        "touch MARK",
        f"echo touch {PROBE}",
    ],
)
def test_deny_leaves_other_commands(text: str) -> None:
    assert m([E("prefix", f"touch {PROBE}")], text, "deny") is None, text


# A word known only when the command runs may be any word (issue 28: `F=…` on one line of the
# session, `touch "$F"` on the next).
@pytest.mark.parametrize(
    "text",
    [
        'touch "$F"',
        "touch $F",
        'touch -a -- "${F}"',
        'touch "$D/MARK"',
        "touch /tmp/probe-lists/$(cat name.txt)",
        'touch "$1"',
        ': > "$F"',
        'cp /dev/null "$D"/MARK',
        'echo "$F" | xargs touch',
        '( touch "$F" )',
        'echo $(touch "$F") | cat',
        'sudo touch "$F"',
    ],
)
def test_deny_matches_a_command_its_runtime_words_may_complete(text: str) -> None:
    deny = [E("prefix", f"touch {PROBE}")]
    assert m(deny, text, "deny") == f'prefix "touch {PROBE}"', text
    found = lists.find(deny, read(text, cwd="/tmp"), kind="deny")
    assert found is not None and "known only when it runs" in found.why, (text, found.why)


@pytest.mark.parametrize(
    "text",
    [
        'touch "$D/OTHER"',
        'cat "$F"',
        'echo "$F"',
        'git status "$F"',
        ': > "$OUT/log.txt"',
        "echo /tmp/other | xargs touch",
    ],
)
def test_runtime_words_do_not_match_what_they_cannot_be(text: str) -> None:
    deny = [E("prefix", f"touch {PROBE}"), E("prefix", "git push --force")]
    assert m(deny, text, "deny") is None, text


def test_runtime_words_and_a_named_subcommand() -> None:
    deny = [E("prefix", "git push --force")]
    assert m(deny, 'git push "$R"', "deny")  # $R may be --force
    assert m(deny, 'git "$SUB" --force', "deny")
    assert m(deny, 'git log "$R"', "deny") is None


def test_allow_is_never_matched_by_runtime_words() -> None:
    assert m([E("prefix", "touch /tmp/ok")], 'touch "$F"', "allow") is None


def test_prefix_deny_ignores_extra_options_but_not_other_subcommands() -> None:
    deny = [E("prefix", "git push")]
    assert m(deny, "git -C repo push origin main", "deny")
    assert m(deny, "git push --force", "deny")
    assert m(deny, "git log --grep push", "deny") is None
    assert m([E("prefix", "rm -rf build")], "rm -fr build", "deny")
    assert (
        m([E("prefix", "rm -rf build")], "rm -r -f ./build", "deny") is None
    )  # relative: as written


def test_find_says_why() -> None:
    found = lists.find(
        [E("prefix", f"touch {PROBE}")], read(f": > {PROBE}", cwd="/tmp"), kind="deny"
    )
    assert found is not None and f"writes {PROBE}" in found.why
    found = lists.find(
        [E("prefix", f"touch {PROBE}")], read(f"touch -- {PROBE}", cwd="/tmp"), kind="deny"
    )
    assert found is not None and "read as" in found.why


def test_allow_by_the_command_read_but_never_looser() -> None:
    allow = [E("prefix", "git status")]
    assert m(allow, "/usr/bin/git status", "allow")
    assert m(allow, "./git status", "allow") is None  # a file of the working tree may be anything
    assert m(allow, "git status --porcelain", "allow")
    assert m(allow, "git -C x status", "allow") is None  # allow never gets more options' leeway
