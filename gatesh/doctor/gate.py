"""Doctor's checks of the gate at work: the daemon answers, its folders are the user's alone, the
configuration loads, and the rater backend can be reached (no command is ever sent to a model:
the check asks for the backend's model list).
"""

from __future__ import annotations

import json
import os
import socket
import stat
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from gatesh import _paths
from gatesh.doctor.check import Check, Status

if TYPE_CHECKING:
    from gatesh.config import Config

__all__ = ["check_config", "check_daemon", "check_permissions", "check_rater", "ping"]

_PING_TIMEOUT_S: Final = 3.0
_HTTP_TIMEOUT_S: Final = 5.0


# --- daemon and permissions ---------------------------------------------------------------------


def ping(sock_path: str, timeout: float = _PING_TIMEOUT_S) -> tuple[bool, str]:
    """``(reachable, detail)`` for the daemon at ``sock_path`` (protocol v1 hello + ping)."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(sock_path)
            hello = {"v": 1, "hello": "admin", "pid": os.getpid()}
            s.sendall((json.dumps(hello) + "\n" + json.dumps({"op": "ping"}) + "\n").encode())
            buf = b""
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                chunk = s.recv(65536)
                if not chunk:
                    break
                buf += chunk
                for line in buf.splitlines():
                    try:
                        msg = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(msg, dict) and msg.get("re") == "ping":
                        return bool(msg.get("ok")), f"answered ping ({sock_path})"
                    if isinstance(msg, dict) and msg.get("ok") is False:
                        return False, f"refused: {msg.get('error', '')}"
            return False, "no answer to ping"
    except OSError as exc:
        return False, f"{sock_path}: {exc.strerror or exc}"


def check_daemon(paths: _paths.GatePaths) -> list[Check]:
    ok, detail = ping(paths.socket)
    if ok:
        return [Check("daemon", Status.OK, detail)]
    return [
        Check(
            "daemon",
            Status.FAIL,
            f"not reachable: {detail}",
            "start it with `gatesh daemon` (or run `gatesh -c true`, which starts it); "
            "`gatesh daemon --foreground` shows why it stops",
        )
    ]


def _mode_check(name: str, path: str, forbidden: int, want: str) -> Check | None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return Check(name, Status.FAIL, f"{path}: {exc.strerror}", "check the folder's permissions")
    mode = stat.S_IMODE(st.st_mode)
    if st.st_uid != os.getuid():
        return Check(
            name,
            Status.FAIL,
            f"{path} belongs to uid {st.st_uid}, not you",
            f"remove it (another user could answer for the gate): rm -rf {path}",
        )
    if mode & forbidden:
        return Check(name, Status.FAIL, f"{path} has mode {mode:04o}", f"chmod {want} {path}")
    return Check(name, Status.OK, f"{path} {mode:04o}")


def check_permissions(paths: _paths.GatePaths) -> list[Check]:
    out = [
        _mode_check("runtime folder", paths.runtime_dir, 0o077, "0700"),
        _mode_check("socket", paths.socket, 0o077, "0600"),
        _mode_check("config folder", paths.config_dir, 0o022, "go-w"),
        _mode_check("state folder", paths.state_dir, 0o077, "0700"),
        _mode_check("audit log", paths.audit_log, 0o077, "0600"),
    ]
    return [c for c in out if c is not None]


# --- config and rater ---------------------------------------------------------------------------


def check_config() -> tuple[list[Check], Config | None]:
    """The configuration in force here, and a FAIL naming the bad line when it does not load."""
    from gatesh._errors import ConfigError
    from gatesh.config import load_config

    try:
        config = load_config(os.getcwd())
    except ConfigError as exc:
        return [
            Check(
                "config", Status.FAIL, str(exc), "fix that line; `gatesh config` shows the result"
            )
        ], None
    files = ", ".join(config.files) or "built-in defaults only"
    return [Check("config", Status.OK, f"valid ({files}); rung {config.rung.value}")], config


def check_rater(
    config: Config, urlopen: Callable[..., object] = urllib.request.urlopen
) -> list[Check]:
    """Reach the rater backend without sending a command (anthropic: list models)."""
    from gatesh.rater import backend_name

    rater = config.rater
    try:
        backend = backend_name(config)
    except Exception as exc:
        return [
            Check(
                "rater",
                Status.FAIL,
                f"backend: {exc}",
                "set rater.backend to auto, builtin or anthropic",
            )
        ]
    if backend == "builtin":
        return [Check("rater", Status.OK, "builtin (offline)")]
    from gatesh._person import DAEMON_ENV, read_daemon_env

    settings = {**os.environ, **read_daemon_env(_paths.current().config_dir)[0]}
    key = settings.get(rater.api_key_env, "")
    if not key:
        return [
            Check(
                "rater",
                Status.FAIL,
                f"backend {backend} but ${rater.api_key_env} is empty",
                f"put {rater.api_key_env}=… in ~/.config/gatesh/{DAEMON_ENV} (chmod 600), or "
                'set rater.backend = "builtin"',
            )
        ]
    base = (
        rater.base_url or settings.get("ANTHROPIC_BASE_URL", "") or "https://api.anthropic.com"
    ).rstrip("/")
    request = urllib.request.Request(
        f"{base}/v1/models?limit=1",
        headers={
            "x-api-key": key,
            "anthropic-version": "2023-06-01",
            "user-agent": "gatesh-doctor",
        },
    )
    try:
        with urlopen(request, timeout=_HTTP_TIMEOUT_S) as resp:  # type: ignore[attr-defined]
            status = resp.status
    except urllib.error.HTTPError as exc:
        status = exc.code
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return [
            Check(
                "rater",
                Status.FAIL,
                f"anthropic at {base}: unreachable ({reason})",
                "check rater.base_url and the network; until then every rating fails closed",
            )
        ]
    if status == 200:
        what = "cascade: the builtin first, then anthropic" if backend == "cascade" else "anthropic"
        return [Check("rater", Status.OK, f"{what} at {base} (model {rater.model})")]
    why = {
        401: "the key was rejected",
        403: "the key may not list models",
        404: "no /v1/models there",
    }.get(status, f"HTTP {status}")
    level: Status = Status.WARN if status in (403, 404) else Status.FAIL
    return [
        Check(
            "rater",
            level,
            f"anthropic at {base}: {why}",
            f"check ${rater.api_key_env} and rater.base_url",
        )
    ]
