"""git plumbing for snapshots, run so that nothing the repository configures can act.

The gate runs these commands outside any boundary, in repositories an agent can write to, so the
environment is cleared of ``GIT_*`` variables and the command line overrides what could run code
or change bytes: no hooks (``core.hooksPath``), no fsmonitor, no pager, no automatic gc, no
untracked cache; the user's global and system config files are not read. Content is hashed with
``--no-filters`` and written back from ``cat-file``, so no clean or smudge filter, end-of-line or
encoding conversion runs and a restored file holds exactly the bytes snapshotted.

Every call has a deadline; a call that fails or overruns raises :class:`GitFailed`.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import subprocess
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from gatesh._errors import GateshError

__all__ = ["Git", "GitFailed", "git_exe"]

# Settings on every call: nothing the repository's own config names may run (see above).
_SAFE: Final = (
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.untrackedCache=false",
    "-c",
    "core.pager=cat",
    "-c",
    "gc.auto=0",
    "-c",
    "maintenance.auto=false",
    "-c",
    "core.logAllRefUpdates=false",
    "--no-pager",
)
# The identity written into snapshot commits (they are never pushed; git requires one).
_IDENT: Final = {
    "GIT_AUTHOR_NAME": "gatesh",
    "GIT_AUTHOR_EMAIL": "gatesh@localhost",
    "GIT_COMMITTER_NAME": "gatesh",
    "GIT_COMMITTER_EMAIL": "gatesh@localhost",
}


class GitFailed(GateshError):
    """A git command failed, overran its deadline, or git is not installed."""


@functools.lru_cache(maxsize=1)
def git_exe() -> str | None:
    return shutil.which("git")


@dataclass(frozen=True)
class Git:
    """git for one work tree: ``git_dir`` its own folder, ``root`` the tree, ``index`` the index
    file the commands use (a private one; never the user's unless named)."""

    root: str
    git_dir: str
    common_dir: str
    index: str = ""
    algo: str = "sha1"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(
            _IDENT,
            GIT_DIR=self.git_dir,
            GIT_WORK_TREE=self.root,
            GIT_OPTIONAL_LOCKS="0",
            GIT_TERMINAL_PROMPT="0",
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=os.devnull,
            LC_ALL="C",
            PAGER="cat",
        )
        if self.index:
            env["GIT_INDEX_FILE"] = self.index
        return env

    def run(
        self,
        *args: str,
        input: bytes | None = None,
        deadline: float | None = None,
        ok: Sequence[int] = (0,),
    ) -> bytes:
        """git ``args``' standard output. ``deadline`` is a ``time.monotonic()`` value."""
        exe = git_exe()
        if exe is None:
            raise GitFailed("git is not installed")
        timeout = None if deadline is None else deadline - time.monotonic()
        if timeout is not None and timeout <= 0:
            raise GitFailed(f"out of time before git {args[0]}")
        try:
            done = subprocess.run(
                [exe, *_SAFE, *args],
                cwd=self.root,
                env=self.env(),
                input=input,
                stdin=None if input is not None else subprocess.DEVNULL,
                capture_output=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise GitFailed(f"git {args[0]} took longer than the time budget") from None
        except OSError as exc:
            raise GitFailed(f"git {args[0]} could not start ({exc})") from None
        if done.returncode not in ok:
            err = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise GitFailed(f"git {args[0]} failed: {err[-1] if err else done.returncode}")
        return done.stdout

    # --- objects and refs, written directly ----------------------------------------------------
    #
    # Starting a process costs ~4 ms on a machine like the one S14 measures, more than a whole
    # snapshot of a small tree should: objects and the snapshot's ref are written here in git's
    # own formats (a loose object is ``KIND SIZE\\0DATA`` deflated and named by its hash; a loose
    # ref is a file holding the id, written through a ``.lock`` file as git does).

    def write_object(self, kind: str, data: bytes) -> str:
        """Store one object (``blob``, ``tree`` or ``commit``) as a loose object; its id."""
        head = b"%s %d\0" % (kind.encode(), len(data))
        h = hashlib.sha256() if self.algo == "sha256" else hashlib.sha1()
        h.update(head)
        h.update(data)
        oid = h.hexdigest()
        folder = os.path.join(self.objects_dir, oid[:2])
        path = os.path.join(folder, oid[2:])
        if os.path.exists(path):
            return oid
        os.makedirs(folder, exist_ok=True)
        z = zlib.compressobj(1)
        packed = z.compress(head) + z.compress(data) + z.flush()
        tmp = os.path.join(folder, f"tmp_obj_gatesh_{os.getpid()}_{time.monotonic_ns()}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o444)
        try:
            view = memoryview(packed)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(tmp, path)
        return oid

    @property
    def objects_dir(self) -> str:
        return os.path.join(self.common_dir, "objects")

    def ref_files(self) -> bool:
        """Whether refs are kept as files (git's default), not in a reftable."""
        try:
            with open(
                os.path.join(self.common_dir, "config"), encoding="utf-8", errors="replace"
            ) as f:
                return "reftable" not in f.read(1 << 20).lower()
        except OSError:
            return True

    def create_ref(self, ref: str, oid: str, deadline: float) -> None:
        """Point ``ref`` at ``oid``, without a reflog. The caller owns the name: a ref there
        already is one a lost book left behind (its state folder was removed), replaced."""
        if not self.ref_files():
            self.run("update-ref", "--no-deref", ref, oid, deadline=deadline)
            return
        path = os.path.join(self.common_dir, ref)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        lock = path + ".lock"
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        try:
            os.write(fd, (oid + "\n").encode())
        finally:
            os.close(fd)
        os.replace(lock, path)

    def drop_ref_file(self, ref: str) -> None:
        """Remove ``ref`` when it is a loose ref file (nothing when it is absent, packed, or refs
        are in a reftable: then it stays, harmless, until the next one replaces it)."""
        if self.ref_files():
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(self.common_dir, ref))

    def tips(self, deadline: float) -> dict[str, str]:
        """``refs/heads/*`` and ``refs/stash`` -> commit id, read from the ref files (loose
        refs over ``packed-refs``); through git when refs are in a reftable."""
        if not self.ref_files():
            out = self.run(
                "for-each-ref",
                "--format=%(objectname) %(objecttype) %(refname)",
                "refs/heads/",
                "refs/stash",
                deadline=deadline,
            ).decode("utf-8", "surrogateescape")
            return {
                name: oid
                for oid, kind, name in (line.split(" ", 2) for line in out.splitlines())
                if kind == "commit"
            }
        tips: dict[str, str] = {}
        try:
            with open(os.path.join(self.common_dir, "packed-refs"), "rb") as f:
                for raw in f.read().decode("utf-8", "surrogateescape").splitlines():
                    if raw[:1] in ("#", "^") or " " not in raw:
                        continue
                    oid, name = raw.split(" ", 1)
                    if name.startswith("refs/heads/") or name == "refs/stash":
                        tips[name] = oid
        except FileNotFoundError:
            pass
        heads = os.path.join(self.common_dir, "refs", "heads")
        for folder, _dirs, files in os.walk(heads):
            for name in files:
                if name.endswith(".lock"):
                    continue
                full = os.path.join(folder, name)
                ref = "refs/heads/" + os.path.relpath(full, heads).replace(os.sep, "/")
                value = _read_ref(full)
                if value:
                    tips[ref] = value
        stash = _read_ref(os.path.join(self.common_dir, "refs", "stash"))
        if stash:
            tips["refs/stash"] = stash
        return tips


def _read_ref(path: str) -> str:
    """The id a loose ref file holds ("" for none, or for a symbolic ref)."""
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            value = f.read(200).strip()
    except (OSError, UnicodeDecodeError):
        return ""
    return value if value and all(c in "0123456789abcdef" for c in value) else ""
