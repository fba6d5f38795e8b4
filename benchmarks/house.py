"""The house in figures: module sizes, long functions and loose records, measured from the source.

What issue 29 asks to see before and after a restructure, read with :mod:`ast` from ``gatesh/``
(no import of the package, so any commit can be measured from a checkout):

- modules: count, and the largest by lines;
- functions longer than 80 lines (a reason belongs in their docstring);
- ``dict[str, Any]`` annotations outside the wire edge (:data:`WIRE_EDGE`, the modules that
  encode and decode one external JSON format), which should be dataclasses;
- literal sets of git's value-taking global options (``-C``, ``-c``, ``--git-dir`` …) outside the
  grammar table: one question, one answer.

    python benchmarks/house.py [ROOT] [--json]
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

LONG_FUNCTION = 80
# Modules whose job is to encode and decode one external JSON format: dicts may stay inside them.
WIRE_EDGE = {
    "gatesh/_wire.py",  # the daemon's socket messages
    "gatesh/_wire_base.py",  # the socket's framing and field checks
    "gatesh/_wire_exit.py",  # the daemon socket's "exited" message, moved out of _wire.py
    "gatesh/audit_record.py",  # the audit line: its bytes are what the hash chain covers
    "gatesh/audit_entry.py",  # the audit line read back: only LogEntry records leave
    "gatesh/audit_syslog.py",  # the audit line as a system-log message, and read back from one
    "gatesh/rater/_api.py",  # the model API's JSON: Messages API request and response bodies
    "gatesh/install/settings.py",  # a harness's settings JSON, every foreign key kept
    "gatesh/hooks.py",  # a harness's hook JSON: read once into a ToolCall or a Prompt
    "gatesh/hooktrust.py",  # the Codex app-server's JSON-RPC: only HookTrust records leave
    "gatesh/config/files.py",  # the person's TOML config files: only a typed Config leaves
    # the model API's stand-in: the Messages API's request and reply JSON as the SDK sends and
    # reads it (tests assert on those wire bodies)
    "gatesh/testing/model_server.py",
    "gatesh/testing/standin.py",
    # The daemon end of the socket: lines decoded into typed requests, replies and events encoded.
    "gatesh/daemon/protocol.py",
    "gatesh/wire_json.py",  # typed replies and events made JSON objects, for every transport
}
# A literal collection holding all three of these is a table of git's value-taking global options.
GIT_VALUE_OPTIONS = {"-C", "--git-dir", "--work-tree"}


def _modules(root: Path) -> list[Path]:
    return sorted(p for p in (root / "gatesh").rglob("*.py") if "__pycache__" not in p.parts)


def _is_dict_str_any(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and node.value.id == "dict"
        and isinstance(node.slice, ast.Tuple)
        and [getattr(e, "id", None) for e in node.slice.elts] == ["str", "Any"]
    )


def _annotations(tree: ast.AST) -> list[ast.AST]:
    """Every annotation in ``tree``, a quoted one (``"dict[str, Any]"``) parsed to its expression,
    so that writing an annotation as a string does not hide it from the count."""
    found: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
            found += [a.annotation for a in every if a is not None and a.annotation is not None]
            if node.returns is not None:
                found.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            found.append(node.annotation)
    out: list[ast.AST] = []
    for ann in found:
        for part in ast.walk(ann):
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                try:
                    out.append(ast.parse(part.value, mode="eval").body)
                except SyntaxError:
                    continue
        out.append(ann)
    return out


def measure(root: Path) -> dict[str, object]:
    sizes: dict[str, int] = {}
    long_functions: list[tuple[str, int]] = []
    loose: dict[str, int] = {}
    git_tables: list[str] = []
    for path in _modules(root):
        rel = path.relative_to(root).as_posix()
        text = path.read_text()
        sizes[rel] = text.count("\n")
        tree = ast.parse(text)
        if rel not in WIRE_EDGE:
            for ann in _annotations(tree):
                hits = sum(1 for part in ast.walk(ann) if _is_dict_str_any(part))
                if hits:
                    loose[rel] = loose.get(rel, 0) + hits
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > LONG_FUNCTION:
                    long_functions.append((f"{rel}:{node.name}", length))
            if isinstance(node, (ast.Set, ast.Tuple, ast.List)):
                words = {e.value for e in node.elts if isinstance(e, ast.Constant)}
                if GIT_VALUE_OPTIONS <= words:
                    git_tables.append(f"{rel}:{node.lineno}")
    largest = sorted(sizes.items(), key=lambda kv: -kv[1])[:10]
    return {
        "modules": len(sizes),
        "lines": sum(sizes.values()),
        "largest": largest,
        "over_700": sum(1 for n in sizes.values() if n > 700),
        "long_functions": sorted(long_functions, key=lambda kv: -kv[1]),
        "dict_str_any_outside_wire": sum(loose.values()),
        "dict_str_any_by_module": sorted(loose.items(), key=lambda kv: -kv[1]),
        "git_option_tables": git_tables,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", nargs="?", default=str(Path(__file__).resolve().parent.parent))
    parser.add_argument("--json", action="store_true", help="one JSON object")
    args = parser.parse_args()
    fig = measure(Path(args.root))
    if args.json:
        print(json.dumps(fig))
        return 0
    print(f"modules {fig['modules']}, lines {fig['lines']}, over 700 lines: {fig['over_700']}")
    for name, n in fig["largest"]:  # type: ignore[attr-defined]
        print(f"  {n:6d}  {name}")
    longs = fig["long_functions"]
    print(f"functions over {LONG_FUNCTION} lines: {len(longs)}")  # type: ignore[arg-type]
    for name, n in longs:  # type: ignore[attr-defined]
        print(f"  {n:6d}  {name}")
    print(f"dict[str, Any] outside the wire edge: {fig['dict_str_any_outside_wire']}")
    print(f"literal tables of git's value-taking options: {len(fig['git_option_tables'])}")  # type: ignore[arg-type]
    for where in fig["git_option_tables"]:  # type: ignore[attr-defined]
        print(f"  {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
