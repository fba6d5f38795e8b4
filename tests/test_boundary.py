"""The boundary's parts (S16): the tables, the walk around protected places, the boundary a
decision draws, the seccomp filter, tickets, the widening, and the hook answers that wrap.

The kernel itself is exercised in tests/test_boundary_kernel.py (slow: real processes) and end to
end in tests/test_boundary_e2e.py.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from gatesh import _paths, hooks
from gatesh._types import Action, Stage
from gatesh.boundary import _kernel, _spec, compute, holds, places, tables
from gatesh.boundary.compute import boundary_for
from gatesh.boundary.tickets import Ticket, Tickets, wrap
from gatesh.boundary.walk import KeepOut, around
from gatesh.config import BoundaryConfig, NetworkDefault, load_config
from gatesh.finish import Answer, choices
from gatesh.pipeline import decide
from gatesh.rater import make_rater
from gatesh.session import SessionState, normalised

HOME = "/home/someone"


# --- the tables read the same rows as the text rules --------------------------------------------


def _resolved_rows() -> dict[str, str]:
    """Each protected path the shared table resolves to here (a glob's folder by the entries it
    picks), by the first row that names it."""
    import glob

    from gatesh.vocab import places as table

    home = os.path.realpath(os.path.expanduser("~"))
    env = {k: os.environ.get(k, "") for k in ("XDG_CONFIG_HOME", "XDG_DATA_HOME")}
    out: dict[str, str] = {}
    for r in table.resolve(home, env, _paths.current().installation(), gate=_paths.current()):
        found = glob.glob(os.path.join(glob.escape(r.path), r.names)) if r.names else [r.path]
        for path in found:
            out.setdefault(os.path.normpath(path), r.place.id)
    return out


def test_the_boundary_keeps_out_exactly_the_rows_of_the_shared_table(tmp_path: Path) -> None:
    """The must-show of S16: the kernel's rules and the text rules read the same rows."""
    home = os.path.realpath(os.path.expanduser("~"))
    (Path(home) / ".ssh").mkdir(exist_ok=True)
    (Path(home) / ".ssh/id_rsa").write_text("not a key\n")
    kept = places.protected_places(_paths.current(), home)
    rows = _resolved_rows()
    assert rows[f"{home}/.ssh/id_rsa"] == "cred.private-keys"
    by_path = {p.path: p for p in kept}
    for path, row in rows.items():  # every row's place is kept out
        assert path in by_path and by_path[path].row == row, path
    for p in kept:  # and nothing else is (a link's target stands for the link)
        assert p.path in rows or any(os.path.realpath(q) == p.path for q in rows), p


def test_credential_stores_are_kept_from_reading_and_the_rest_from_writing() -> None:
    home = os.path.realpath(os.path.expanduser("~"))
    for p in places.protected_places(_paths.current(), home):
        want = (
            places.Access.NO_READ
            if p.group is places.Family.CREDENTIALS
            else places.Access.NO_WRITE
        )
        assert p.access is want, p


def test_a_tree_s_hooks_path_and_harness_settings_are_in_the_tree(repo: Path) -> None:
    home = os.path.realpath(os.path.expanduser("~"))
    tree = os.path.realpath(repo)
    inside = {p.path for p in places.protected_places(_paths.current(), home, tree) if p.in_tree}
    assert f"{tree}/.git/hooks" in inside and f"{tree}/.claude/settings.json" in inside


def test_no_cache_row_is_or_holds_a_protected_place() -> None:
    home = os.path.realpath(os.path.expanduser("~"))
    protected = [p.path for p in places.protected_places(_paths.current(), home)]
    for row in tables.CACHES:
        path = row.path.replace("$CACHE", f"{home}/.cache").replace("~", home, 1)
        assert not KeepOut(protected).holds(path), row
        assert not KeepOut(protected).under(path), row
        assert row.why and row.tools


def test_every_credential_use_names_a_credential_place_of_the_table() -> None:
    from gatesh.vocab import places as table

    home = "/home/someone"
    credential = {
        r.path if not r.names else f"{r.path}/{r.names}"
        for r in table.resolve(home, {}, _paths.NO_INSTALLATION)
        if r.place.kind.family is table.Family.CREDENTIALS
    }
    for row in tables.CREDENTIAL_USES:
        for store in row.stores:
            assert f"{home}/{store}" in credential, (row, store)
        assert row.why and row.heads


def test_network_rows_have_reasons() -> None:
    for row in tables.NETWORK:
        assert row.why and row.heads


# --- the walk ------------------------------------------------------------------------------------


def _tree(tmp_path: Path) -> Path:
    for rel in ("a/x", "a/y", "b", "c/d/e", "c/d/f", "c/g"):
        (tmp_path / rel).mkdir(parents=True)
    (tmp_path / "file").write_text("")
    (tmp_path / "link").symlink_to(tmp_path / "a")
    return tmp_path


def test_a_root_with_nothing_kept_out_is_one_rule(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    assert around(str(root), KeepOut([f"{root}-other"])) == [str(root)]


def test_a_root_inside_a_kept_out_place_gets_nothing(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    assert around(str(root / "c/d"), KeepOut([str(root / "c")])) == []
    assert around(str(root), KeepOut([str(root)])) == []


def test_the_walk_allows_the_siblings_of_a_kept_out_place_not_its_parents(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    got = around(str(root), KeepOut([str(root / "c/d/e")]))
    assert sorted(got) == sorted(
        str(root / p) for p in ("a", "b", "file", "c/d/f", "c/g")
    )  # not root, c or c/d (their new entries stay out), not the link (its target is ruled)


def test_the_walk_is_bounded_by_its_budget(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    budget = [2]
    assert len(around(str(root), KeepOut([str(root / "c/d/e")]), budget)) == 2
    assert budget[0] == 0 and around(str(root / "a"), KeepOut([]), budget) == []


def test_the_walk_sees_a_new_entry(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    keep = KeepOut([str(root / "c/d/e")])
    before = around(str(root), keep)
    time.sleep(0.01)
    (root / "new").mkdir()
    assert str(root / "new") in around(str(root), keep) and str(root / "new") not in before


# --- the boundary a decision draws -----------------------------------------------------------------


def _decision(command: str, cwd: str, session: SessionState | None = None):  # type: ignore[no-untyped-def]
    config = load_config(cwd)
    return decide(command, cwd=cwd, config=config, session=session, rater=make_rater(config))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository holding a project script gatesh does not read (its effects are not modelled)."""
    import subprocess

    r = tmp_path / "repo"
    (r / "tools").mkdir(parents=True)
    (r / "tools/x.py").write_text("import requests\nrequests.get('https://example.com')\n")
    subprocess.run(["git", "init", "-q", str(r)], check=True)
    return r


def _needs_landlock() -> None:
    why = holds.needs("writes")
    if why:
        pytest.skip(why)


def test_the_tree_is_writable_and_the_home_is_not(repo: Path) -> None:
    _needs_landlock()
    d = _decision("python3 tools/x.py", str(repo))
    b = boundary_for(d, str(repo), BoundaryConfig(), _paths.current())
    assert b is not None and b.tree == os.path.realpath(repo)
    assert os.path.realpath(repo) in b.writable
    home = os.path.realpath(os.path.expanduser("~"))
    assert home not in b.write
    assert places.Family.GATE in b.kept_out and places.Family.CREDENTIALS in b.kept_out
    wire = b.wire().encode()
    assert wire["v"] == 1 and wire["id"] == b.id and wire["scope"] == ["signal", "abstract-unix"]
    assert set(wire["limits"]) == {"nproc", "data", "fsize", "cpu"}  # type: ignore[arg-type]
    assert _spec.Spec.decode(json.loads(json.dumps(wire))) == b.wire()


def test_a_missing_cache_folder_is_made_and_writable(
    repo: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fresh account has no ~/.cache yet; a confined command cannot make it (its home is not
    writable), so the gate makes it (0700) and grants it, as the XDG cache a build writes."""
    _needs_landlock()
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)  # the cache is then ~/.cache
    cache = isolated_home / ".cache"
    if cache.exists():
        shutil.rmtree(cache)
    compute._static_roots.cache_clear()
    d = _decision("go build ./...", str(repo))
    b = boundary_for(d, str(repo), BoundaryConfig(), _paths.current())
    assert b is not None and cache.is_dir() and (cache.stat().st_mode & 0o777) == 0o700
    assert os.path.realpath(cache) in b.writable


def test_the_kill_switch_draws_no_boundary(repo: Path) -> None:
    d = _decision("ls", str(repo))
    assert boundary_for(d, str(repo), BoundaryConfig(enabled=False), _paths.current()) is None


def test_network_follows_what_the_command_needs(repo: Path) -> None:
    _needs_landlock()
    cfg = BoundaryConfig()

    def net(command: str, config: BoundaryConfig = cfg) -> bool:
        b = boundary_for(_decision(command, str(repo)), str(repo), config, _paths.current())
        assert b is not None
        return b.network.open

    assert not net("ls -l")  # read whole, needs none
    assert not net("git commit -m x")
    assert net("git push")  # the table
    assert net("npm install")
    assert net("curl -sL https://example.com -o page.html")  # a host
    assert not net("python3 tools/x.py")  # unread: the default, closed
    assert net("python3 tools/x.py", BoundaryConfig(network_unread=NetworkDefault.OPEN))


def test_unread_code_gets_the_default_network_and_explain_says_why(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The network of code gatesh did not read is ``boundary.network_unread``, closed unless a
    person opens it; explain names the setting and what it lets such code do (S16)."""
    from gatesh.boundary.compute import network_for
    from gatesh.explain import explain_main

    assert BoundaryConfig().network_unread is NetworkDefault.CLOSED
    d = _decision("python3 tools/x.py", str(repo))
    closed = network_for(d, BoundaryConfig())
    opened = network_for(d, BoundaryConfig(network_unread=NetworkDefault.OPEN))
    assert closed.unread and not closed.open and "network_unread = closed" in closed.why
    assert opened.unread and opened.open and "network_unread = open" in opened.why
    read_whole = network_for(_decision("git commit -m x", str(repo)), BoundaryConfig())
    assert not read_whole.unread and not read_whole.open
    _needs_landlock()
    assert explain_main(["--cwd", str(repo), "python3 tools/x.py"]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if "network" in ln)
    assert line.split() == ["network", "closed:", *closed.why.split()]
    assert "what such code reads, it cannot send" in line


def test_a_program_read_whole_may_read_the_stores_it_uses(repo: Path) -> None:
    _needs_landlock()
    home = Path(os.path.expanduser("~"))
    (home / ".ssh").mkdir(exist_ok=True)
    (home / ".ssh/id_ed25519").write_text("not a key\n")
    cfg = BoundaryConfig()
    push = boundary_for(_decision("git push", str(repo)), str(repo), cfg, _paths.current())
    script = boundary_for(
        _decision("python3 tools/x.py", str(repo)), str(repo), cfg, _paths.current()
    )
    key = os.path.realpath(home / ".ssh/id_ed25519")
    assert push is not None and key in push.readable_stores and key not in push.unreadable
    assert script is not None and key in script.unreadable and not script.readable_stores


def test_a_widened_boundary_keeps_nothing_out_but_the_processes(repo: Path) -> None:
    _needs_landlock()
    d = _decision("python3 tools/x.py", str(repo))
    b = boundary_for(d, str(repo), BoundaryConfig(), _paths.current(), widened=True)
    assert b is not None and b.write == ("/",) and b.read == ("/",) and b.network.open
    assert b.wire().rules.scope == ("signal", "abstract-unix") and "widened" in b.summary()


def test_an_agent_session_boundary(repo: Path) -> None:
    _needs_landlock()
    b = boundary_for(None, str(repo), BoundaryConfig(), _paths.current())
    assert b is not None and b.network.open and os.path.realpath(repo) in b.writable


def test_the_home_folder_is_never_a_working_folder(tmp_path: Path) -> None:
    _needs_landlock()
    home = os.path.expanduser("~")
    d = _decision("python3 x.py", home)
    b = boundary_for(d, home, BoundaryConfig(), _paths.current())
    assert b is not None and b.tree == "" and os.path.realpath(home) not in b.write


# --- the seccomp filter -----------------------------------------------------------------------------


def _run_bpf(prog: bytes, data: bytes) -> int:
    """A classic BPF interpreter for the four instructions the filter uses."""
    pc = 0
    acc = 0
    while True:
        code = int.from_bytes(prog[pc * 8 : pc * 8 + 2], "little")
        jt, jf = prog[pc * 8 + 2], prog[pc * 8 + 3]
        k = int.from_bytes(prog[pc * 8 + 4 : pc * 8 + 8], "little")
        if code == 0x20:
            acc = int.from_bytes(data[k : k + 4], "little")
            pc += 1
        elif code == 0x54:
            acc &= k
            pc += 1
        elif code == 0x15:
            pc += 1 + (jt if acc == k else jf)
        elif code == 0x06:
            return k
        else:
            raise AssertionError(f"unknown instruction {code:#x}")


def _data(arch: int, nr: int, *args: int) -> bytes:
    out = nr.to_bytes(4, "little") + arch.to_bytes(4, "little") + bytes(8)
    for a in (*args, 0, 0, 0, 0, 0, 0)[:6]:
        out += a.to_bytes(8, "little")
    return out


ALLOW, DENY, REFUSE = 0x7FFF0000, 0x00050001, 0x0005000D
X86_64, I386 = 0xC000003E, 0x40000003
AARCH64, ARM = 0xC00000B7, 0x40000028


@pytest.mark.parametrize(
    ("machine", "data", "want"),
    [
        ("x86_64", _data(X86_64, 302, 0, 7, 0xDEAD), ALLOW),  # prlimit of itself
        ("x86_64", _data(X86_64, 302, 4242, 7, 0xDEAD), DENY),  # of another process
        ("x86_64", _data(X86_64, 302, 4242, 7, 1 << 32), DENY),  # a pointer above 4 GiB
        ("x86_64", _data(X86_64, 302, 4242, 7, 0, 0xBEEF), ALLOW),  # reading another's
        ("x86_64", _data(X86_64, 302, 1 << 33, 7, 0xDEAD), DENY),  # high word of the pid
        ("x86_64", _data(X86_64, 302 | 0x40000000, 4242, 7, 0xDEAD), DENY),  # x32
        ("x86_64", _data(I386, 340, 4242, 7, 0xDEAD), DENY),  # the i386 table
        ("x86_64", _data(X86_64, 16, 0, 0x5412), DENY),  # TIOCSTI
        (
            "x86_64",
            _data(X86_64, 16, 0, (1 << 40) | 0x5412),
            DENY,
        ),  # high bits ignored by the kernel
        ("x86_64", _data(I386, 54, 0, 0x5412), DENY),
        ("x86_64", _data(X86_64, 16, 0, 0x5413), ALLOW),  # TIOCGWINSZ
        ("x86_64", _data(X86_64, 0, 0, 0), ALLOW),  # read
        ("x86_64", _data(0x1234, 302, 4242, 7, 0xDEAD), ALLOW),  # an arch it does not know
        ("aarch64", _data(AARCH64, 261, 4242, 7, 0xDEAD), DENY),
        ("aarch64", _data(AARCH64, 261, 0, 7, 0xDEAD), ALLOW),
        ("aarch64", _data(ARM, 369, 4242, 7, 0xDEAD), DENY),
        ("aarch64", _data(AARCH64, 29, 0, 0x5412), DENY),
        ("aarch64", _data(AARCH64, 29, 0, 0x5401), ALLOW),
    ],
)
def test_the_seccomp_filter(machine: str, data: bytes, want: int) -> None:
    for closed in (False, True):
        prog = _kernel.seccomp_program(machine, closed)
        assert prog is not None
        assert _run_bpf(prog, data) == want


AF_INET, AF_INET6, AF_UNIX, AF_NETLINK, AF_PACKET = 2, 10, 1, 16, 17
STREAM, DGRAM, RAW, SEQPACKET = 1, 2, 3, 5
NONBLOCK, CLOEXEC = 0o4000, 0o2000000


@pytest.mark.parametrize(
    ("machine", "data", "closed", "opened"),
    [
        ("x86_64", _data(X86_64, 41, AF_INET, STREAM, 0), ALLOW, ALLOW),  # TCP: Landlock's
        ("x86_64", _data(X86_64, 41, AF_INET6, STREAM | CLOEXEC, 6), ALLOW, ALLOW),
        ("x86_64", _data(X86_64, 41, AF_INET, DGRAM, 0), REFUSE, ALLOW),  # UDP
        ("x86_64", _data(X86_64, 41, AF_INET, DGRAM | CLOEXEC, 17), REFUSE, ALLOW),
        ("x86_64", _data(X86_64, 41, AF_INET6, DGRAM | NONBLOCK | CLOEXEC, 0), REFUSE, ALLOW),
        ("x86_64", _data(X86_64, 41, AF_INET, DGRAM, 1), REFUSE, ALLOW),  # ICMP ping socket
        ("x86_64", _data(X86_64, 41, AF_INET6, RAW, 58), REFUSE, ALLOW),
        ("x86_64", _data(X86_64, 41, AF_INET, SEQPACKET, 132), REFUSE, ALLOW),  # SCTP
        ("x86_64", _data(X86_64, 41, AF_INET, STREAM, 132), REFUSE, ALLOW),  # SCTP
        ("x86_64", _data(X86_64, 41, AF_INET, STREAM, 262), REFUSE, ALLOW),  # MPTCP
        ("x86_64", _data(X86_64, 41, AF_INET, (1 << 40) | DGRAM, 0), REFUSE, ALLOW),
        ("x86_64", _data(X86_64, 41, AF_PACKET, RAW, 0x300), REFUSE, ALLOW),
        ("x86_64", _data(X86_64, 41, AF_UNIX, DGRAM, 0), ALLOW, ALLOW),
        ("x86_64", _data(X86_64, 41, AF_NETLINK, RAW, 0), ALLOW, ALLOW),
        ("x86_64", _data(X86_64, 41 | 0x40000000, AF_INET, DGRAM, 0), REFUSE, ALLOW),  # x32
        ("x86_64", _data(I386, 359, AF_INET, DGRAM, 0), REFUSE, ALLOW),  # the i386 table
        ("x86_64", _data(I386, 359, AF_UNIX, STREAM, 0), ALLOW, ALLOW),
        ("x86_64", _data(I386, 102, 1, 0xBEEF), REFUSE, ALLOW),  # socketcall(SYS_SOCKET, …)
        ("x86_64", _data(X86_64, 102, 0), ALLOW, ALLOW),  # getuid, not socketcall
        ("x86_64", _data(X86_64, 425, 8, 0xBEEF), REFUSE, ALLOW),  # io_uring_setup
        ("x86_64", _data(I386, 425, 8, 0xBEEF), REFUSE, ALLOW),
        ("x86_64", _data(X86_64, 42, 3, 0xBEEF, 16), ALLOW, ALLOW),  # connect: Landlock's
        ("aarch64", _data(AARCH64, 198, AF_INET, DGRAM, 0), REFUSE, ALLOW),
        ("aarch64", _data(AARCH64, 198, AF_INET, STREAM, 0), ALLOW, ALLOW),
        ("aarch64", _data(AARCH64, 198, AF_PACKET, DGRAM, 0), REFUSE, ALLOW),
        ("aarch64", _data(AARCH64, 198, AF_UNIX, STREAM, 0), ALLOW, ALLOW),
        ("aarch64", _data(ARM, 281, AF_INET6, DGRAM, 0), REFUSE, ALLOW),
        ("aarch64", _data(AARCH64, 425, 8, 0xBEEF), REFUSE, ALLOW),
    ],
)
def test_a_closed_network_leaves_sockets_tcp_and_unix(
    machine: str, data: bytes, closed: int, opened: int
) -> None:
    """With the network closed, an Internet socket is TCP or nothing (Landlock confines TCP
    only), whatever flags ride on its type; with it open, the filter lets every socket be."""
    for net_closed, want in ((True, closed), (False, opened)):
        prog = _kernel.seccomp_program(machine, net_closed)
        assert prog is not None
        assert _run_bpf(prog, data) == want


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_filter_installed_is_the_one_assembled(machine: str) -> None:
    """The client installs a filter assembled ahead (S14): it must be, byte for byte, the one
    the cases above run, for every architecture the boundary knows and either network."""
    assert set(_kernel._SECCOMP_ASSEMBLED) == set(_kernel._SECCOMP_ARCHES)
    for closed in (False, True):
        little = _kernel.seccomp_program(machine, closed) if sys.byteorder == "little" else None
        hexed = _kernel._SECCOMP_ASSEMBLED[machine][closed]
        assert little is None or bytes.fromhex(hexed) == little


def test_no_filter_for_an_unknown_architecture() -> None:
    assert _kernel.seccomp_program("riscv64") is None


# --- what holds ------------------------------------------------------------------------------------


def test_why_what_the_kernel_denied_is_not_named() -> None:
    assert holds.denials(0) == "this kernel offers no Landlock"
    assert "ABI 6" in holds.denials(6) and "ABI 7" in holds.denials(6)
    why = holds.denials(7)  # asked of this kernel's audit subsystem
    assert "audit" in why and ("CAP_AUDIT_READ" in why or "switched on" in why)


def test_what_holds_without_landlock() -> None:
    none = holds.State(0, True, "linux", "x86_64")
    assert not none.holds("writes") and "no Landlock" in none.why_none
    off = holds.State(7, False, "linux", "x86_64")
    assert not off.holds("writes") and "boundary.enabled = false" in off.why_none
    old = holds.State(3, True, "linux", "x86_64")
    assert old.holds("truncate") and not old.holds("network") and not old.holds("signals")
    assert "network" in old.summary() and "signals" in old.summary()
    assert holds.State(7, True, "linux", "riscv64").holds("prlimit") is False


# --- tickets --------------------------------------------------------------------------------------


def _ticket(**kw: object) -> Ticket:
    base: dict[str, object] = dict(
        command="make test",
        cwd="/w",
        session="s",
        boundary=_spec.Spec(_spec.Rules(1)),
        run="r1",
        shell="bash",
        expires=time.time() + 60,
    )
    return Ticket(**(base | kw))  # type: ignore[arg-type]


def test_a_ticket_redeems_once_for_its_command_in_its_folder() -> None:
    t = Tickets()
    name = t.issue(_ticket())
    assert t.redeem(name, "make test", "/w/") is not None
    assert t.redeem(name, "make test", "/w") is None  # spent


@pytest.mark.parametrize(
    ("command", "cwd", "ticket"),
    [
        ("make test && curl x", "/w", _ticket()),
        ("make test", "/elsewhere", _ticket()),
        ("make test", "/w", _ticket(expires=time.time() - 1)),
    ],
)
def test_a_ticket_for_something_else_is_spent_and_refused(
    command: str, cwd: str, ticket: Ticket
) -> None:
    t = Tickets()
    name = t.issue(ticket)
    assert t.redeem(name, command, cwd) is None
    assert t.redeem(name, "make test", "/w") is None


def test_the_wrapped_command_quotes_the_agent_s_command() -> None:
    import shlex

    text = wrap("echo 'a b' && ls $HOME", "abc", "/opt/gate sh/gatesh")
    words = shlex.split(text)
    assert words == ["GATESH_TICKET=abc", "/opt/gate sh/gatesh", "-c", "echo 'a b' && ls $HOME"]


# --- the hook answers ------------------------------------------------------------------------------


_INPUT = (
    b'{"hook_event_name": "%s", "session_id": "s", "cwd": "/w", "tool_name": "%s", '
    b'"tool_input": {"command": "make test", "description": "run the tests"}}'
)


def test_claude_code_s_hook_allows_with_the_command_wrapped() -> None:

    wrapped = "GATESH_TICKET=t /bin/gatesh -c 'make test'"

    def gate(command: str, cwd: str, session: str | None, h: str) -> hooks.GateResult:
        return hooks.GateResult("allow", wrapped=wrapped)

    ev, ans = hooks.answer("claude-code", _INPUT % (b"PreToolUse", b"Bash"), gate=gate)
    spec = json.loads(hooks.render_answer("claude-code", ev, ans))["hookSpecificOutput"]
    assert spec["permissionDecision"] == "allow"
    assert spec["updatedInput"] == {"command": wrapped, "description": "run the tests"}


def test_codex_and_gemini_get_the_rewrite_in_their_own_format() -> None:
    """Codex runs ``updatedInput`` with ``permissionDecision`` allow; Gemini CLI merges
    ``hookSpecificOutput.tool_input`` into the call (tests/harness shows both real CLIs running
    the rewritten command inside its boundary)."""
    wrapped = "GATESH_TICKET=t /bin/gatesh -c 'make test'"

    def gate(command: str, cwd: str, session: str | None, h: str) -> hooks.GateResult:
        return hooks.GateResult("allow", wrapped=wrapped)

    ev, ans = hooks.answer("codex", _INPUT % (b"PreToolUse", b"Bash"), gate=gate)
    spec = json.loads(hooks.render_answer("codex", ev, ans))["hookSpecificOutput"]
    assert spec["permissionDecision"] == "allow" and spec["updatedInput"]["command"] == wrapped
    ev, ans = hooks.answer("gemini", _INPUT % (b"BeforeTool", b"run_shell_command"), gate=gate)
    out = json.loads(hooks.render_answer("gemini", ev, ans))
    assert out["decision"] == "allow"
    assert out["hookSpecificOutput"]["tool_input"]["command"] == wrapped


@pytest.mark.parametrize(
    ("harness", "event", "tool"),
    [("codex", b"PreToolUse", b"Bash"), ("gemini", b"BeforeTool", b"run_shell_command")],
)
def test_an_allow_without_a_ticket_is_not_rewritten(
    harness: str, event: bytes, tool: bytes
) -> None:
    def gate(command: str, cwd: str, session: str | None, h: str) -> hooks.GateResult:
        return hooks.GateResult("allow")

    ev, ans = hooks.answer(harness, _INPUT % (event, tool), gate=gate)
    assert ans.decision == "allow" and ans.updated is None
    text = hooks.render_answer(harness, ev, ans)
    assert "updatedInput" not in text and "tool_input" not in text


def test_a_hook_without_a_ticket_allows_as_before() -> None:
    def gate(command: str, cwd: str, session: str | None, h: str) -> hooks.GateResult:
        return hooks.GateResult("allow")

    ev, ans = hooks.answer("claude-code", _INPUT % (b"PreToolUse", b"Bash"), gate=gate)
    assert ans.updated is None and "updatedInput" not in hooks.render_answer("claude-code", ev, ans)


# --- the widening (S16, item 5) ------------------------------------------------------------------


def test_a_justified_retry_of_a_command_that_failed_in_its_boundary_asks_a_person(
    repo: Path,
) -> None:
    state = SessionState(id="w")
    first = _decision("python3 tools/x.py", str(repo), state)
    assert first.action is Action.ALLOW
    state.note_boundary_failure(normalised(first.facts), "b-1")
    plain = _decision("python3 tools/x.py", str(repo), state)
    assert plain.action is Action.ALLOW  # no justification: it runs inside its boundary again
    asked = _decision("python3 tools/x.py  # why: it writes ~/.cache/x", str(repo), state)
    assert asked.action is Action.ESCALATE and asked.stage is Stage.BOUNDARY
    assert "b-1" in asked.reason and "widened" in asked.to_person_reason
    assert choices(asked) == (Answer.ONCE, Answer.NO)


def test_a_refused_command_is_not_turned_into_a_widening(repo: Path) -> None:
    state = SessionState(id="w")
    d = _decision("git reset --hard HEAD~3", str(repo), state)
    state.note_boundary_failure(normalised(d.facts), "b-1")
    again = _decision("git reset --hard HEAD~3  # why: scratch", str(repo), state)
    assert again.stage is not Stage.BOUNDARY


def test_a_push_to_a_local_repository_may_write_it(repo: Path, tmp_path: Path) -> None:
    """A push to a local bare repository writes its objects and refs: by path, by file:// URL or
    through a remote whose configured URL is local; a network remote and a fetch grant nothing."""
    import subprocess

    _needs_landlock()
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    other = tmp_path / "other"
    other.mkdir()
    subprocess.run(["git", "-C", str(repo), "remote", "add", "origin", str(bare)], check=True)
    subprocess.run(
        ["git", "-C", str(repo), "remote", "add", "far", "https://example.com/x.git"], check=True
    )
    real = os.path.realpath(bare)
    cfg = BoundaryConfig()

    def writable(command: str) -> tuple[str, ...]:
        b = boundary_for(_decision(command, str(repo)), str(repo), cfg, _paths.current())
        assert b is not None
        return b.writable

    for push in (
        "git push -q origin HEAD:refs/heads/topic",
        "git push",
        f"git push {bare} HEAD:topic",
        f"git push file://{bare} HEAD:topic",
        f"cd {tmp_path} && git -C {repo} push origin HEAD:topic",
    ):
        assert real in writable(push), push
    for other_command in (
        "git push far HEAD:topic",
        f"git push {other} HEAD:topic",  # no repository
        "git fetch origin",
        f"git --git-dir={repo}/.git push origin HEAD:topic",  # not read: nothing granted
        "git push $R HEAD:topic",
    ):
        assert real not in writable(other_command), other_command


def test_a_push_never_opens_a_machine_folder() -> None:
    from gatesh.boundary.pushes import local_repository

    home = os.path.realpath(os.path.expanduser("~"))
    for url in ("/etc", "file:///usr", "/", "https://example.com/x.git", "host:/srv/x.git"):
        assert local_repository(url, "/", home) == "", url


def test_a_handed_boundary_without_its_ruleset_runs_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from gatesh import client
    from gatesh._wire import CheckResult

    limits = (("nproc", 4096), ("data", 1 << 33), ("fsize", 1 << 32), ("cpu", 3600))
    spec = _spec.Spec(_spec.Rules(7), limits).handing(3)
    result = CheckResult("allow", boundary=spec.encode())
    assert result.ruleset_fd == -1
    status = client._run_bounded("/bin/sh", ["sh", "-c", "exit 0"], {}, result)
    assert status == 126 and "without its boundary's rules" in capsys.readouterr().err
