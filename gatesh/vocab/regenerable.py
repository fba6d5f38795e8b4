"""What a working tree holds that a build, an install or an editor makes again (S3.2, S17).

One table, two readers: the reversibility probe (:mod:`gatesh.worktree`) counts nothing in
these places as work a command would lose, and the undo snapshot (:mod:`gatesh.undo`) does not
copy them. Because both read the same rows, a loss the probe reports is always one a snapshot
holds, and a snapshot never spends its budget on a dependency folder.

A row is a folder name (any path component equal to it, at any depth), a file suffix, or an
exact file name, with the reason it can be made again.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Final

__all__ = [
    "FILE_PATTERN",
    "FOLDERS",
    "ROWS",
    "Kind",
    "Regenerable",
    "is_regenerable",
    "is_regenerable_name",
]


class Kind(enum.StrEnum):
    """How a row names what it covers."""

    FOLDER = "folder"  # a path component with exactly this name (a folder, or a file so named)
    SUFFIX = "suffix"  # a path ending with this text
    FOLDER_SUFFIX = "folder suffix"  # a path component ending with this text (``x.egg-info``)
    NAME = "name"  # a file with exactly this name


@dataclass(frozen=True)
class Regenerable:
    """One row. Invariant: ``reason`` says what makes the thing again, in a few words."""

    name: str
    kind: Kind
    reason: str


_F, _S, _FS, _N = Kind.FOLDER, Kind.SUFFIX, Kind.FOLDER_SUFFIX, Kind.NAME

ROWS: Final[tuple[Regenerable, ...]] = (
    # dependency folders
    Regenerable("node_modules", _F, "npm, yarn or pnpm install makes it again"),
    Regenerable("bower_components", _F, "bower install makes it again"),
    Regenerable("Pods", _F, "pod install makes it again"),
    Regenerable(".venv", _F, "a virtual environment: made again from the project's requirements"),
    Regenerable("venv", _F, "a virtual environment: made again from the project's requirements"),
    Regenerable(".tox", _F, "tox makes its environments again"),
    Regenerable(".nox", _F, "nox makes its environments again"),
    Regenerable(".eggs", _F, "setuptools fetches these again"),
    Regenerable(".gradle", _F, "gradle's own cache, made again by the next build"),
    Regenerable(".terraform", _F, "terraform init downloads providers and modules again"),
    # build outputs
    Regenerable("dist", _F, "build output"),
    Regenerable("build", _F, "build output"),
    Regenerable("target", _F, "cargo and maven build output"),
    Regenerable("out", _F, "build output"),
    Regenerable("obj", _F, "compiler output"),
    Regenerable("_build", _F, "build output (dune, sphinx, mix)"),
    Regenerable(".build", _F, "swift build output"),
    Regenerable("DerivedData", _F, "Xcode build output"),
    Regenerable("cmake-build-debug", _F, "CMake build output"),
    Regenerable("cmake-build-release", _F, "CMake build output"),
    Regenerable(".next", _F, "Next.js build output"),
    Regenerable(".nuxt", _F, "Nuxt build output"),
    Regenerable(".svelte-kit", _F, "SvelteKit build output"),
    Regenerable(".angular", _F, "Angular's build cache"),
    Regenerable(".expo", _F, "Expo's build cache"),
    Regenerable(".docusaurus", _F, "Docusaurus build output"),
    Regenerable("storybook-static", _F, "Storybook build output"),
    Regenerable(".vercel", _F, "Vercel build output"),
    Regenerable(".serverless", _F, "Serverless framework build output"),
    Regenerable("cdk.out", _F, "AWS CDK synthesis output"),
    Regenerable(".egg-info", _FS, "setuptools writes the metadata again"),
    # caches
    Regenerable("__pycache__", _F, "Python bytecode, written again on import"),
    Regenerable(".cache", _F, "a tool's cache"),
    Regenerable(".pytest_cache", _F, "pytest's cache"),
    Regenerable(".mypy_cache", _F, "mypy's cache"),
    Regenerable(".ruff_cache", _F, "ruff's cache"),
    Regenerable(".hypothesis", _F, "hypothesis's example database, rebuilt by the tests"),
    Regenerable(".turbo", _F, "turborepo's cache"),
    Regenerable(".parcel-cache", _F, "parcel's cache"),
    Regenerable(".sass-cache", _F, "sass's cache"),
    Regenerable(".ipynb_checkpoints", _F, "Jupyter's autosave copies"),
    # coverage reports
    Regenerable("coverage", _F, "a coverage report, made again by the tests"),
    Regenerable(".coverage", _F, "coverage data, made again by the tests"),
    Regenerable("htmlcov", _F, "a coverage report, made again by the tests"),
    Regenerable(".nyc_output", _F, "coverage data, made again by the tests"),
    # compiled files and leftovers
    Regenerable(".pyc", _S, "Python bytecode, written again on import"),
    Regenerable(".pyo", _S, "Python bytecode, written again on import"),
    Regenerable(".o", _S, "an object file, compiled again"),
    Regenerable(".obj", _S, "an object file, compiled again"),
    Regenerable(".class", _S, "Java bytecode, compiled again"),
    Regenerable(".tmp", _S, "a temporary file"),
    Regenerable(".swp", _S, "an editor's swap file"),
    Regenerable(".swo", _S, "an editor's swap file"),
    Regenerable(".orig", _S, "a merge's leftover copy"),
    Regenerable(".rej", _S, "a patch's rejected hunks"),
    Regenerable("~", _S, "an editor's backup copy"),
    Regenerable(".DS_Store", _N, "macOS folder metadata"),
    Regenerable("Thumbs.db", _N, "Windows thumbnail cache"),
)

#: Path components that are regenerable folders (also a file so named: ``out``, ``build``).
FOLDERS: Final = frozenset(r.name for r in ROWS if r.kind is Kind.FOLDER)

#: Matches a path (relative to the working tree, ``/``-separated) that is, or lies in, something
#: a row names, by suffix, exact file name or folder suffix.
FILE_PATTERN: Final = re.compile(
    "|".join(
        [
            "(?:" + "|".join(re.escape(r.name) for r in ROWS if r.kind is Kind.SUFFIX) + ")$",
            "(?:^|/)(?:" + "|".join(re.escape(r.name) for r in ROWS if r.kind is Kind.NAME) + ")$",
            "(?:"
            + "|".join(re.escape(r.name) for r in ROWS if r.kind is Kind.FOLDER_SUFFIX)
            + ")(?:/|$)",
        ]
    )
)


_NAMES: Final = FOLDERS | frozenset(r.name for r in ROWS if r.kind is Kind.NAME)
_SUFFIXES: Final = tuple(r.name for r in ROWS if r.kind is Kind.SUFFIX)
_FOLDER_SUFFIXES: Final = tuple(r.name for r in ROWS if r.kind is Kind.FOLDER_SUFFIX)


def is_regenerable_name(name: str) -> bool:
    """Whether a single path component ``name`` is something a row names (a walk that skips such
    names never enters what they hold): :func:`is_regenerable` of a one-part path, with set and
    suffix tests instead of a pattern (a walk asks it of every file)."""
    return name in _NAMES or name.endswith(_SUFFIXES) or name.endswith(_FOLDER_SUFFIXES)


def is_regenerable(rel: str) -> bool:
    """Whether ``rel`` (relative to a working tree) is something a row names, or lies inside it."""
    return any(part in FOLDERS for part in rel.split("/")) or bool(FILE_PATTERN.search(rel))
