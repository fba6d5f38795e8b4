"""The shared vocabulary (``gatesh.vocab``): one table per domain, and every layer uses it."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import gatesh
from gatesh.vocab import hosts
from gatesh.vocab.hosts import HostRef, hosts_in, is_loopback
from gatesh.vocab.programs import interpreters, shells
from gatesh.vocab.programs.interpreters import inline_opts, interpreter, is_interpreter
from gatesh.vocab.programs.shells import PARSED_SHELLS, SHELL_ROWS, SHELLS, Family

# --- programs ------------------------------------------------------------------------------------


def test_shell_rows_are_unique_and_explained() -> None:
    names = [s.name for s in SHELL_ROWS]
    assert len(names) == len(set(names))
    assert all(s.note and s.code_opts for s in SHELL_ROWS)
    assert PARSED_SHELLS == {s.name for s in SHELL_ROWS if s.family is Family.BOURNE}
    # every family an agent could reach is a row (issue 14's list)
    for name in (
        "sh",
        "bash",
        "dash",
        "ash",
        "ksh",
        "mksh",
        "oksh",
        "ksh93",
        "zsh",
        "yash",
        "posh",
        "csh",
        "tcsh",
        "fish",
        "rc",
        "es",
        "elvish",
        "nu",
        "xonsh",
        "pwsh",
    ):
        assert name in SHELLS, name
    assert not PARSED_SHELLS & {
        "csh",
        "tcsh",
        "fish",
        "rc",
        "es",
        "elvish",
        "nu",
        "xonsh",
        "pwsh",
        "cmd",
    }


def test_interpreters_and_shells_do_not_overlap() -> None:
    assert not SHELLS & interpreters.INTERPRETERS
    assert all(interpreter(s) is None for s in SHELLS)


@pytest.mark.parametrize(
    ("head", "row"),
    [
        ("python3", "python"),
        ("python3.11", "python"),
        ("perl5.36", "perl"),
        ("lua5.4", "lua"),
        ("node", "node"),
        ("gawk", "gawk"),
        ("r", "r"),
    ],
)
def test_versioned_interpreters_are_their_row(head: str, row: str) -> None:
    found = interpreter(head)
    assert found is not None and found.name == row


@pytest.mark.parametrize(
    "head", ["pythonista", "perltidy", "phpunit", "nodemon", "bundle", "luarocks", "bash", "ls"]
)
def test_names_that_only_start_like_an_interpreter_are_not_one(head: str) -> None:
    assert not is_interpreter(head)


def test_inline_options() -> None:
    assert inline_opts("python3") == {"-c"}
    assert "-e" in inline_opts("perl") and "-E" in inline_opts("perl")
    assert "-c" in inline_opts("fish") and "--command" in inline_opts("fish")
    assert "-command" in inline_opts("pwsh")
    assert inline_opts("ls") == frozenset()


def _module_names() -> list[str]:
    return [
        m.name
        for m in pkgutil.walk_packages(gatesh.__path__, "gatesh.")
        if not m.name.startswith(("gatesh.testing", "gatesh.shell")) and m.name != "gatesh.__main__"
    ]


def test_no_layer_keeps_a_shell_or_loopback_table_of_its_own() -> None:
    """Every module that holds a set named like a shell or interpreter table holds the vocabulary's
    own (or one built from it): the four SHELLS sets and three interpreter lists are gone."""
    for name in _module_names():
        if name.startswith("gatesh.vocab"):
            continue
        module = importlib.import_module(name)
        for attr in ("SHELLS", "INTERPRETERS", "INTERPRETER_PREFIXES", "_LOOPBACK"):
            value = getattr(module, attr, None)
            if value is None:
                continue
            assert attr == "SHELLS", f"{name}.{attr} is a table of its own"
            assert set(value) <= SHELLS | shells.MULTICALL, (
                f"{name}.SHELLS names shells the vocabulary does not"
            )


# --- hosts ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "host",
    [
        "localhost",
        "LOCALHOST.",
        "localhost.localdomain",
        "ip6-localhost",
        "app.localhost",
        "127.0.0.1",
        "127.1",
        "0x7f000001",
        "2130706433",
        "::1",
        "[::1]",
        "::ffff:127.0.0.1",
        "0.0.0.0",
    ],
)
def test_loopback(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize(
    "host", ["example.com", "10.0.0.5", "::2", "localhost.example.com", "", "[", "local"]
)
def test_not_loopback(host: str) -> None:
    assert not is_loopback(host)


@pytest.mark.parametrize(
    ("head", "args", "want"),
    [
        ("curl", ["-fsSL", "https://Get.Example.com/i.sh"], [HostRef("get.example.com", True)]),
        (
            "curl",
            ["-H", "Referer: https://a.example", "https://b.example"],
            [HostRef("b.example", True), HostRef("a.example", False)],
        ),
        ("curl", ["example.com"], [HostRef("example.com", True)]),
        ("curl", ["-o", "out.html", "./x"], []),
        ("npm", ["install", "lodash@4.17.21"], []),
        ("npm", ["create", "vite@latest", "app"], []),
        (
            "npm",
            ["install", "--registry=https://registry.example", "pkg"],
            [HostRef("registry.example", True)],
        ),
        ("ssh", ["-fNR", "1234:localhost:22", "root@203.0.113.9"], [HostRef("203.0.113.9", True)]),
        ("ssh", ["-X", "me@build.example"], [HostRef("build.example", True)]),
        ("ssh", ["-p", "22", "prod", "uptime"], [HostRef("prod", True)]),
        ("ssh", ["-q", "$HOST", "ls"], []),
        ("nc", ["-l", "4444"], []),
        ("nc", ["-zv", "host.example", "22"], [HostRef("host.example", True)]),
        ("git", ["-C", "repo", "clone", "git@github.com:a/b.git"], [HostRef("github.com", True)]),
        ("git", ["log", "https://example.com"], []),
        ("aws", ["s3", "cp", "out.tgz", "s3://my-bucket/"], [HostRef("my-bucket", True)]),
        ("ping", ["-c", "1", "8.8.8.8"], [HostRef("8.8.8.8", False)]),
        ("ls", ["https://example.com"], []),
    ],
)
def test_hosts_in(head: str, args: list[str], want: list[HostRef]) -> None:
    assert list(hosts_in(head, args)) == want


def test_host_tools_are_unique() -> None:
    names = [n for row in hosts.TOOL_ROWS for n in row.names]
    assert len(names) == len(set(names))
