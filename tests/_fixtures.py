"""Loading the shipped case files (``tests/fixtures/*.py``), which are data modules, not packages."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

FIXTURES = Path(__file__).parent / "fixtures"


def load(name: str) -> ModuleType:
    """``tests/fixtures/NAME.py`` as a module (registered, so its dataclasses can find it)."""
    spec = importlib.util.spec_from_file_location(f"gatesh_fixture_{name}", FIXTURES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
