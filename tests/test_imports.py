"""The module graph, computed from the source: no import circle among gatesh's modules (imports
inside functions included), and the ``-c`` client and the hook adapter load only the standard
library, and only its cheapest parts (S9.4, S14).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _daemon import stop_daemon

PACKAGE = Path(__file__).resolve().parent.parent / "gatesh"
ROOT = PACKAGE.parent
# The ``-c`` path: what gatesh._entry loads to gate a command through the daemon and exec it.
C_CLIENT_MODULES = {
    "gatesh",
    "gatesh._entry",
    "gatesh._errors",
    "gatesh._invoke",
    "gatesh._wire",
    "gatesh._wire_base",
    "gatesh.client",
}
# ... and, where the kernel offers Landlock, the boundary's client half, the report of how its
# command ended, and the two C modules it talks to the kernel through (S16).
BOUNDED_CLIENT_MODULES = {
    "gatesh._wire_exit",
    "gatesh.boundary",
    "gatesh.boundary._kernel",
    "gatesh.boundary._parent",
    "gatesh.boundary._spec",
}
BOUNDED_STDLIB = {"_ctypes", "_signal"}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, module: str, is_package: bool) -> list[str]:
    """Every module ``tree`` imports when it runs, wherever the statement is (a function body
    included); ``if TYPE_CHECKING:`` blocks are left out (they never run)."""
    found: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = module.split(".") if is_package else module.split(".")[:-1]
                here = here[: len(here) - (node.level - 1)]
                base = ".".join([*here, base] if base else here)
            found.extend(
                f"{base}.{a.name}" for a in node.names
            )  # resolved to base when not a module
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def module_graph() -> dict[str, set[str]]:
    """module -> the gatesh modules it imports. ``from P import N`` is an arrow to ``P.N`` when N
    is a module, else to P (a package is not charged with the parents Python imports first).
    The CLI's subcommand table (loaded with importlib) is arrows too."""
    mods = _modules()

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in mods}
    for module, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = _imports(tree, module, path.name == "__init__.py")
        if module == "gatesh.cli":
            from gatesh.cli import SUBCOMMANDS

            names += [target.partition(":")[0] for target, _ in SUBCOMMANDS.values()]
        for name in names:
            if name.split(".")[0] != "gatesh":
                continue
            target = resolve(name)
            if target is not None and target != module:
                graph[module].add(target)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    """The module graph, read once for the module's tests (each read parses every module)."""
    return module_graph()


def test_circles_are_found() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_imports_inside_functions(graph: dict[str, set[str]]) -> None:
    assert "gatesh.pty" in graph["gatesh._entry"]  # imported inside main()
    assert "gatesh.daemon.server" in graph["gatesh.cli"]  # the subcommand table


def test_no_import_circle(graph: dict[str, set[str]]) -> None:
    assert circles(graph) == []


# The parts of the house and the arrows that must never exist between them (the data flows one way:
# text -> facts -> findings -> decision -> messages). A part is a set of module-name prefixes.
PARTS: dict[str, tuple[str, ...]] = {
    "Reading": ("gatesh.reading",),
    "Policy": ("gatesh.policy",),
    "Rater": ("gatesh.rater",),
    "Decide": ("gatesh.pipeline", "gatesh.alignment", "gatesh.negotiation"),
    "Daemon": ("gatesh.daemon",),
    "InProcess": ("gatesh.inprocess",),
    "Hooks": ("gatesh.hooks", "gatesh.githooks"),
    "Client": (
        "gatesh.client",
        "gatesh._wire",
        "gatesh._wire_base",
        "gatesh._wire_exit",
        "gatesh._wire_start",
        "gatesh._entry",
        "gatesh.launcher",
    ),
}
NEVER: list[tuple[str, str, str]] = [
    ("Decide", "Daemon", "the decision knows no transport"),
    ("Decide", "Hooks", "the decision knows no harness"),
    ("Daemon", "Hooks", "the daemon knows no harness format"),
    ("InProcess", "Daemon", "the fallback must not need the daemon"),
    ("Client", "Reading", "the -c client is stdlib only"),
    ("Client", "Rater", "the -c client is stdlib only"),
    ("Client", "Daemon", "the client speaks the protocol, not the server"),
    ("Reading", "Policy", "facts come before findings"),
    ("Reading", "Rater", "facts come before findings"),
    ("Rater", "Policy", "the rater does not reach into policy internals"),
    ("Policy", "Rater", "floors and rater stay apart"),
    ("Policy", "Hooks", "policy knows no harness or git-hook module (their names are vocabulary)"),
]


def _part(module: str) -> str | None:
    for part, prefixes in PARTS.items():
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return part
    return None


def test_no_part_imports_a_part_it_must_never_reach(graph: dict[str, set[str]]) -> None:
    found = sorted(
        f"{a} -> {b} ({why}): {m} imports {n}"
        for m, names in graph.items()
        for n in names
        for a, b, why in NEVER
        if _part(m) == a and _part(n) == b
    )
    assert found == []


def test_the_layer_check_sees_a_forbidden_arrow() -> None:
    assert (
        _part("gatesh.rater.builtin.knowledge") == "Rater"
        and _part("gatesh.policy._rules") == "Policy"
    )
    assert _part("gatesh.vocab.words") is None and _part("gatesh.readingx") is None


def test_the_client_imports_nothing_but_the_standard_library_and_itself(
    graph: dict[str, set[str]],
) -> None:
    assert graph["gatesh._errors"] == set() and graph["gatesh._invoke"] == {"gatesh._errors"}
    assert graph["gatesh.client"] == {
        "gatesh._errors",
        "gatesh._invoke",
        "gatesh._wire",
        "gatesh._wire_exit",
        "gatesh.boundary._kernel",
        "gatesh.boundary._parent",
        "gatesh.boundary._spec",
    }
    # The report of a bounded command's ending (S13): the transport's connection, nothing more.
    assert graph["gatesh._wire_exit"] == {"gatesh._wire"}
    # The boundary's client half (S16): its wire record, the kernel interface and the parent.
    assert graph["gatesh.boundary"] == set()
    assert graph["gatesh.boundary._spec"] == {"gatesh._errors"}
    assert graph["gatesh.boundary._kernel"] == {"gatesh._errors", "gatesh.boundary._spec"}
    assert graph["gatesh.boundary._parent"] == {"gatesh.boundary._kernel"}
    # The transport: _invoke only to start the full interpreter, inprocess only as the fallback,
    # _person only to start the daemon on the person's settings (S9.7) and mark a command.
    assert graph["gatesh._wire_base"] == {"gatesh._errors"}
    assert graph["gatesh._wire"] - {"gatesh._errors", "gatesh._invoke", "gatesh._wire_base"} <= {
        "gatesh.inprocess",
        "gatesh._person",
        "gatesh._paths",
        "gatesh.service",
        "gatesh._wire_start",
    }
    assert graph["gatesh._wire_start"] - {"gatesh._invoke", "gatesh._wire_base"} <= {
        "gatesh._person",
        "gatesh._paths",
        "gatesh.service",
    }
    # The standard library, as the client: on its way to starting the daemon only.
    assert graph["gatesh._person"] <= {"gatesh._paths"} and graph["gatesh.service"] == set()
    assert graph["gatesh.hooks"] == {"gatesh._errors", "gatesh._wire"}


# The hook path: what ``gatesh hook claude-code`` loads to answer a PreToolUse call (through the
# entry point; the hook entries `gatesh install` writes skip it: see HOOK_ENTRY_MODULES).
HOOK_MODULES = {
    "gatesh",
    "gatesh._entry",
    "gatesh._errors",
    "gatesh._invoke",
    "gatesh._wire",
    "gatesh._wire_base",
    "gatesh.hooks",
}
# ... and what the hook command `gatesh install` writes loads: the adapter and the transport alone.
HOOK_ENTRY_MODULES = {
    "gatesh",
    "gatesh._errors",
    "gatesh._wire",
    "gatesh._wire_base",
    "gatesh.hooks",
}
# What either path may load of the standard library beyond the bare interpreter's own start: the
# two C modules it talks through. Not ``socket``, ``json``, ``os``, ``re``, ``typing``,
# ``dataclasses`` or ``__future__`` (each costs 0.1 to 10 ms per call, S14).
EXTRA_STDLIB = {"_json", "_socket"}
HOOK_INPUT = (
    '{"hook_event_name": "PreToolUse", "session_id": "importtime", "cwd": "/tmp", '
    '"tool_name": "Bash", "tool_input": {"command": "ls"}}'
)


def _imported(argv: list[str], env: dict[str, str], stdin: str = "") -> set[str]:
    """The modules ``-X importtime`` says a run of ``python -IS -X importtime ARGV`` loaded."""
    out = subprocess.run(
        [sys.executable, "-IS", "-X", "importtime", *argv],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    names = {
        line.rsplit("|", 1)[1].strip()
        for line in out.stderr.splitlines()
        if line.startswith("import time:")
    }
    names.discard("imported package")  # the header line
    return names


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "stdin", "modules"),
    [
        (["-c", "true"], "", C_CLIENT_MODULES),
        (["hook", "claude-code"], HOOK_INPUT, HOOK_MODULES),
        ([], HOOK_INPUT, HOOK_ENTRY_MODULES),
    ],
    ids=["gatesh -c", "gatesh hook", "installed hook entry"],
)
def test_the_fast_paths_load_only_the_standard_library(
    args: list[str], stdin: str, modules: set[str], tmp_path: Path
) -> None:
    """Run as the launcher runs them (``-I -S``), or as the hook entry ``gatesh install`` writes
    runs (no ``args``: :func:`gatesh.launcher.direct_hook`), with the daemon up, and read what
    ``-X importtime`` says was imported: gatesh's client modules and, of the standard library,
    only what the bare interpreter loads anyway plus EXTRA_STDLIB."""
    from gatesh.launcher import direct_hook, render_launcher

    code = (
        "import sys\ndel sys.argv[0]\n"
        f"sys.path[:0] = [{str(ROOT)!r}]\n"
        "from gatesh._entry import main\nsys.exit(main())\n"
    )
    env = {**os.environ, "GATESH_SESSION": "importtime", "PYTHONPATH": ""}
    launcher = tmp_path / "gatesh"
    launcher.write_text(render_launcher(sys.executable, [str(ROOT)]))
    entry = direct_hook(str(launcher))
    assert entry is not None
    argv = ["-c", code, "gatesh", *args] if args else ["-c", entry[3], "hook", "claude-code"]
    try:
        first = subprocess.run(
            [sys.executable, "-IS", "-c", code, "gatesh", "-c", "true"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )  # starts the daemon
        assert first.returncode == 0, first.stderr
        names = _imported(argv, env, stdin)
    finally:
        stop_daemon()
    bare = _imported(["-c", "pass"], env)
    ours = {n for n in names if n.split(".")[0] == "gatesh"}
    extra = set(EXTRA_STDLIB)
    if args[:1] == ["-c"] and _landlock():
        modules = modules | BOUNDED_CLIENT_MODULES
        extra |= BOUNDED_STDLIB
    assert ours == modules, ours
    foreign = {n for n in names - ours if n.split(".")[0] not in sys.stdlib_module_names}
    assert foreign == set(), foreign
    assert names - ours - bare <= extra, names - ours - bare


def _landlock() -> bool:
    from gatesh.boundary import _kernel

    return _kernel.abi() > 0
