"""The exception tree of gatesh._errors is true: every exception gatesh defines is under
GateshError, carries its exit status, and the exit statuses are defined once."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

from gatesh import _errors

PACKAGE = Path(__file__).resolve().parent.parent / "gatesh"


def _module_names() -> list[str]:
    names = []
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__main__":
            continue
        if parts[-1] == "__init__":
            parts.pop()
        names.append(".".join(parts))
    return sorted(names)


def test_every_gatesh_exception_is_a_gatesh_error() -> None:
    strays = []
    for name in _module_names():
        module = importlib.import_module(name)
        for cls_name, cls in inspect.getmembers(module, inspect.isclass):
            if (
                cls.__module__ == name
                and issubclass(cls, BaseException)
                and not issubclass(cls, _errors.GateshError | _errors.Abandoned)
            ):
                strays.append(f"{name}.{cls_name}")
    assert strays == []


def test_the_deadline_signal_escapes_fail_closed_handlers() -> None:
    # The pipeline's `except Exception` must not catch it, or an abandoned decision runs on.
    assert not issubclass(_errors.Abandoned, Exception)
    assert "Abandoned" in (_errors.__doc__ or "")


def test_the_tree_in_the_docstring_names_every_class_of_errors() -> None:
    doc = _errors.__doc__ or ""
    for name, cls in inspect.getmembers(_errors, inspect.isclass):
        if issubclass(cls, _errors.GateshError):
            assert name in doc, name


def test_exit_statuses_live_on_the_classes_and_are_defined_once() -> None:
    assert _errors.Refused.exit_status == _errors.EXIT_REFUSED == 126
    assert _errors.ConfigError("f", "k", "bad").exit_status == _errors.EXIT_ERROR
    defined = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AnnAssign)
                else []
            )
            for target in targets:
                if (
                    isinstance(target, ast.Name)
                    and target.id.startswith("EXIT_")
                    and not target.id.endswith("_S")
                    and isinstance(getattr(node, "value", None), ast.Constant)
                ):
                    defined.append(f"{path.relative_to(PACKAGE)}:{target.id}")
    assert sorted(defined) == [
        "_errors.py:EXIT_ASKED",
        "_errors.py:EXIT_BROKEN_PIPE",
        "_errors.py:EXIT_ERROR",
        "_errors.py:EXIT_OK",
        "_errors.py:EXIT_REFUSED",
        "_errors.py:EXIT_USAGE",
    ]
