"""The installed ``gatesh`` launcher: a script that starts the real interpreter fast (S14).

Console-script wrappers made by pip import ``site`` (and, under a version manager, go through
its shim: ~80 ms). The launcher written here calls the real interpreter with ``-I -S`` (no site,
no environment variables, no user site) and puts gatesh's own folders on ``sys.path`` itself, so
``gatesh -c true`` costs an interpreter start plus the standard-library client.

Guarantees: :func:`render_launcher` returns a script that runs ``gatesh._entry.main`` with
``sys.argv[0]`` as invoked (a shim link's name survives, so ``bash``/``zsh``/``sh`` links work),
and imports gatesh from exactly the folders given, never from the current directory.
Known limit: with a ``#!`` script the kernel passes the script's path, not the caller's argv[0],
so a login shell's leading ``-`` cannot be seen through a shim; ``-l``/``--login`` still work.
"""

from __future__ import annotations

import os
import sys
import sysconfig

__all__ = ["default_paths", "real_interpreter", "render_launcher", "write_launcher"]

# Linux reads at most this many bytes of a ``#!`` line (BINPRM_BUF_SIZE, 256 since 5.1; 128 before).
SHEBANG_MAX = 127


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


def render_launcher(python: str, paths: list[str]) -> str:
    """The launcher script text for interpreter ``python`` importing gatesh from ``paths[0]`` and
    its dependencies from the rest (after the standard library).

    ``python`` should be the real binary (see :func:`real_interpreter`). When its ``#!`` line
    would be too long for the kernel, a ``/bin/sh`` trampoline execs it instead (one more exec).
    """
    # gatesh's own folder goes first (it must win); the others go after the standard library, as
    # in a normal interpreter, so the standard-library modules the client imports are found at
    # once, without listing a large site-packages folder first.
    first, rest = list(paths[:1]), list(paths[1:])
    body = (
        "import sys\n"
        f"sys.path[:0] = {first!r}\n"
        + (f"sys.path += {rest!r}\n" if rest else "")
        + "from gatesh._entry import main\n"
        "sys.exit(main())\n"
    )
    shebang = f"#!{python} -IS"
    if len(shebang) <= SHEBANG_MAX and " " not in python:
        return f"{shebang}\n# gatesh launcher (written by gatesh.launcher; regenerate, do not edit)\n{body}"
    code = body.replace("sys.exit(main())", "sys.exit(main([sys.argv[1], *sys.argv[2:]]))")
    code = code.replace("'", "'\"'\"'")
    return (
        "#!/bin/sh\n# gatesh launcher (written by gatesh.launcher; regenerate, do not edit)\n"
        f"exec '{python}' -IS -c '{code}' \"$0\" \"$@\"\n"
    )


def write_launcher(dest: str, python: str | None = None, paths: list[str] | None = None) -> str:
    """Write the launcher to ``dest`` (mode 0755, atomically) and return ``dest``."""
    text = render_launcher(real_interpreter(python), paths if paths is not None else default_paths())
    tmp = f"{dest}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(tmp, 0o755)
    os.replace(tmp, dest)
    return dest
