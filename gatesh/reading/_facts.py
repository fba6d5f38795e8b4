"""Facts from a finished reading: the reader's state made into :class:`Facts`."""

from __future__ import annotations

from collections.abc import Sequence

from gatesh._types import Facts, PathEffect

from ._path_collector import MAX_EFFECTS
from ._paths import effects as path_effects
from ._read import Reader
from ._variables import variables


def _written(paths: Sequence[PathEffect]) -> frozenset[str] | None:
    """The paths the line writes, or None when it writes one only known when it runs."""
    out: set[str] = set()
    for e in paths:
        if e.direction.writes:
            if not e.resolved:
                return None
            out.add(e.resolved)
    return frozenset(out)


def make_facts(reader: Reader, text: str) -> Facts:
    """Facts from a finished reading (path effects computed last, from the executed commands)."""
    assigns_home = any(a.startswith("HOME=") for a in reader.st.assignments) or any(
        a.startswith("HOME=") for c in reader.st.commands for a in c.assignments
    )
    paths = path_effects(
        reader.st.commands,
        reader.st.cwd,
        reader.st.home,
        assigns_home=assigns_home,
        pipelines=reader.st.pipelines,
        code=reader.st.code,
    )
    written = _written(paths)
    reader.settings.file_settings(written)
    return Facts(
        text=text,
        commands=tuple(reader.st.commands),
        pipelines=tuple(reader.st.pipelines),
        hosts=tuple(reader.st.hosts),
        functions=tuple(reader.st.functions),
        assignments=tuple(reader.st.assignments),
        scripts=tuple(reader.st.scripts),
        code=tuple(reader.st.code),
        paths=paths,
        paths_cut=len(paths) >= MAX_EFFECTS,
        variables=variables(reader.st.commands, reader.st.assignments, reader.st.cwd, written),
        notes=tuple(reader.st.notes),
        readable=not reader.st.unreadable,
        unreadable=reader.st.unreadable,
    )
