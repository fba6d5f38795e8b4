"""The installed ``gatesh`` launcher: a script that starts the real interpreter fast (S14).

Console-script wrappers made by pip import ``site`` (and, under a version manager, go through
its shim: ~80 ms). The launcher written here calls the real interpreter with ``-I -S`` (no site,
no environment variables, no user site) and puts gatesh's own folders on ``sys.path`` itself, so
``gatesh -c true`` costs an interpreter start plus the standard-library client.

Two interpreters. The *full* interpreter is the one gatesh is installed in: it has the
dependencies (tree-sitter, the model SDK, …). The ``-c`` client (and the ``bash``/``zsh``/``sh``
links, S1) and the hook adapter import only the standard library, so any interpreter of the same
version can run them, and one built without ``--enable-shared`` (a distribution's
``/usr/bin/python3.X``) starts ~1.3 ms faster than a version manager's shared-library build.
:func:`write_launcher` times the candidates (:func:`fast_interpreter`); when one is clearly
faster, the launcher is a short ``/bin/sh`` script that starts shell-style calls and ``gatesh
hook`` on it and everything else on the full interpreter, and falls back to the full one when
the fast one is gone. On the fast interpreter only the client and the hook adapter run:
:func:`gatesh._entry.main` hands anything else (the PTY session, a subcommand the script's cheap
test let through) to the full interpreter, and the client starts the daemon and its in-process
fallback there.

Why a ``/bin/sh`` script and not ``#!/usr/bin/python3.X``: a ``#!`` line cannot fall back, so a
missing fast interpreter (a distribution upgrade) would make every call fail with the caller's
"required file not found", naming neither interpreter; and every subcommand that needs the
dependencies would start the fast interpreter only to hand over to the full one (+6 ms measured).
``gatesh hook`` (every harness tool call) needs none, so it starts on the fast one like ``-c``. The script costs ~0.5 ms per call (measured: ``dash`` and one more exec), about
half of what the fast interpreter saves; the timing includes it.

Guarantees: :func:`render_launcher` returns a script that runs ``gatesh._entry.main`` with
``sys.argv[0]`` as invoked (a shim link's name survives, so ``bash``/``zsh``/``sh`` links work),
and imports gatesh from exactly the folders given, never from the current directory. Nothing that
needs a dependency runs on the fast interpreter. The folders are also written on the script's
third line (:data:`IMPORT_PATH_PREFIX`, read by :func:`read_import_path`) so ``gatesh doctor``
can check them.

The gate's own code must be the installed copy (S3.4): ``install.sh`` takes the folders from
:func:`installed_paths`, which asks the venv's interpreter in isolated mode (no current folder, no
``PYTHONPATH``) where gatesh is and refuses a gatesh that is not a copy inside that venv (an
editable or linked install imports from the checkout, a folder the agent may be working in).
:func:`import_path_problems` lists the folders on an import path that another user could write or
that lie inside a repository.
Known limit: with a ``#!`` script the kernel passes the script's path, not the caller's argv[0],
so a login shell's leading ``-`` cannot be seen through a shim; ``-l``/``--login`` still work.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
import statistics
import subprocess
import sys
import sysconfig

from gatesh._errors import SetupError
from gatesh._invoke import CLI_FLAGS, SHELL_NAMES, STDLIB_SUBCOMMANDS
from gatesh._paths import LAUNCHER_HEADER

__all__ = [
    "LauncherError",
    "default_paths",
    "direct_hook",
    "fast_interpreter",
    "import_path_problems",
    "installed_paths",
    "read_import_path",
    "read_launcher",
    "real_interpreter",
    "render_launcher",
    "write_launcher",
]

# Linux reads at most this many bytes of a ``#!`` line (BINPRM_BUF_SIZE, 256 since 5.1; 128 before).
SHEBANG_MAX = 127
HEADER = LAUNCHER_HEADER
# The script's third line: the folders it imports from, as a JSON list, for `gatesh doctor`.
IMPORT_PATH_PREFIX = "# import path: "
# Where systems keep their own interpreters ({v} is "3.11"). Only exact-version names: a
# ``python3`` link may point at another version tomorrow.
FAST_CANDIDATES = ("/usr/bin/python{v}", "/usr/local/bin/python{v}", "/bin/python{v}")
# Timed runs per interpreter, interleaved (after one untimed warm-up): enough for a stable median
# on a noisy two-core machine while keeping the choice to ~0.3 s.
TIMED_STARTS = 9
# A candidate is used only when the client's start costs this much less CPU on it (through /bin/sh)
# than on the full interpreter (median; seconds, and as a fraction): smaller differences are within
# run-to-run noise, and a second interpreter is one more thing that can change under the launcher.
MIN_GAIN_S = 0.0003
MIN_GAIN_FRACTION = 0.03
# A probe that takes longer than this disqualifies the interpreter.
PROBE_TIMEOUT_S = 10.0

_chosen: dict[tuple[str, str], str | None] = {}


class LauncherError(SetupError):
    """The launcher cannot be written safely; the message says why and what to do."""


def real_interpreter(python: str | None = None) -> str:
    """The interpreter binary itself (a version manager's shim resolved away)."""
    python = python or sys.executable
    return os.path.realpath(python) if os.path.exists(python) else python


def default_paths() -> list[str]:
    """The folders gatesh and its dependencies import from in this installation.

    The folder holding the ``gatesh`` package comes first (an editable install points into the
    source tree), then this interpreter's purelib/platlib site folders.
    """
    import gatesh

    out = [os.path.dirname(os.path.dirname(os.path.abspath(gatesh.__file__)))]
    for key in ("purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p and p not in out:
            out.append(p)
    for p in sys.path:
        if p.endswith("site-packages") and p not in out and os.path.isdir(p):
            out.append(p)
    return out


def _trusted_file(path: str) -> bool:
    """True when ``path`` and its folder belong to root or to us and nobody else can write them:
    the fast interpreter runs the gate, so one that others could replace would not do."""
    for p in (path, os.path.dirname(path)):
        try:
            st = os.stat(p)
        except OSError:
            return False
        if st.st_uid not in (0, os.getuid()) or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return False
    return True


# What the ``-c`` client imports on its way to a command (gatesh from ``sys.argv[1]``): the
# probe's test that an interpreter can run the client, and the work it is timed on.
_CLIENT_START = (
    "import sys; sys.path[:0] = [sys.argv[1]]; import gatesh._entry, gatesh.client, _socket, _json"
)


def _probe(python: str, home: str) -> str | None:
    """The interpreter's ``sys.implementation.cache_tag`` when it can import the ``-c`` client
    (gatesh from ``home``, with ``-I -S`` as the launcher starts it), else None."""
    code = _CLIENT_START + "; print(sys.implementation.cache_tag)"
    try:
        out = subprocess.run(
            [python, "-IS", "-c", code, home],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    tag = out.stdout.strip()
    return tag if out.returncode == 0 and tag else None


def _start_cost(argv: list[str]) -> float:
    """CPU time (user and system, seconds) of one run of ``argv``, inf when it fails. CPU time,
    not wall time: what a start costs hardly moves with the machine's load, while the wall time
    on a busy machine is mostly waiting for a core, and flipped the choice from run to run."""
    try:
        pid = os.posix_spawn(argv[0], argv, os.environ)
        _, status, usage = os.wait4(pid, 0)
    except OSError:
        return float("inf")
    if os.waitstatus_to_exitcode(status) != 0:
        return float("inf")
    return usage.ru_utime + usage.ru_stime


def fast_interpreter(full: str, home: str, candidates: list[str] | None = None) -> str | None:
    """The interpreter the launcher should start the ``-c`` client on, when it is not ``full``.

    Candidates (default :data:`FAST_CANDIDATES` for ``full``'s version) qualify when they are
    trusted files (:func:`_trusted_file`), have ``full``'s cache tag (same implementation and
    version: the client and its ``.pyc`` files are shared) and can import the client from
    ``home``. Each is measured starting the client as the launcher would start it (``/bin/sh``
    exec-ing it, the client's imports: :data:`_CLIENT_START`) against ``full`` started directly,
    by CPU time (:func:`_start_cost`), :data:`TIMED_STARTS` interleaved rounds; the cheapest
    median wins if it beats ``full`` by :data:`MIN_GAIN_S` and :data:`MIN_GAIN_FRACTION`.
    Timing the client's start, not a bare ``pass``, weighs what differs where the client spends
    its time (running bytecode and loading modules, where a build with profile-guided
    optimisation gains most), so the choice does not hang on a margin as thin as the start alone.
    Returns None when ``full`` should run everything. The answer is remembered for this process.
    """
    key = (full, home)
    remember = candidates is None
    if remember and key in _chosen:
        return _chosen[key]
    tag = _probe(full, home)
    if tag is None:
        return None
    if candidates is None:
        version = tag.removeprefix("cpython-")
        if not (tag.startswith("cpython-") and version.isdigit() and len(version) >= 2):
            return None
        candidates = [c.format(v=f"{version[0]}.{version[1:]}") for c in FAST_CANDIDATES]
    seen = {os.path.realpath(full)}
    qualified = []
    for c in candidates:
        real = os.path.realpath(c)
        if real in seen or not os.path.isfile(real) or not os.access(real, os.X_OK):
            continue
        seen.add(real)
        if _trusted_file(real) and _probe(real, home) == tag:
            qualified.append(real)
    best = None
    if qualified:
        runs = {full: [full, "-IS", "-c", _CLIENT_START, home]}
        for p in qualified:
            runs[p] = ["/bin/sh", "-c", 'exec "$0" -IS -c "$1" "$2"', p, _CLIENT_START, home]
        times: dict[str, list[float]] = {p: [] for p in runs}
        for argv in runs.values():
            _start_cost(argv)  # warm-up: the first start may read the binary from disk
        for _ in range(TIMED_STARTS):
            for p, argv in runs.items():
                times[p].append(_start_cost(argv))
        medians = {p: statistics.median(t) for p, t in times.items()}
        fastest = min(qualified, key=lambda p: medians[p])
        gain = medians[full] - medians[fastest]
        if gain >= MIN_GAIN_S and gain >= MIN_GAIN_FRACTION * medians[full]:
            best = fastest
    if remember:
        _chosen[key] = best
    return best


def _sq(text: str) -> str:
    """``text`` inside single quotes for ``/bin/sh`` (a single quote inside becomes '"'"')."""
    return "'" + text.replace("'", "'\"'\"'") + "'"


def render_launcher(python: str, paths: list[str], fast: str | None = None) -> str:
    """The launcher script text for interpreter ``python`` importing gatesh from ``paths[0]`` and
    its dependencies from the rest (after the standard library).

    ``python`` should be the real binary (see :func:`real_interpreter`). Without ``fast`` the
    script is ``#!python -IS`` (or, when that line would be too long for the kernel, a ``/bin/sh``
    script that execs it). With ``fast`` (another interpreter of the same version, see
    :func:`fast_interpreter`) it is a ``/bin/sh`` script: shell-style calls (a first argument
    starting with ``-`` other than ``-h``/``--help``/``--version``, or a ``bash``/``zsh``/``sh``
    link) and the standard-library subcommands (``hook``) start on ``fast`` when it is still
    there, everything else on ``python``; the Python code
    is the same either way and passes ``python`` and its dependency folders to
    :func:`gatesh._entry.main`, which finishes the choice. The script's ``case`` is written from
    the tables of :mod:`gatesh._invoke`, the one reader of a shell's argv.
    """
    # gatesh's own folder goes first (it must win); the others go after the standard library, as
    # in a normal interpreter, so the standard-library modules the client imports are found at
    # once, without listing a large site-packages folder first.
    first, rest = list(paths[:1]), list(paths[1:])
    where = IMPORT_PATH_PREFIX + json.dumps(list(paths))
    if fast and fast != python:
        # JSON string and list literals are Python literals too, in double quotes (easier to read
        # inside the shell's single quotes).
        code = (
            f"import sys\ndel sys.argv[0]\nsys.path[:0] = {json.dumps(first)}\n"
            "from gatesh._entry import main\n"
            f"sys.exit(main(full=({json.dumps(python)}, {json.dumps(rest)})))\n"
        )
        return (
            f"#!/bin/sh\n{HEADER}\n{where}\n"
            "# Shell-style calls (`gatesh -c CMD`, the bash/zsh/sh links) and `gatesh hook` need only\n"
            "# gatesh's standard-library client and start on FAST, which starts faster; everything else\n"
            "# starts on FULL, the interpreter gatesh is installed in (it has the dependencies).\n"
            "# Without FAST, FULL runs everything.\n"
            f"FAST={_sq(fast)}\n"
            f"FULL={_sq(python)}\n"
            "python=$FULL\n"
            f"case ${{0##*/}} in {' | '.join(SHELL_NAMES)}) python=$FAST ;; esac\n"
            f"case ${{1-}} in {' | '.join(CLI_FLAGS)}) ;; -* | {' | '.join(STDLIB_SUBCOMMANDS)}) python=$FAST ;; esac\n"
            '[ -x "$python" ] || python=$FULL\n'
            f'exec "$python" -IS -c {_sq(chr(10) + code)} "$0" "$@"\n'
        )
    setup = f"sys.path[:0] = {first!r}\n" + (f"sys.path += {rest!r}\n" if rest else "")
    shebang = f"#!{python} -IS"
    if len(shebang) <= SHEBANG_MAX and " " not in python:
        return f"{shebang}\n{HEADER}\n{where}\nimport sys\n{setup}from gatesh._entry import main\nsys.exit(main())\n"
    # With -c, sys.argv[0] is "-c": the script's own path ("$0") comes next and takes its place.
    code = f"import sys\ndel sys.argv[0]\n{setup}from gatesh._entry import main\nsys.exit(main())\n"
    return f'#!/bin/sh\n{HEADER}\n{where}\nexec {_sq(python)} -IS -c {_sq(code)} "$0" "$@"\n'


def direct_hook(launcher: str) -> list[str] | None:
    """The words that start the hook adapter the way ``launcher`` would, without the launcher:
    ``[PYTHON, "-IS", "-c", CODE]``, to which the caller adds ``hook NAME``. None when
    ``launcher`` is not one this module wrote (or does not name its import folders).

    PYTHON is the interpreter the launcher starts ``gatesh hook`` on (its fast one when it has
    one); CODE imports gatesh from the launcher's own folders, with the same flags (``-I -S``: no
    site, no ``PYTHON*`` variables, no user site, not the current folder), and calls
    :func:`gatesh.hooks.run` with the full interpreter and its dependency folders when PYTHON is
    the fast one. So a harness's hook entry (:func:`gatesh.install.hook_command`) starts the
    interpreter itself, not a ``/bin/sh`` launcher that then starts it (S14: ~1 ms per call), and
    imports exactly what the launcher would (S3.4: the installed copy).
    """
    full, fast = read_launcher(launcher)
    paths = read_import_path(launcher)
    if full is None or not paths:
        return None
    first, rest = json.dumps(paths[:1]), json.dumps(paths[1:])
    if fast:
        code = (
            f"import sys;sys.path[:0]={first};from gatesh.hooks import run;"
            f"run(sys.argv[2:],({json.dumps(full)},{rest}))"
        )
        return [fast, "-IS", "-c", code]
    extra = f"sys.path+={rest};" if paths[1:] else ""
    return [
        full,
        "-IS",
        "-c",
        f"import sys;sys.path[:0]={first};{extra}from gatesh.hooks import run;run(sys.argv[2:])",
    ]


def write_launcher(
    dest: str, python: str | None = None, paths: list[str] | None = None, fast: str | bool = True
) -> str:
    """Write the launcher to ``dest`` (mode 0755, atomically) and return ``dest``.

    ``fast``: True picks the interpreter for the ``-c`` client by timing (:func:`fast_interpreter`,
    ~0.2 s the first time in a process); False runs everything on ``python`` (for launchers whose
    calls are mostly subcommands, such as the PTY session's); a path names the interpreter.
    """
    full = real_interpreter(python)
    paths = paths if paths is not None else default_paths()
    if isinstance(fast, str):
        chosen: str | None = real_interpreter(fast)
    else:
        chosen = fast_interpreter(full, paths[0]) if fast and paths else None
    text = render_launcher(full, paths, chosen)
    tmp = f"{dest}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(tmp, 0o755)
    os.replace(tmp, dest)
    return dest


# What the venv's interpreter is asked (isolated, from /): where gatesh is, and the venv's folders.
_WHERE_CODE = """\
import json, os, sys, sysconfig
import gatesh
paths = sysconfig.get_paths()
print(json.dumps({"package": os.path.dirname(os.path.abspath(gatesh.__file__)),
                  "site": [paths.get("purelib", ""), paths.get("platlib", "")],
                  "prefix": sys.prefix}))
"""


def installed_paths(python: str) -> list[str]:
    """The launcher's import folders for gatesh installed in ``python``'s venv: the site folder
    holding the gatesh package first, then the venv's other site folder.

    Asked of ``python`` with ``-I`` from ``/``, so neither the current folder nor ``PYTHONPATH``
    can supply the answer. Raises :class:`LauncherError` when gatesh there is not a copy inside the
    venv: an editable install, a ``.pth`` file or a link would make the gate import whatever the
    source folder holds now.
    """
    try:
        proc = subprocess.run(
            [python, "-I", "-c", _WHERE_CODE],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S * 6,
            cwd="/",
            check=False,
        )
        info = json.loads(proc.stdout) if proc.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        raise LauncherError(f"cannot ask {python} where gatesh is: {exc}") from exc
    if not isinstance(info, dict):
        raise LauncherError(f"{python} cannot import gatesh: {proc.stderr.strip()[-500:]}")
    package = os.path.realpath(str(info.get("package", "")))
    prefix = os.path.realpath(str(info.get("prefix", "")))
    site = [os.path.realpath(p) for p in info.get("site", []) if isinstance(p, str) and p]
    home = os.path.dirname(package)
    if home not in site or not package.startswith(prefix + os.sep):
        raise LauncherError(
            f"gatesh in {prefix} imports from {package}, which is not a copy inside that venv (an "
            "editable or linked install): the gate's code would be whatever that folder holds. "
            "Install it without --editable (install.sh does)."
        )
    return [home, *[p for p in dict.fromkeys(site) if p != home]]


def read_import_path(path: str) -> list[str] | None:
    """The import folders a launcher written here names on its third line; None for any other
    file (or a launcher written before the line existed)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = [f.readline(65536) for _ in range(3)]
    except OSError:
        return None
    if (
        len(lines) < 3
        or lines[1].rstrip("\n") != HEADER
        or not lines[2].startswith(IMPORT_PATH_PREFIX)
    ):
        return None
    try:
        value = json.loads(lines[2][len(IMPORT_PATH_PREFIX) :])
    except ValueError:
        return None
    if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
        return None
    return value


def _others_may_write(st: os.stat_result) -> bool:
    """True when a user other than root and us can write a file or folder with this stat."""
    if st.st_uid not in (0, os.getuid()):
        return True
    if st.st_mode & stat.S_IWOTH:
        return True
    if st.st_mode & stat.S_IWGRP:
        import grp
        import pwd

        try:
            group = grp.getgrgid(st.st_gid)
        except KeyError:
            return True
        me = pwd.getpwuid(os.getuid()).pw_name if os.getuid() != 0 else "root"
        if any(m != me for m in group.gr_mem):
            return True
        return any(
            u.pw_gid == st.st_gid and u.pw_uid not in (0, os.getuid()) for u in pwd.getpwall()
        )
    return False


def import_path_problems(paths: list[str]) -> list[str]:
    """What is wrong with ``paths`` as the folders the gate's code is imported from (S3.4).

    A problem is a folder (or one of its parents, or the ``gatesh`` package in it) that a user
    other than root and us can write (a sticky parent such as ``/tmp`` only counts when others
    own the folder itself), a folder that is missing while others may create it, and a folder
    inside a git repository (the agent may be working there). Empty when all is well.
    """
    problems: list[str] = []
    for folder in paths:
        real = os.path.realpath(folder)
        targets = [real] + (
            [os.path.join(real, "gatesh")] if os.path.isdir(os.path.join(real, "gatesh")) else []
        )
        node = real
        while True:
            try:
                st = os.stat(node)
            except OSError:
                st = None
            if st is not None:
                sticky = bool(st.st_mode & stat.S_ISVTX) and node not in targets
                if _others_may_write(st) and not sticky:
                    owner = (
                        f"uid {st.st_uid}"
                        if st.st_uid not in (0, os.getuid())
                        else f"mode {stat.S_IMODE(st.st_mode):04o}"
                    )
                    problems.append(f"{folder}: {node} can be written by another user ({owner})")
                    break
                if node == real and not stat.S_ISDIR(st.st_mode):
                    problems.append(f"{folder}: not a folder")
                    break
            elif node == real:
                pass  # missing: only a problem when its parents let others create it (checked above)
            if os.path.lexists(os.path.join(node, ".git")):
                problems.append(
                    f"{folder}: inside the git repository {node} (an agent may be working there)"
                )
                break
            if node == "/":
                break
            node = os.path.dirname(node)
        for target in targets[1:]:
            try:
                if _others_may_write(os.stat(target)):
                    problems.append(f"{folder}: {target} can be written by another user")
            except OSError:
                pass
    return list(dict.fromkeys(problems))


def read_launcher(path: str) -> tuple[str | None, str | None]:
    """(the full interpreter, the fast one or None) of a launcher this module wrote, read from its
    ``#!`` line, its ``FULL=``/``FAST=`` lines or the ``exec '…' -IS`` of the long-path form;
    (None, None) for any other file."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read(65536).splitlines()
    except OSError:
        return None, None
    if len(lines) < 2 or lines[1] != HEADER or not lines[0].startswith("#!"):
        return None, None
    if lines[0] != "#!/bin/sh":
        return lines[0][2:].rsplit(" -IS", 1)[0], None
    found: dict[str, str] = {}
    for line in lines[2:]:
        if line.startswith(("FULL=", "FAST=")):
            text = line[5:]
        elif line.startswith("exec ") and " -IS " in line:
            text = line[5:].split(" -IS ", 1)[0]
        else:
            continue
        try:
            words = shlex.split(text)
        except ValueError:
            continue
        if len(words) == 1 and not words[0].startswith("$"):
            found.setdefault(line[:4], words[0])
    return found.get("FULL") or found.get("exec"), found.get("FAST")
