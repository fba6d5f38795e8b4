"""Which files of the working folder ``python -m MODULE`` runs (issue 32: the agent's own work).

Under ``-m`` the first folder on Python's module path is the working folder (unless ``-I``,
``-P`` or ``PYTHONSAFEPATH`` leave it off), so a module the tree holds is the tree's file, well-known
names included. Python finds each dotted part in a folder the way :mod:`importlib`'s file finder
does: a folder holding ``__init__`` is a regular package (its ``__init__.py`` runs when it is
imported); else a module file, an extension module (``NAME*.so``) before ``NAME.py`` before a
sourceless ``NAME.pyc``; else a folder without ``__init__`` is a namespace portion, which a
package or module of the same name later on the path beats. A package run with ``-m`` runs its
``__main__`` module after its ``__init__``. :func:`module_files` is this lookup over a
:class:`Folder`, nothing more: which folder and which files exist is the reader's business.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Protocol


class Folder(Protocol):
    """The working folder as the command will find it (files on disk, or written earlier)."""

    def is_file(self, rel: str) -> bool:
        """Whether the file ``rel`` (relative to the folder) will be there."""

    def is_dir(self, rel: str) -> bool:
        """Whether the folder ``rel`` (relative to the folder; "" is the folder) will be there."""

    def names(self, rel: str) -> frozenset[str]:
        """The names in the folder ``rel`` (for compiled modules, whose names carry a tag)."""


@dataclass(frozen=True)
class ModuleFiles:
    """What ``python -m NAME`` runs from the working folder.

    ``found``: the folder holds the module's first part (else it is an installed module, or none).
    ``files``: the source files that run, relative to the folder, in the order they run.
    ``unsure``: why other code may run instead or as well ("" when ``files`` is all of it), and
    ``unsure_at`` the path it concerns (a compiled module, a namespace folder).
    """

    found: bool = False
    files: tuple[str, ...] = ()
    unsure: str = ""
    unsure_at: str = ""


_NAMESPACE = (
    "a folder without __init__.py: a package or module of that name elsewhere on Python's "
    "module path runs instead"
)
_COMPILED = "a compiled module, which gatesh cannot read"


def _compiled(names: frozenset[str], stem: str) -> str | None:
    """The name of a compiled module ``stem`` in a folder's ``names`` (None: there is none).
    Extension modules carry the interpreter's tag (``x.cpython-311-x86_64-linux-gnu.so``,
    ``x.abi3.so``); any tag counts, since which interpreter runs is not known here."""
    for n in sorted(names):
        if n == stem + ".so" or (n.startswith(stem + ".") and n.endswith(".so")):
            return n
    return None


def module_files(name: str, folder: Folder) -> ModuleFiles:
    """The files ``python -m name`` runs from ``folder`` (see the module docstring)."""
    parts = name.split(".")
    if not parts or not all(p.isidentifier() for p in parts):
        return ModuleFiles()  # Python refuses the name: nothing of the folder runs
    files: list[str] = []
    base = ""
    namespace = False  # the path so far is a namespace portion (may be another folder's)
    for i, part in enumerate(parts):
        rel = posixpath.join(base, part) if base else part
        names = folder.names(base)
        last = i == len(parts) - 1
        init = posixpath.join(rel, "__init__.py")
        if folder.is_dir(rel):
            compiled_init = _compiled(folder.names(rel), "__init__")
            if compiled_init is None and not folder.is_file(init):
                if folder.is_file(init + "c"):
                    compiled_init = "__init__.pyc"
            if compiled_init is not None:
                return _unsure(files, _COMPILED, posixpath.join(rel, compiled_init))
        if folder.is_file(init):
            files.append(init)
            base = rel
            if last:
                return _main_of(rel, folder, files)
            continue
        compiled = _compiled(names, part)
        if compiled is not None:
            return _unsure(files, _COMPILED, posixpath.join(base, compiled) if base else compiled)
        if folder.is_file(rel + ".py"):
            # a module has no submodules: Python runs it as the parent of `a.b`, then fails
            files.append(rel + ".py")
            return _done(files, namespace, rel)
        if folder.is_file(rel + ".pyc"):
            return _unsure(files, _COMPILED, rel + ".pyc")
        if folder.is_dir(rel):
            # a namespace portion: at the top, another folder on the path may hold the name; in a
            # regular package, the package's own folder is the only place Python looks
            namespace = namespace or i == 0
            base = rel
            if last:
                return _main_of(rel, folder, files, namespace=namespace)
            continue
        if i == 0:
            return ModuleFiles()
        return _done(files, namespace, rel)  # a part the package lacks: Python stops there
    return _done(files, namespace, base)  # pragma: no cover - every part returns or continues


def _main_of(rel: str, folder: Folder, files: list[str], *, namespace: bool = False) -> ModuleFiles:
    """A package run with ``-m``: its ``__main__`` runs after its ``__init__`` (a package without
    one makes Python stop with an error after importing it)."""
    compiled = _compiled(folder.names(rel), "__main__")
    if compiled is not None:
        return _unsure(files, _COMPILED, posixpath.join(rel, compiled))
    main = posixpath.join(rel, "__main__.py")
    if folder.is_file(main):
        files.append(main)
    return _done(files, namespace, rel)


def _done(files: list[str], namespace: bool, rel: str) -> ModuleFiles:
    """The lookup's end: ``files`` run; under a namespace folder, unless another folder on the
    path holds the name (a namespace folder holding no file that runs is none of the tree's)."""
    if namespace and not files:
        return ModuleFiles()
    if namespace:
        return _unsure(files, _NAMESPACE, rel.split("/", 1)[0])
    return ModuleFiles(True, tuple(files))


def _unsure(files: list[str], why: str, at: str) -> ModuleFiles:
    return ModuleFiles(True, tuple(files), why, at)
