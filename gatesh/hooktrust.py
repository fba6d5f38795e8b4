"""Harness hook trust (S11): Codex runs a user's hook only once that exact hook is trusted.

Codex 0.169 keeps trust per hook in its ``config.toml`` (``[hooks.state."<hooks.json>:<event>:<group>:
<handler>"] trusted_hash = "sha256:…"``) and silently skips, in ``codex exec`` too, a hook that
nobody trusted or that changed since (its command, matcher, timeout or status message: a *stale
hash*). The hash is Codex's own digest of a normalised form of the hook, so gatesh never computes
it: it asks Codex. ``codex app-server`` (JSON-RPC over stdio) lists every hook with its key,
current hash and trust status (``hooks/list``), and writes trust through Codex's own config writer
(``config/batchWrite``), as Codex's ``/hooks`` screen does.

Guarantees: only hooks gatesh wrote (``is_ours``) are ever trusted; the result is read back from
Codex afterwards, so "trusted" is Codex's word, not ours; a Codex that cannot be started, answers
an error or does not answer within :data:`TIMEOUT_S` raises :class:`TrustError` with what the
person must do instead. Of the pinned harnesses only Codex has hook trust (Claude Code and Gemini
CLI run the hooks in the user's settings as they are).
"""

from __future__ import annotations

import contextlib
import enum
import json
import os
import queue
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from gatesh._errors import SetupError

__all__ = [
    "MANUAL_STEPS",
    "HookTrust",
    "Trust",
    "TrustError",
    "codex_binary",
    "ensure_trusted",
    "list_hooks",
]

# codex app-server starts in well under a second; a cold start on a loaded machine, a few seconds.
TIMEOUT_S: Final = 30.0

MANUAL_STEPS: Final = (
    "start `codex` in a terminal, type /hooks, and trust gatesh's two hooks (PreToolUse for "
    "Bash, and UserPromptSubmit); or run `gatesh install codex --codex PATH` with the path of "
    "the codex executable"
)


class Trust(enum.Enum):
    """Codex's ``trustStatus`` for one hook."""

    TRUSTED = "trusted"
    UNTRUSTED = "untrusted"
    MODIFIED = "modified"  # trusted once, changed since: the stored hash is stale
    MANAGED = "managed"  # from a managed (system) layer: always runs
    UNKNOWN = "unknown"  # a status this gatesh does not know: treated as not trusted

    @property
    def runs(self) -> bool:
        return self in (Trust.TRUSTED, Trust.MANAGED)


@dataclass(frozen=True)
class HookTrust:
    """One hook as Codex sees it."""

    key: str
    event: str
    command: str
    current_hash: str
    trust: Trust
    enabled: bool


class TrustError(SetupError):
    """Codex could not be asked or did not trust the hooks; the message says what to do."""


def codex_binary(explicit: str | None = None) -> str | None:
    """The codex executable: ``explicit`` when given, else ``codex`` on PATH."""
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    return shutil.which("codex")


class _AppServer:
    """``codex app-server`` on stdio: one request at a time, each answered within a deadline."""

    def __init__(self, codex: str, codex_home: str) -> None:
        env = dict(os.environ)
        env["CODEX_HOME"] = codex_home
        try:
            self.proc = subprocess.Popen(
                [codex, "app-server"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            raise TrustError(f"cannot start {codex} app-server: {exc}") from exc
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0
        self.deadline = time.monotonic() + TIMEOUT_S

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(message) + "\n")
            self.proc.stdin.flush()
        except OSError as exc:
            raise TrustError(f"codex app-server stopped reading: {exc}") from exc

    def call(self, method: str, params: dict[str, Any]) -> Any:
        self.next_id += 1
        rid = self.next_id
        self._send({"id": rid, "method": method, "params": params})
        while True:
            left = self.deadline - time.monotonic()
            try:
                line = self.lines.get(timeout=max(left, 0.01))
            except queue.Empty:
                raise TrustError(
                    f"codex app-server did not answer {method} within {TIMEOUT_S:.0f} s"
                ) from None
            if line is None:
                raise TrustError(f"codex app-server exited before answering {method}")
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if not isinstance(msg, dict) or msg.get("id") != rid:
                continue  # notifications, other ids
            if "error" in msg:
                err = msg["error"]
                text = err.get("message") if isinstance(err, dict) else err
                raise TrustError(f"codex app-server refused {method}: {text}")
            return msg.get("result")

    def notify(self, method: str) -> None:
        self._send({"method": method})

    def close(self) -> None:
        with contextlib.suppress(OSError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)


def _open(codex: str, codex_home: str) -> _AppServer:
    server = _AppServer(codex, codex_home)
    try:
        server.call("initialize", {"clientInfo": {"name": "gatesh", "version": "1"}})
        server.notify("initialized")
    except TrustError:
        server.close()
        raise
    return server


def _hooks(server: _AppServer, cwd: str) -> list[HookTrust]:
    result = server.call("hooks/list", {"cwds": [cwd]})
    out = []
    data = result.get("data") if isinstance(result, dict) else None
    for entry in data if isinstance(data, list) else []:
        for h in entry.get("hooks") or [] if isinstance(entry, dict) else []:
            if not isinstance(h, dict) or not isinstance(h.get("key"), str):
                continue
            try:
                trust = Trust(h.get("trustStatus"))
            except ValueError:
                trust = Trust.UNKNOWN
            out.append(
                HookTrust(
                    h["key"],
                    str(h.get("eventName") or ""),
                    str(h.get("command") or ""),
                    str(h.get("currentHash") or ""),
                    trust,
                    h.get("enabled") is not False,
                )
            )
    return out


def list_hooks(codex: str, codex_home: str, cwd: str | None = None) -> list[HookTrust]:
    """Every hook Codex discovers for ``cwd`` (default: the folder holding ``codex_home``)."""
    server = _open(codex, codex_home)
    try:
        return _hooks(server, cwd or os.path.dirname(os.path.abspath(codex_home)))
    finally:
        server.close()


def ensure_trusted(codex: str, codex_home: str, ours: Callable[[str], bool]) -> list[HookTrust]:
    """Trust every hook whose command ``ours`` accepts and that Codex does not run yet; return
    those hooks as Codex reports them afterwards. Raises TrustError when one still does not run."""
    cwd = os.path.dirname(os.path.abspath(codex_home))
    server = _open(codex, codex_home)
    try:
        mine = [h for h in _hooks(server, cwd) if ours(h.command)]
        if not mine:
            raise TrustError(
                f"Codex does not list gatesh's hooks (is its hooks.json in {codex_home}?)"
            )
        todo = {
            h.key: {"trusted_hash": h.current_hash}
            for h in mine
            if not h.trust.runs and h.current_hash
        }
        if todo:
            server.call(
                "config/batchWrite",
                {
                    "edits": [{"keyPath": "hooks.state", "value": todo, "mergeStrategy": "upsert"}],
                    "filePath": None,
                    "expectedVersion": None,
                    "reloadUserConfig": True,
                },
            )
            mine = [h for h in _hooks(server, cwd) if ours(h.command)]
    finally:
        server.close()
    left = [h for h in mine if not h.trust.runs or not h.enabled]
    if left:
        what = ", ".join(
            f"{h.event} ({h.trust.value}{'' if h.enabled else ', disabled'})" for h in left
        )
        raise TrustError(f"Codex still does not run gatesh's hooks: {what}")
    return mine
