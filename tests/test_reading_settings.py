"""Shell state that turns into commands is read as code, however it is set (issue 28 item 3).

A prompt string or command variable set to code is reading that code, by every route a value
reaches it (gatesh/reading/_settings.py); a value only known when it runs is opaque code. The
counter rows are ordinary settings that hold no code.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gatesh._types import Facts
from gatesh.reading import read

MARK = "/tmp/probe/MARK"


def _touches(facts: Facts) -> list[tuple[str, ...]]:
    return [c.words for c in facts.commands if c.head == "touch"]


def _opaque(facts: Facts) -> list[str]:
    return [n for n in facts.notes if n.startswith("opaque code")]


@pytest.mark.parametrize(
    "text",
    [
        f"PS1=$'\\x24(tou\\x63h {MARK}) $ '",
        f"printf -v PS1 '$(tou%s {MARK}) $ ' ch",
        f"read -r PS1 <<< '$(touch {MARK}) $ '",
        f"read -rd '' PS1 <<< '$(touch {MARK}) $ '",
        f"declare -x PS1='$(touch {MARK}) $ '",
        f"export PROMPT_COMMAND='touch {MARK}'",
        f"print -v PS1 '$(touch {MARK}) %% '",
        f"PS4='$(touch {MARK}) '; set -x",
        f"x='touch {MARK}'; alias ll=\"$x\"",
    ],
)
def test_code_set_into_shell_state_is_read(text: str) -> None:
    assert ("touch", MARK) in _touches(read(text, cwd="/"))


@pytest.mark.parametrize(
    "text",
    [
        f"set -- '$(touch {MARK})'; PS1=$1",
        'PS1="$x"',
        "mapfile PS1 < f",
        "declare foo$n=$1",
        "unset $(printenv | cut -d= -f1)",
        'alias ll="$(cat f)"',
    ],
)
def test_a_value_only_known_when_it_runs_is_opaque_code(text: str) -> None:
    assert _opaque(read(text, cwd="/")), text


@pytest.mark.parametrize(
    "text",
    [
        "PS1='\\u@\\h:\\w\\$ '",
        "printf -v x '%s' hi",
        "read -r name",
        "read -rd $delim name",
        "unset foo[$i]",
        "export foo[$bar]=3",
        "PS1=$'\\e[3m; '",
    ],
)
def test_settings_without_code_stay_plain(text: str) -> None:
    facts = read(text, cwd="/")
    assert not _touches(facts) and not _opaque(facts)


def test_an_env_file_is_read_for_the_names_it_sets(tmp_path: Path) -> None:
    """``export $(cat FILE)`` sets FILE's names: plain names are no code, a prompt or command
    variable among them is, and a file the line writes or that cannot be read names unknowns."""
    plain = tmp_path / "ok.env"
    plain.write_text("E2E_FOO=1\n")
    code = tmp_path / "pc.env"
    code.write_text(f"PROMPT_COMMAND='touch {MARK}'\n")
    cwd = str(tmp_path)
    assert _opaque(read(f"export $(cat {plain}); x=E2E_FOO; export $x=1", cwd=cwd)) == []
    assert _opaque(read("export $(< ok.env)", cwd=cwd)) == []
    for text in (
        f"export $(cat {code})",
        f"echo PS1=x > {plain}; export $(cat {plain})",
        f"export $(cat {tmp_path}/missing.env)",
        "export $y=1",
    ):
        assert _opaque(read(text, cwd=cwd)), text
