"""Issue 28's route table: every route by which a command reached a gated shell without its gate,
each in several spellings, in bash and zsh where the shell has it, driven at a real PTY in tmux as
an unprivileged user with a stock ``.bashrc`` (tests/_agent_tmux.py).

The config denies one harmless command, ``touch PROBE/MARK`` (PROBE: a scratch folder of the
agent's). For every row:

- the marker never appears (no spelling of the denied command ran), and
- every program the session's shell started (recorded by ``strace -f -e execve`` on the shell)
  is named by an allowed record of the session in the audit log: what ran was decided.

Rows that need a program this machine lacks are skipped, saying which.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests import _agent_tmux
from tests._agent_tmux import AgentTmux, Installed

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bool(_agent_tmux.missing("strace")), reason=_agent_tmux.missing("strace")),
]

P = "PROBE"  # replaced by the session's probe folder


@dataclass(frozen=True)
class Step:
    """One thing typed: ``text`` then Enter; ``paste``: a bracketed paste; ``keys``: tmux key
    names; ``wait``: seconds to let the shell act (a timer, a prompt)."""

    text: str = ""
    paste: str = ""
    keys: tuple[str, ...] = ()
    wait: float = 0.0
    enter: bool = True


def T(text: str) -> Step:
    return Step(text=text)


@dataclass(frozen=True)
class Route:
    cls: str
    spelling: str
    shell: str
    steps: tuple[Step, ...]
    needs: tuple[str, ...] = ()  # programs the row drives

    @property
    def id(self) -> str:
        return f"{self.cls}:{self.spelling}:{self.shell}"


def _both(cls: str, spelling: str, *steps: Step, needs: tuple[str, ...] = ()) -> list[Route]:
    return [Route(cls, spelling, sh, tuple(steps), needs) for sh in ("bash", "zsh")]


REFUSED = T(f"touch {P}/MARK")
# Out of a pager (and its help screen, if the keys typed reached it): q until the shell is back.
QUIT_PAGER = Step(keys=("q",), wait=0.5)
QUIT_VIM = (Step(keys=("Escape",)), T(":qa!"), Step(keys=("Escape",)), T(":qa!"))
ROUTES: list[Route] = [
    # --- history re-execution: the re-run line is decided afresh --------------------------------
    Route("history", "fc -s after refusal", "bash", (REFUSED, T("fc -s"))),
    Route("history", "fc -s PREFIX", "bash", (REFUSED, T("echo between"), T("fc -s touch"))),
    Route("history", "fc -s -1", "bash", (REFUSED, T("fc -s -1"))),
    Route("history", "fc -e - PREFIX", "bash", (REFUSED, T("echo between"), T("fc -e - touch"))),
    Route("history", "history -s; fc -s", "bash", (T(f"history -s 'touch {P}/MARK'"), T("fc -s"))),
    Route(
        "history",
        "history -s printf; fc -s",
        "bash",
        (T(f"history -s \"$(printf 'tou%sh {P}/MARK' c)\""), T("fc -s")),
    ),
    Route("history", "!! (history expansion)", "bash", (REFUSED, T("!!"))),
    Route("history", "r after refusal", "zsh", (REFUSED, T("r"))),
    Route("history", "r PREFIX", "zsh", (REFUSED, T("echo between"), T("r touch"))),
    Route("history", "fc -e - PREFIX", "zsh", (REFUSED, T("echo between"), T("fc -e - touch"))),
    Route("history", "print -s; r", "zsh", (T(f"print -s 'touch {P}/MARK'"), T("r"))),
    Route(
        "history",
        "print -s printf; r",
        "zsh",
        (T(f"print -s \"$(printf 'tou%sh {P}/MARK' c)\""), T("r")),
    ),
    Route("history", "!! (history expansion)", "zsh", (REFUSED, T("!!"))),
    # --- several commands in one input: decided whole before any runs ---------------------------
    *_both("input", "bracketed paste", Step(paste=f"echo one\ntouch {P}/MARK\n"), Step(enter=True)),
    *_both(
        "input",
        "C-v C-j",
        Step(text="echo one", enter=False),
        Step(keys=("C-v", "C-j")),
        T(f"touch {P}/MARK"),
    ),
    *_both(
        "input",
        "paste of a list",
        Step(paste=f"echo one; echo two\nfor i in 1; do\ntouch {P}/MARK\ndone"),
        Step(enter=True),
    ),
    *_both("input", "continuation lines", T("echo one \\"), T(f"&& touch {P}/MARK")),
    # --- aliases built from dynamic text ---------------------------------------------------------
    *_both("alias", "printf value", T(f"alias ll=\"$(printf 'tou%s {P}/MARK' ch)\""), T("ll")),
    *_both("alias", "variable value", T(f"x='touch {P}/MARK'; alias ll=\"$x\""), T("ll")),
    *_both("alias", "ANSI-C value", T(f"alias ll=$'tou\\x63h {P}/MARK'"), T("ll")),
    *_both(
        "alias",
        "used in a pipeline and $(…)",
        T(f"alias ll=\"$(printf 'tou%s {P}/MARK' ch)\""),
        T("ll | cat"),
        T("echo $(ll)"),
    ),
    # --- prompt strings set indirectly -----------------------------------------------------------
    Route("prompt", "PS1 ANSI-C", "bash", (T(f"PS1=$'\\x24(tou\\x63h {P}/MARK) $ '"), T(""))),
    Route(
        "prompt", "printf -v PS1", "bash", (T(f"printf -v PS1 '$(tou%s {P}/MARK) $ ' ch"), T(""))
    ),
    Route("prompt", "read PS1", "bash", (T(f"read -r PS1 <<< '$(touch {P}/MARK) $ '"), T(""))),
    Route("prompt", "set --; PS1=$1", "bash", (T(f"set -- '$(touch {P}/MARK) $ '; PS1=$1"), T(""))),
    Route(
        "prompt", "PS4 + set -x", "bash", (T(f"PS4='$(touch {P}/MARK) '; set -x; true; set +x"),)
    ),
    Route(
        "prompt",
        "PS2 + continuation",
        "bash",
        (T(f"PS2='$(touch {P}/MARK)> '"), T("echo 'a"), T("b'")),
    ),
    Route("prompt", "declare -x PS1", "bash", (T(f"declare -x PS1='$(touch {P}/MARK) $ '"), T(""))),
    Route(
        "prompt",
        "PS1 via eval",
        "bash",
        (T(f'eval "PS1=\'\\$(tou""ch {P}/MARK) $ \'"'), T("")),
    ),
    Route(
        "prompt",
        "promptsubst PS1 ANSI-C",
        "zsh",
        (T(f"setopt promptsubst; PS1=$'\\x24(tou\\x63h {P}/MARK) %% '"), T("")),
    ),
    Route(
        "prompt",
        "print -v PS1",
        "zsh",
        (T(f"setopt promptsubst; print -v PS1 '$(touch {P}/MARK) %% '"), T("")),
    ),
    Route(
        "prompt",
        "read RPS1",
        "zsh",
        (T(f"setopt promptsubst; read -r RPS1 <<< '$(touch {P}/MARK)'"), T("")),
    ),
    Route(
        "prompt",
        "PS4 + xtrace",
        "zsh",
        (T(f"PS4='$(touch {P}/MARK) '; setopt promptsubst xtrace; true; unsetopt xtrace"),),
    ),
    # --- a shell that is not bash or zsh (no `exit` after: were the shell refused, it would end the
    # session; were it started, the marker shows it) ----------------------------------------------
    *_both("shell", "dash", T("dash"), T(f"touch {P}/MARK"), needs=("dash",)),
    *_both("shell", "dash by path", T("/usr/bin/dash"), T(f"touch {P}/MARK"), needs=("dash",)),
    *_both("shell", "env dash -i", T("env dash -i"), T(f"touch {P}/MARK"), needs=("dash",)),
    *_both("shell", "dash -c", T(f"dash -c 'touch {P}/MARK'"), needs=("dash",)),
    *_both("shell", "rbash", T("rbash"), T(f"touch {P}/MARK"), needs=("rbash",)),
    # --- programs that open a shell --------------------------------------------------------------
    *_both(
        "escape",
        "less !cmd",
        T("less notes.txt"),
        Step(text=f"!touch {P}/MARK", wait=0.5),
        QUIT_PAGER,
        needs=("less",),
    ),
    *_both(
        "escape",
        "vim :!cmd",
        T("vim notes.txt"),
        Step(keys=("Escape",), wait=0.3),
        T(f":!touch {P}/MARK"),
        Step(keys=("Enter",), wait=0.3),
        *QUIT_VIM,
        needs=("vim",),
    ),
    *_both(
        "escape",
        "ed !cmd",
        T("ed notes.txt"),
        T(f"!touch {P}/MARK"),
        T("q"),
        needs=("ed",),
    ),
    *_both(
        "escape",
        "man !cmd",
        T("man bash"),
        Step(text=f"!touch {P}/MARK", wait=0.5),
        QUIT_PAGER,
        needs=("man",),
    ),
    *_both(
        "escape",
        "perl -de0",
        T("perl -de0"),
        T(f"system('touch {P}/MARK')"),
        T("q"),
        needs=("perl",),
    ),
    *_both(
        "escape",
        "gdb shell",
        T("gdb -q"),
        T(f"shell touch {P}/MARK"),
        T("quit"),
        needs=("gdb",),
    ),
    *_both(
        "escape",
        "more !cmd",
        T("more notes.txt"),
        # more ends its `!` command line with a line feed (Enter's carriage return stays in it)
        Step(text=f"!touch {P}/MARK", enter=False),
        Step(keys=("C-j",), wait=1.0),
        QUIT_PAGER,
        needs=("more",),
    ),
    *_both(
        "escape",
        "git log pager",
        T("git -c core.pager=less log"),
        Step(text=f"!touch {P}/MARK", wait=0.5),
        QUIT_PAGER,
        needs=("git", "less"),
    ),
    # --- zsh's scheduler and hooks; bash's traps and key bindings -----------------------------------
    Route("sched", "sched +1", "zsh", (T(f"sched +1 touch {P}/MARK"), Step(wait=2.5), T(""))),
    Route("sched", "sched quoted", "zsh", (T(f"sched +1 tou''ch {P}/MARK"), Step(wait=2.5), T(""))),
    Route(
        "sched",
        "sched from a variable",
        "zsh",
        (T(f"x='touch {P}/MARK'; sched +1 $x"), Step(wait=2.5), T("")),
    ),
    Route(
        "sched",
        "periodic",
        "zsh",
        (T(f"periodic() {{ touch {P}/MARK; }}; PERIOD=1"), Step(wait=2.5), T("")),
    ),
    Route(
        "sched",
        "TRAPALRM",
        "zsh",
        (T(f"TRAPALRM() {{ touch {P}/MARK; }}; TMOUT=1"), Step(wait=2.5), T("")),
    ),
    Route(
        "sched",
        "widget",
        "zsh",
        (T(f"w() {{ touch {P}/MARK; }}; zle -N w; bindkey '^T' w"), Step(keys=("C-t",), wait=0.5)),
    ),
    Route(
        "sched",
        "trap USR1",
        "bash",
        (T(f"trap 'touch {P}/MARK' USR1; kill -USR1 $$"),),
    ),
    Route(
        "sched",
        "trap from printf",
        "bash",
        (T(f"trap \"$(printf 'tou%sh {P}/MARK' c)\" USR2; kill -USR2 $$"),),
    ),
    Route(
        "sched",
        "complete -C",
        "bash",
        (
            T(f"complete -C 'touch {P}/MARK' foo"),
            Step(text="foo ", enter=False),
            Step(keys=("Tab",), wait=0.5),
            Step(keys=("C-u",)),
        ),
    ),
    Route(
        "sched",
        "bind -x",
        "bash",
        (T(f"bind -x '\"\\C-t\": touch {P}/MARK'"), Step(keys=("C-t",), wait=0.5)),
    ),
    # --- the deny list matches the command, not its words --------------------------------------
    *_both("deny", "touch -a", T(f"touch -a {P}/MARK")),
    *_both("deny", "double slash", T(f"touch {P}//MARK")),
    *_both("deny", "dot segment", T(f"touch {P}/./MARK")),
    *_both("deny", "cd then relative", T(f"cd {P} && touch MARK; cd -")),
    *_both("deny", "by path", T(f"/usr/bin/touch {P}/MARK")),
    *_both("deny", "--", T(f"touch -- {P}/MARK")),
    *_both("deny", "dot-dot", T(f"touch /tmp/../{P[1:]}/MARK")),
    *_both("deny", "cp /dev/null", T(f"cp /dev/null {P}/MARK")),
    *_both("deny", ": >", T(f": > {P}/MARK")),
    *_both("deny", "xargs", T(f"echo {P}/MARK | xargs touch")),
    *_both("deny", "find -exec", T(f"find {P} -maxdepth 0 -exec touch {{}}/MARK \\;")),
    # A value set on an earlier line: the line is read with the value unknown, so the entry must
    # match what the unknown word may be.
    *_both("deny", "variable", T(f"F={P}/MARK"), T('touch "$F"')),
    *_both("deny", "variable in a subshell", T(f"F={P}/MARK"), T('( touch "$F" )')),
    *_both("deny", "variable in $()", T(f"D={P}"), T('echo $(touch "$D/MARK") | cat')),
]


@pytest.fixture(scope="module")
def installed() -> Iterator[Installed]:
    why = _agent_tmux.missing("strace")
    if why:
        pytest.skip(why)
    with Installed.make() as inst:
        yield inst


def _typed(route: Route, probe: Path) -> list[Step]:
    out = []
    for s in route.steps:
        out.append(
            Step(
                s.text.replace(P, str(probe)),
                s.paste.replace(P, str(probe)),
                s.keys,
                s.wait,
                s.enter,
            )
        )
    return out


def _play(sh: AgentTmux, steps: list[Step]) -> None:
    for s in steps:
        if s.paste:
            sh.paste(s.paste)
            time.sleep(0.3)
        elif s.keys:
            sh.keys(*s.keys)
        elif s.text or s.enter:
            sh.send(s.text, enter=s.enter)
        time.sleep(0.6 + s.wait)


# Programs the gate's own machinery starts (its subshell path, a nested session's relay).
_GATE_PROGRAMS = frozenset({"gatesh", "python", "python3", "tail", "setpriv"})


def _unaudited(sh: AgentTmux, records: list[dict[str, Any]]) -> list[list[str]]:
    """Programs the shell started that no allowed record of the session names."""
    texts = [str(r.get("command", "")) for r in records if r.get("action") == "allow"]
    words = {
        w.rsplit("/", 1)[-1] for t in texts for w in t.replace("'", " ").replace('"', " ").split()
    }
    out = []
    for argv in sh.shell_execs():
        prog = os.path.basename(argv[0]) if argv else ""
        if not prog or prog.startswith("python") or prog in _GATE_PROGRAMS:
            continue
        if prog not in words:
            out.append(argv)
    return out


@pytest.mark.parametrize("route", ROUTES, ids=[r.id for r in ROUTES])
def test_no_route_runs_the_denied_command(route: Route, installed: Installed) -> None:
    if shutil.which(route.shell) is None:
        pytest.skip(f"{route.shell} is not installed")
    missing = [p for p in route.needs if shutil.which(p) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)}")
    sh = AgentTmux(installed, shell=route.shell)
    try:
        (sh.work / "notes.txt").write_text("".join(f"line {i}\n" for i in range(200)))
        os.chown(sh.work / "notes.txt", installed.user.pw_uid, installed.user.pw_gid)
        if "git" in route.needs:
            _repo(sh, installed)
        sh.prompt()
        # The session's first answer may wait for its daemon to start; the route's keys are
        # typed a fraction of a second apart, so start from a session that has answered once.
        sh.sync(deadline=60)
        sh.trace()
        _play(sh, _typed(route, sh.probe))
        _back_to_prompt(sh)
        sh.sync(deadline=30)
        assert not sh.marked(), f"{route.id} ran the denied command:\n{sh.screen()}"
        records = [r for r in sh.audit() if r.get("surface") == "pty"]
        unaudited = _unaudited(sh, records)
        assert not unaudited, f"{route.id}: ran without a record: {unaudited}\n{sh.screen()}"
    finally:
        sh.close()


def _back_to_prompt(sh: AgentTmux) -> None:
    """Out of whatever is open (a pager's help screen, a half-typed line), back at the shell."""

    def at_prompt() -> bool:
        lines = [line for line in sh.screen().splitlines() if line.strip()]
        return bool(lines) and lines[-1].rstrip().endswith(("$", "%"))

    for _ in range(6):
        # A loaded machine may still be answering the last line: give the shell time to come
        # back before typing `q` at it.
        if at_prompt():
            break
        time.sleep(2.0)
        if at_prompt():
            break
        sh.keys("q")
        time.sleep(0.5)
    sh.keys("C-c")
    time.sleep(1.0)
    for _ in range(20):
        if at_prompt():
            break
        time.sleep(0.5)


def _repo(sh: AgentTmux, inst: Installed) -> None:
    import subprocess

    env = {
        **sh.env,
        "GIT_AUTHOR_NAME": "a",
        "GIT_AUTHOR_EMAIL": "a@x",
        "GIT_COMMITTER_NAME": "a",
        "GIT_COMMITTER_EMAIL": "a@x",
    }
    run = [*_agent_tmux.as_user(inst.user), "git", "-C", str(sh.work)]
    subprocess.run([*run, "init", "-q"], env=env, check=True)
    for i in range(60):
        subprocess.run(
            [*run, "commit", "-q", "--allow-empty", "-m", f"commit {i}"], env=env, check=True
        )
