"""Which places self-protection guards, and whether a path a command touches is one of them.

The places are the rows of ``gatesh.vocab.places`` guarded by self-protection, resolved for this
user's home, environment and install record (:func:`protected_for`). A path the reader resolved
is matched against them (:meth:`Protected.hit`): inside a place; a folder holding one, when the
effect reaches everything under it (a removal, ``cp -r``, ``chmod -R``, names fed to xargs); a
glob naming one; a place of another layout or another user (the table's patterns); a repository
hook script gatesh wrote (its marker, read from the disk). A path only known when the command
runs is matched by how it is written (:meth:`Protected.unresolved`).
"""

from __future__ import annotations

import enum
import fnmatch
import functools
import os
import posixpath
import re
from dataclasses import dataclass
from typing import Final

from gatesh._paths import GatePaths, Installation, environ_values
from gatesh._types import Change, PathEffect
from gatesh.harnesses import Harness
from gatesh.vocab import places
from gatesh.vocab.paths.classes import GIT_HOOK_MARKER, GIT_HOOK_NAMES
from gatesh.vocab.words import unquote

__all__ = ["Kind", "Protected", "protected_for"]


class Kind(enum.Enum):
    """Which part of the gate a protected place is: the rule family that names it."""

    FILES = "files"  # config, state, audit log, socket, the system tier
    INSTALL = "install"  # launcher, shims, venv, man page, install record, the package
    HARNESS = "harness"  # a harness's settings or hooks file
    TRANSCRIPT = "transcript"  # a harness's session transcripts
    SNAPSHOT = "snapshot"  # a harness's shell snapshots (sourced before each command, unread)
    GIT_HOOKS = "git-hooks"  # the git hooks gatesh installed
    UNKNOWN = "unknown"  # a path only known when it runs, which could be one of the above


PK = places.Kind
_KIND_OF_PLACE: Final = {
    **dict.fromkeys(
        (
            PK.GATE_CONFIG,
            PK.GATE_STATE,
            PK.AUDIT_LOG,
            PK.GATE_RUNTIME,
            PK.GATE_DATA,
            PK.SYSTEM_TIER,
        ),
        Kind.FILES,
    ),
    **dict.fromkeys(
        (PK.LAUNCHER, PK.VENV, PK.SHIMS, PK.MAN_PAGE, PK.INSTALL_RECORD, PK.PACKAGE),
        Kind.INSTALL,
    ),
    PK.GATE_GIT_HOOKS: Kind.GIT_HOOKS,
    PK.HARNESS_SETTINGS: Kind.HARNESS,
    PK.TRANSCRIPT: Kind.TRANSCRIPT,
    PK.SNAPSHOT: Kind.SNAPSHOT,
}
_GUARDED: Final = tuple(p for p in places.PLACES if p.guard is places.Guard.SELF_PROTECTION)
# The installation's parts before the folders holding them: a path of another layout matched by
# several patterns (`.local/share/gatesh/venv/…`) is the most specific place.
_BY_SPECIFICITY: Final = sorted(
    _GUARDED, key=lambda p: _KIND_OF_PLACE[p.kind] is Kind.FILES and p.kind is not PK.AUDIT_LOG
)


def _alternation(rows: list[tuple[places.Place, str]]) -> re.Pattern[str]:
    """One pattern of ``rows`` (a place and a pattern of it), each alternative a named group
    (``p0``, ``p1`` …) whose number is the row's index, tried in order."""
    return re.compile(
        "|".join(
            f"(?P<p{k}>{pattern.replace('{H}', places.HOME_PATTERN)})"
            for k, (_, pattern) in enumerate(rows)
        )
    )


# The places' patterns (their layout anywhere: another user's, a project's own settings).
_ANYWHERE_ROWS: Final = [(p, p.pattern) for p in _BY_SPECIFICITY if p.pattern]
_ANYWHERE: Final = _alternation(_ANYWHERE_ROWS)
# A literal every text _ANYWHERE matches holds (each pattern spells one out; tested): searched
# first, since the alternation's anchors are tried at every position of a path.
ANYWHERE_NEEDS: Final = ("gatesh", ".claude", ".codex", ".gemini")
# How a command names a place through the variables its folders come from.
_SPELLED_ROWS: Final = [(p, s) for p in _BY_SPECIFICITY for s in places.spellings(p)]
_SPELLED: Final = _alternation(_SPELLED_ROWS)
SPELLED_NEEDS: Final = ("XDG_", "CLAUDE_CONFIG_DIR", "CODEX_HOME")
# A word whose value is where the launcher is: `$(which gatesh)`, `` `command -v gatesh` ``.
_LOCATES_GATESH: Final = re.compile(
    r"(?:\$\(|`)\s*(?:which|command\s+-[vV]|type\s+-[pP]|whereis|readlink\s+-f\s+\S*)"
    r"\s+(?:-\S+\s+)*gatesh\b"
)
# The folder a project's harness settings are in: writing all of it writes them.
_HARNESS_FOLDER: Final = re.compile(r"(?:^|/)\.(?:claude|gemini|codex)/?$")
# A repository's hook scripts (and the folders holding them): gatesh's when they carry its marker.
_GIT_HOOK_PATH: Final = re.compile(r"(?:^|/)\.git(?:/hooks(?:/(?P<name>[^/]+))?)?/?$")
_GLOB_CHARS: Final = re.compile(r"[*?\[]")
# How much of a hook script is read to find gatesh's marker (it is on the second line).
_MARKER_BYTES: Final = 4096
# How many entries of a gate folder are looked at for a name a feeder could print: the config and
# state folders hold a handful; past this (a venv) the folder is taken to hold a match.
_WALK_LIMIT: Final = 2000
_REMOVALS: Final = frozenset({Change.REMOVE, Change.REMOVE_EMPTY})


@dataclass(frozen=True)
class Protected:
    """The protected places of one check, absolute, computed once per inputs.

    ``roots`` pairs each resolved place with its rule family; a root covers itself and everything
    under it. ``volatile`` roots are matched only themselves and below, never through a folder
    holding them (the socket folder is made again on demand). ``cwd`` resolves relative paths
    for the checks that read the disk.
    """

    roots: tuple[tuple[str, Kind], ...]
    home: str
    volatile: tuple[str, ...] = ()
    cwd: str = ""
    launchers: tuple[str, ...] = ()
    venvs: tuple[str, ...] = ()
    shims: tuple[str, ...] = ()
    git_global: bool = False
    paths: GatePaths | None = None
    files: frozenset[str] = frozenset()  # the roots that are one file, not a folder
    named: tuple[str, ...] = ()  # files of a folder place by a glob of their name (audit.jsonl*)

    @functools.cached_property
    def _kinds(self) -> dict[str, Kind]:
        """Each root's kind, by its path (the roots are distinct normalised paths)."""
        return dict(self.roots)

    def kind_of(self, path: str) -> Kind | None:
        """The kind of the most specific root holding ``path`` (absolute), or None.

        The candidates are ``path`` and its prefixes that end before a ``/``, longest first, each
        one table lookup instead of a comparison with every root."""
        kinds = self._kinds
        end = len(path)
        while end > 0:
            kind = kinds.get(path[:end])
            if kind is not None:
                return kind
            end = path.rfind("/", 0, end)
        return None

    def hit(self, e: PathEffect) -> Kind | None:
        """The kind of protected place the write or removal ``e`` changes, or None."""
        if not e.resolved:
            return self.unresolved(e.path)
        path = e.resolved
        removal = e.change in _REMOVALS
        below = (removal or e.deep) and not e.partial  # it reaches what is under the path
        kind = self.kind_of(path)
        if kind is not None:
            return kind
        kind = anywhere(path, removal=removal)
        if kind is not None:
            return kind
        if e.deep and not removal and _HARNESS_FOLDER.search(path):
            return Kind.HARNESS  # `cp -r x .claude`: everything in it, its settings too
        if ".git" in path:
            kind = _git_hook(path, below=below)
            if kind is not None:
                return kind
        globbed = _GLOB_CHARS.search(path) is not None
        if not (below or globbed):
            return None
        above = "/" if path == "/" else path.rstrip("/") + "/"
        reach = None if removal else e.reach
        globs = path.rstrip("/").split("/") if globbed else []
        for root, kind in self.roots:
            if root in self.volatile:
                continue  # made again on demand: clearing /tmp is not an attack
            if below and root.startswith(above):
                if reach is not None and root.count("/") - above.count("/") >= reach:
                    continue  # deeper than the effect goes (`find DIR -maxdepth 1 …`)
                if not e.only or _only_reaches(path, root, e.only):
                    return kind
                continue
            if globbed:
                # `rm -rf ~/.config/*` names the config folder through a glob (one name per
                # component: a glob never crosses a `/`).
                parts = root.split("/")
                if (
                    len(parts) >= len(globs)
                    and all(
                        fnmatch.fnmatchcase(name, glob)
                        for name, glob in zip(parts, globs, strict=False)
                    )
                    and (below or len(parts) == len(globs))
                ):
                    return kind
        return None

    def unresolved(self, text: str) -> Kind | None:
        """The kind of protected place a path only known when it runs is written as naming: a
        place's own variables (``$XDG_STATE_HOME/gatesh``), a command that locates the launcher,
        or a place's layout in its static part (``$X/.claude/projects/…``); UNKNOWN when it
        could be one (:meth:`could_be`); None when it cannot."""
        word = unquote(text)
        if "gatesh" in word and _LOCATES_GATESH.search(word):
            return Kind.INSTALL
        if _holds(word, SPELLED_NEEDS):
            m = _SPELLED.search(word)
            if m is not None and m.lastgroup is not None:
                return _KIND_OF_PLACE[_SPELLED_ROWS[int(m.lastgroup[1:])][0].kind]
        kind = anywhere(word)
        if kind is not None:
            return kind
        return Kind.UNKNOWN if self.could_be(word) else None

    def could_be(self, word: str) -> bool:
        """Whether a path written ``word`` (quotes removed), with parts only known when it runs,
        could be a protected place: what comes after its last unknown part names one or a name in
        one (``…/gatesh/config.toml``, ``…/hooks/pre-push``, ``…/settings.json``); or what comes
        before its first unknown part is a folder holding one (``~/.config/$x``); or an unknown
        part locates the gate's folders (``$XDG_STATE_HOME``, ``$HOME``, ``$(git rev-parse …)``,
        ``$(which gatesh)``) with nothing after it."""
        parts = _parts(word)
        dynamic = [t for is_dyn, t in parts if is_dyn]
        if not dynamic:
            return False
        tail = "" if parts[-1][0] else parts[-1][1]
        if self._tail_names_place(tail):
            return True
        head, known = "", 0
        for is_dyn, text in parts:
            if is_dyn and text not in ("$HOME", "${HOME}"):
                break
            head += self.home if is_dyn else text
            known += is_dyn
        dynamic = dynamic[known:]  # home, read into the head, is no unknown part
        if head.startswith("~/"):
            head = self.home + head[1:]
        if head.startswith("/") and head.endswith("/"):
            for root, _ in self.roots:
                if root.startswith(head) and root not in self.volatile:
                    return True
        return not tail.strip("/") and any(_LOCATING.match(d) for d in dynamic)

    @functools.cached_property
    def _tails(self) -> tuple[tuple[tuple[str, ...], bool], ...]:
        """Each place as its path's names and whether it is one file: the guarded roots, and the
        places found anywhere (a repository's hooks, a project's harness settings)."""
        out = [(tuple(root.strip("/").split("/")), root in self.files) for root, _ in self.roots]
        out += [((".git", "hooks", name), True) for name in GIT_HOOK_NAMES]
        out += [((h, n), True) for h, n in _PROJECT_FILES]
        out += [(tuple(p.strip("/").split("/")), True) for p in self.named]
        return tuple(out)

    def _tail_names_place(self, tail: str) -> bool:
        """Whether a path ending in ``tail`` (after an unknown part) may be a place: the tail's
        leading names are a place's last names (and it ends there, or goes on inside a folder).
        A single name counts only when it is distinctive (gatesh's, or a place that is one file)."""
        names = tuple(n for n in tail.split("/") if n)
        if not names or not tail.startswith("/"):
            return False  # `"$f".bak`: text glued to an unknown part is part of that name
        for place, is_file in self._tails:
            for k in range(min(len(names), len(place)), 0, -1):
                if not all(
                    fnmatch.fnmatchcase(n, p) for n, p in zip(names[:k], place[-k:], strict=True)
                ):
                    continue
                inside = len(names) > k
                if inside and is_file:
                    continue
                if k == 1 and not (is_file or "gatesh" in names[0]):
                    continue  # `…/venv`, `…/projects`: too common a name alone
                return True
        return False


# A project's harness settings files (harness.project-settings), as (folder name, file name).
_PROJECT_FILES: Final = (
    (Harness.CLAUDE_CODE.folder, "settings.json"),
    (Harness.CLAUDE_CODE.folder, "settings.local.json"),
    (Harness.GEMINI.folder, "settings.json"),
    (Harness.CODEX.folder, "config.toml"),
    (Harness.CODEX.folder, "hooks.json"),
)
# An unknown part that locates the gate's folders: one of their variables or home, the
# repository's git folder, where gatesh, git or a shell is.
_LOCATING: Final = re.compile(
    r"^\$\{?(?:XDG_(?:CONFIG|STATE|DATA)_HOME|XDG_RUNTIME_DIR|HOME|CLAUDE_CONFIG_DIR|CODEX_HOME"
    r"|GIT_DIR|GIT_COMMON_DIR)\b"
    r"|^(?:\$\(|`)\s*git\b[^`)]*\brev-parse\b"
    r"|^(?:\$\(|`)\s*(?:which|whereis|command\s+-[vV]|type\s+-[pP]|readlink|realpath)\b"
    r"[^`)]*\b(?:gatesh|git|bash|sh|zsh)\b"
)
# A word's parts: `$(…)`, `` `…` ``, `${…}` and `$NAME` are unknown; the rest is static text.
_DYNAMIC_PART: Final = re.compile(r"\$\((?:[^()]|\([^()]*\))*\)|`[^`]*`|\$\{[^{}]*\}|\$\w+")


def _parts(word: str) -> list[tuple[bool, str]]:
    """``word`` as (unknown?, text) parts in order."""
    out: list[tuple[bool, str]] = []
    at = 0
    for m in _DYNAMIC_PART.finditer(word):
        if m.start() > at:
            out.append((False, word[at : m.start()]))
        out.append((True, m.group(0)))
        at = m.end()
    if at < len(word):
        out.append((False, word[at:]))
    return out or [(False, word)]


def anywhere(path: str, *, removal: bool = False) -> Kind | None:
    """The kind of protected place ``path`` is by the table's patterns (another layout, another
    user's, a project's own settings); a place whose removal is not protected does not count
    for a removal."""
    if not _holds(path, ANYWHERE_NEEDS):
        return None
    m = _ANYWHERE.search(path)
    if m is None or m.lastgroup is None:
        return None
    place = _ANYWHERE_ROWS[int(m.lastgroup[1:])][0]
    if removal and places.Access.REMOVE not in place.access:
        # the first pattern that matched protects only writes; a later one may protect removal
        for row, pattern in _ANYWHERE_ROWS:
            if places.Access.REMOVE in row.access and _compiled(pattern).search(path):
                return _KIND_OF_PLACE[row.kind]
        return None
    return _KIND_OF_PLACE[place.kind]


def _holds(text: str, literals: tuple[str, ...]) -> bool:
    """Whether ``text`` holds one of ``literals`` (a substring search each)."""
    for literal in literals:
        if literal in text:
            return True
    return False


@functools.lru_cache(maxsize=64)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern.replace("{H}", places.HOME_PATTERN))


def _only_reaches(path: str, root: str, only: str) -> bool:
    """Whether names matching the glob ``only``, found under ``path``, can reach ``root`` (a
    place under it): a folder on the way down matches, or something inside the place does (read
    from the disk, up to :data:`_WALK_LIMIT` entries; past it, or on an error, it is taken to)."""
    names = root[len(path.rstrip("/")) + 1 :].split("/")
    if any(fnmatch.fnmatchcase(n, only) for n in names):
        return True
    todo, seen = [root], 0
    while todo:
        try:
            with os.scandir(todo.pop()) as entries:
                for entry in entries:
                    seen += 1
                    if seen > _WALK_LIMIT or fnmatch.fnmatchcase(entry.name, only):
                        return True
                    if entry.is_dir(follow_symlinks=False):
                        todo.append(entry.path)
        except (NotADirectoryError, FileNotFoundError):
            continue
        except OSError:
            return True
    return False


def _ours_on_disk(path: str) -> bool:
    """True when the hook script at ``path`` is one gatesh wrote (its marker is in it)."""
    try:
        with open(path, "rb") as f:
            return GIT_HOOK_MARKER.encode() in f.read(_MARKER_BYTES)
    except OSError:
        return False


def _git_hook(path: str, *, below: bool) -> Kind | None:
    """GIT_HOOKS when ``path`` is a repository hook script gatesh wrote (read from the disk),
    every hook a glob there names, or, with ``below``, a ``.git`` or hooks folder holding one."""
    m = _GIT_HOOK_PATH.search(path)
    if m is None:
        return None
    name = m.group("name")
    if name:
        if _GLOB_CHARS.search(name):  # `rm .git/hooks/*`: every hook script the glob names
            folder = posixpath.dirname(path)
            hit = any(
                fnmatch.fnmatchcase(n, name) and _ours_on_disk(posixpath.join(folder, n))
                for n in GIT_HOOK_NAMES
            )
            return Kind.GIT_HOOKS if hit else None
        return Kind.GIT_HOOKS if _ours_on_disk(path) else None
    if not below:
        return None
    folder = path.rstrip("/")
    folder = folder if folder.endswith("/hooks") else posixpath.join(folder, "hooks")
    if any(_ours_on_disk(posixpath.join(folder, n)) for n in GIT_HOOK_NAMES):
        return Kind.GIT_HOOKS
    return None


def protected_for(paths: GatePaths, cwd: str = "") -> Protected:
    """The protected places for ``paths``: the rows of the places table self-protection guards,
    resolved for this home, environment and the installation its record names (read now);
    cached per inputs."""
    global _last
    home, claude_home, codex_home = environ_values(("HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME"))
    key = (paths, home or "", paths.installation(), claude_home or "", codex_home or "", cwd)
    last = _last
    if last is not None and last[0] == key:
        return last[1]  # the same inputs as the last call (a tuple compare, by identity first)
    found = _protected(*key)
    _last = (key, found)
    return found


# The inputs and answer of the last protected_for call: a daemon asks with the same ones again and
# again, and _protected is a function of them alone, so this answers as its cache would, without
# hashing the inputs. One tuple, replaced whole (a reader in another thread sees an old or a new pair).
_last: tuple[tuple[GatePaths, str, Installation, str, str, str], Protected] | None = None


@functools.lru_cache(maxsize=64)
def _protected(
    paths: GatePaths,
    _home_env: str,
    inst: Installation,
    claude_home: str,
    codex_home: str,
    cwd: str,
) -> Protected:
    home = os.path.expanduser("~")
    env = {"CLAUDE_CONFIG_DIR": claude_home, "CODEX_HOME": codex_home}
    resolved = places.resolve(home, env, inst, gate=paths, places=_GUARDED)
    clean: dict[str, Kind] = {}
    by_kind: dict[places.Kind, list[str]] = {}
    files: set[str] = set()
    named: list[str] = []
    for r in resolved:
        if r.names:
            named.append(posixpath.join(r.path, r.names))
            continue  # a part of a folder that is protected whole
        by_kind.setdefault(r.kind, []).append(r.path)
        if r.path not in ("/", home) and r.path not in clean:
            clean[r.path] = _KIND_OF_PLACE[r.kind]
            if not r.folder:
                files.add(r.path)
    return Protected(
        roots=tuple(clean.items()),
        home=home,
        volatile=tuple(r.path for r in resolved if r.place.recreated),
        cwd=cwd,
        launchers=tuple(by_kind.get(PK.LAUNCHER, ())),
        venvs=tuple(by_kind.get(PK.VENV, ())),
        shims=tuple(by_kind.get(PK.SHIMS, ())),
        git_global=inst.git_global,
        paths=paths,
        files=frozenset(files),
        named=tuple(named),
    )
