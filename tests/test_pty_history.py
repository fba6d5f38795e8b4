"""The gated shell with a person's real history (S10): a history file, and startup files that set
HISTCONTROL, HISTIGNORE, HISTSIZE or HISTFILE (or turn history off), change nothing about what the
gate reads, and the user's own settings still decide what the history keeps.

Every session here starts from a HOME that has a history file, as every real user's does.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._pty_tmux import SHELL_PARAMS, TmuxSession, past_banner

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

OLD = ["echo old-one", "echo old-two", "echo old-three"]
HISTORY_FILE = {"bash": ".bash_history", "zsh": ".zsh_history"}
# zsh keeps no history file unless told to (HISTFILE, SAVEHIST); a person with a history file has
# these in their .zshrc.
ZSH_FILE = "HISTFILE=~/.zsh_history\nSAVEHIST=1000\nHISTSIZE=1000\n"


def _session(
    tmp: Path, shell: str, rc: str, history: list[str] | None = None, name: str | None = None
) -> TmuxSession:
    files = {HISTORY_FILE[shell] if name is None else name: "\n".join(history or OLD) + "\n"}
    files[".bashrc" if shell == "bash" else ".zshrc"] = "PS1='$ '\n" + rc
    # These sessions are about the person's history file and settings: an agent's session runs
    # inside a boundary (S16) where that file, a credential store, can be neither read nor
    # written (tests/test_boundary_kernel.py shows it), so they run without one.
    return TmuxSession(tmp, shell, home_files=files, config=NO_BOUNDARY)


NO_BOUNDARY = "[boundary]\nenabled = false\n"


@pytest.fixture
def sessions() -> Iterator[list[TmuxSession]]:
    opened: list[TmuxSession] = []
    yield opened
    for s in opened:
        s.close()


def _again(sh: TmuxSession, text: str, marker: str) -> None:
    """Type ``text`` once more and wait for a second ``marker`` line."""
    sh.send(text)
    sh.wait_for(
        lambda s: [line.strip() for line in s.splitlines()].count(marker) >= 2,
        what=f"a second {marker}",
    )


def _listing(sh: TmuxSession) -> list[str]:
    """The shell's `history` listing, command texts only (through a file: it may be long)."""
    out = sh.tmp / "listing"
    sh.run(f"history > {out}; echo listing-''done", marker="listing-done")
    lines = out.read_text().splitlines()
    # bash and zsh print "%5d  TEXT"; continuation lines of a multi-line entry have no number.
    return [line.lstrip(" ")[len(line.lstrip(" ").split(" ", 1)[0]) + 2 :] for line in lines]


def _gate_still_works(sh: TmuxSession) -> None:
    """A refused entry does not run; the next harmless one does (also with a leading space)."""
    marker = sh.work / "refused-ran"
    sh.send(f" touch {marker}; rm -rf ~")
    sh.wait_for(lambda s: "hardline" in s, what="the refusal of a space-prefixed entry")
    assert sh.status() == 126
    assert not marker.exists()
    sh.run(" echo after-''refusal", marker="after-refusal")


@pytest.mark.parametrize("shell", SHELL_PARAMS)
def test_first_command_runs_with_a_history_file(
    shell: str, tmp_path: Path, sessions: list[TmuxSession]
) -> None:
    sh = _session(tmp_path, shell, ZSH_FILE if shell == "zsh" else "")
    sessions.append(sh)
    screen = sh.run("echo fi''rst-command", marker="first-command")
    assert "gatesh:" not in past_banner(screen), screen
    listing = _listing(sh)
    # The file is listed once, not once per time the history was switched on.
    for line in OLD:
        assert listing.count(line) == 1, listing
    assert listing.index("echo fi''rst-command") == len(OLD)


BASH_SETTINGS = {
    # Debian's default .bashrc: spaces and duplicates are not kept.
    "ignoreboth": "HISTCONTROL=ignoreboth\n",
    "erasedups": "HISTCONTROL=erasedups\n",
    "histignore": "HISTIGNORE='echo skip*:&'\n",
    "histsize-0": "HISTSIZE=0\n",
    "histsize-unlimited": "HISTSIZE=-1\nHISTFILESIZE=-1\n",
    "histfile": "HISTFILE=~/.other_history\n",
    "history-off": "set +o history\n",
}


@pytest.mark.parametrize("setting", sorted(BASH_SETTINGS))
def test_bash_startup_history_settings_change_nothing(
    setting: str, tmp_path: Path, sessions: list[TmuxSession]
) -> None:
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    history = OLD
    name = None
    if setting == "histsize-unlimited":
        history = [f"echo long-{i}" for i in range(700)]  # more than bash's default 500
    if setting == "histfile":
        name = ".other_history"
    sh = _session(tmp_path, "bash", BASH_SETTINGS[setting], history, name)
    sessions.append(sh)
    screen = sh.run("echo fi''rst", marker="first")
    assert "gatesh:" not in past_banner(screen), screen
    sh.run(" echo spa''ced", marker="spaced")
    _again(sh, "echo fi''rst", "first")
    sh.run("echo skip''-me", marker="skip-me")
    _gate_still_works(sh)
    listing = _listing(sh)
    # What the user's own settings say the history keeps.
    if setting == "ignoreboth":
        assert " echo spa''ced" not in listing
        assert listing.count("echo fi''rst") == 1, listing
    elif setting == "erasedups":
        assert listing.count("echo fi''rst") == 1
        assert listing.index("echo fi''rst") > listing.index(" echo spa''ced")
    elif setting == "histignore":
        assert "echo skip''-me" not in listing
        assert listing.count("echo fi''rst") == 2  # `&` is the line just before only
    elif setting == "histsize-0":
        assert len(listing) <= 1, listing  # at most the `history` entry itself
    elif setting == "histsize-unlimited":
        assert listing[0] == "echo long-0"  # nothing was cut to 500
    elif setting == "history-off":
        assert len(listing) == 1 and listing[0].startswith("history >"), listing
    else:
        assert listing[: len(OLD)] == OLD
        assert " echo spa''ced" in listing
    sh.send("exit")
    assert sh.dead_status() == 0
    if setting == "ignoreboth":
        saved = (sh.home / ".bash_history").read_text()
        assert "spa''ced" not in saved  # a space-prefixed entry never reaches the file
        assert "echo fi''rst" in saved


ZSH_SETTINGS = {
    "ignore-space-dups": ZSH_FILE
    + "setopt HIST_IGNORE_SPACE HIST_IGNORE_ALL_DUPS INC_APPEND_HISTORY\n",
    "history-ignore": ZSH_FILE + "HISTORY_IGNORE='(echo skip*)'\n",
    "histsize-0": "HISTSIZE=0\nSAVEHIST=0\n",
    "histfile": "HISTFILE=~/.other_history\nSAVEHIST=100\nHISTSIZE=100\n",
}


@pytest.mark.parametrize("setting", sorted(ZSH_SETTINGS))
def test_zsh_startup_history_settings_change_nothing(
    setting: str, tmp_path: Path, sessions: list[TmuxSession]
) -> None:
    if shutil.which("zsh") is None:
        pytest.skip("zsh is not installed")
    sh = _session(
        tmp_path,
        "zsh",
        ZSH_SETTINGS[setting],
        name=".other_history" if setting == "histfile" else None,
    )
    sessions.append(sh)
    screen = sh.run("echo fi''rst", marker="first")
    assert "gatesh:" not in past_banner(screen), screen
    sh.run(" echo spa''ced", marker="spaced")
    _again(sh, "echo fi''rst", "first")
    sh.run("echo skip''-me", marker="skip-me")
    _gate_still_works(sh)
    sh.send("exit")
    assert sh.dead_status() == 0
    if setting == "ignore-space-dups":
        saved = (sh.home / ".zsh_history").read_text()
        assert "spa''ced" not in saved
        assert saved.count("echo fi''rst") == 1
    if setting == "history-ignore":
        saved = (sh.home / ".zsh_history").read_text()
        assert "skip''-me" not in saved
        assert "echo fi''rst" in saved


def test_zsh_cases_are_reported_skipped_without_zsh(tmp_path: Path) -> None:
    """S10/README: on a machine without zsh the zsh PTY cases show up as skipped, with the reason."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("tmux", "bash", "sh", "git", "env"):
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rs",
            "-p",
            "no:cacheprovider",
            "-k",
            "zsh",
            str(root / "tests" / "test_pty.py"),
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": str(bin_dir), "HOME": str(tmp_path), "LANG": "C.UTF-8"},
    )
    assert "zsh is not installed" in out.stdout, out.stdout + out.stderr
    assert " skipped" in out.stdout and " passed" not in out.stdout, out.stdout


CHANGES = {
    "bash": "HISTSIZE=1; HISTCONTROL=erasedups; shopt -u cmdhist lithist",
    "zsh": "fc -p; HISTSIZE=1; setopt HIST_IGNORE_SPACE HIST_NO_STORE",
}


@pytest.mark.parametrize("shell", SHELL_PARAMS)
def test_history_changed_by_a_command_does_not_blind_the_gate(
    shell: str, tmp_path: Path, sessions: list[TmuxSession]
) -> None:
    """Changing history settings from inside the session is not tampering (the next entry is read
    with the hook's settings) and leaves every later entry gated, multi-line ones whole."""
    sh = _session(tmp_path, shell, ZSH_FILE if shell == "zsh" else "")
    sessions.append(sh)
    sh.run(CHANGES[shell] + "; echo chan''ged", marker="changed")
    assert "halted" not in sh.screen()
    _gate_still_works(sh)
    marker = sh.work / "loop-ran"
    sh.send(f"for i in 1; do\ntouch {marker}\nrm -rf ~\ndone")
    sh.wait_for(lambda s: s.count("hardline") >= 2, what="the multi-line refusal")
    assert sh.status() == 126
    assert not marker.exists()
