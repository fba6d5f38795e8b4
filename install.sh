#!/bin/sh
# Install gatesh for this user: a venv in the data folder, a fast launcher, the shims folder,
# the man page, and the install record gatesh protects them by.
#
#   ./install.sh [--prefix DIR] [--dev]          install or update (idempotent)
#   ./install.sh --uninstall [--purge]           remove it (--purge: config and logs too)
#
# Environment: GATESH_PYTHON (the Python to build the venv from, 3.11 or newer),
# GATESH_INSTALL_PIP_ARGS (extra pip arguments), GATESH_INSTALL_SYSTEM_SITE=1 (a venv that
# also sees the system's site-packages; used by the tests to avoid downloads).
set -eu

usage() {
    sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
}

prefix="$HOME/.local/bin"
dev=0
uninstall=0
purge=0
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) [ $# -ge 2 ] || { echo "install.sh: --prefix needs a folder" >&2; exit 2; }
                  prefix=$2; shift ;;
        --prefix=*) prefix=${1#--prefix=} ;;
        --dev) dev=1 ;;
        --uninstall) uninstall=1 ;;
        --purge) purge=1 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "install.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    esac
    shift
done
case "$prefix" in /*) ;; *) prefix="$(pwd)/$prefix" ;; esac

# The XDG rules gatesh itself uses (gatesh/_paths.py): a relative value is ignored.
xdg() { case "${1:-}" in /*) printf '%s' "$1" ;; *) printf '%s' "$2" ;; esac; }
data_dir="$(xdg "${XDG_DATA_HOME:-}" "$HOME/.local/share")/gatesh"
config_dir="$(xdg "${XDG_CONFIG_HOME:-}" "$HOME/.config")/gatesh"
state_dir="$(xdg "${XDG_STATE_HOME:-}" "$HOME/.local/state")/gatesh"
venv="$data_dir/venv"
launcher="$prefix/gatesh"
man_page="$(dirname "$prefix")/share/man/man1/gatesh.1"
record="$data_dir/install.json"
marker="gatesh launcher"
src=$(cd "$(dirname "$0")" && pwd)

# --- uninstall -----------------------------------------------------------------------------------
if [ "$uninstall" = 1 ]; then
    # Take out every integration first, wherever the install record says it was made (harness
    # settings and their backups, git hooks in every repository, the global hooks folder, the
    # shims), and stop the daemon: a hook that calls a missing gatesh refuses every command. If any
    # part cannot be removed, stop here and keep the venv, so running this again can finish it.
    if [ -x "$venv/bin/python" ]; then
        (cd / && "$venv/bin/python" -I -m gatesh install all --uninstall) || {
            echo "install.sh: gatesh's integrations could not all be removed (above); nothing else was removed" >&2
            exit 1
        }
    fi
    if [ -x "$launcher" ] && grep -q "$marker" "$launcher" 2>/dev/null; then
        rm -f "$launcher"
        echo "removed $launcher"
    elif [ -e "$launcher" ]; then
        echo "left $launcher alone: install.sh did not write it" >&2
    fi
    for shim in bash zsh sh; do
        [ -L "$data_dir/shims/$shim" ] && rm -f "$data_dir/shims/$shim"
    done
    rmdir "$data_dir/shims" 2>/dev/null || true
    if [ -f "$man_page" ] && grep -q "gatesh" "$man_page" 2>/dev/null; then
        rm -f "$man_page"
        rmdir "$(dirname "$man_page")" "$(dirname "$(dirname "$man_page")")" 2>/dev/null || true
    fi
    rm -rf "$venv" "$data_dir/git-hooks" "$record"
    echo "removed $venv, the shims folder, the man page and the install record"
    if [ "$purge" = 1 ]; then
        rm -rf "$data_dir" "$config_dir" "$state_dir"
        echo "removed $config_dir and $state_dir (config and audit logs)"
    else
        rmdir "$data_dir" 2>/dev/null || true
        echo "kept your config ($config_dir) and audit logs ($state_dir); --purge removes them"
    fi
    exit 0
fi

# --- find a Python 3.11+ and its real interpreter ------------------------------------------------
find_python() {
    for candidate in ${GATESH_PYTHON:-} python3.13 python3.12 python3.11 python3; do
        command -v "$candidate" >/dev/null 2>&1 || continue
        if "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
            # sys.executable is the interpreter itself even when $candidate is a pyenv shim.
            "$candidate" -c 'import os, sys; print(os.path.realpath(sys.executable))'
            return 0
        fi
    done
    return 1
}
python=$(find_python) || {
    echo "install.sh: gatesh needs Python 3.11 or newer (set GATESH_PYTHON to one)" >&2
    exit 1
}

# --- the venv ------------------------------------------------------------------------------------
mkdir -p "$data_dir"
chmod 700 "$data_dir"
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "using the existing venv $venv"
else
    rm -rf "$venv"
    site=""
    [ "${GATESH_INSTALL_SYSTEM_SITE:-0}" = 1 ] && site="--system-site-packages"
    # shellcheck disable=SC2086
    "$python" -m venv $site "$venv"
    echo "created the venv $venv (from $python)"
fi

spec="$src"
[ "$dev" = 1 ] && spec="$src[test]"
echo "installing gatesh from $src into the venv …"
# shellcheck disable=SC2086
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check ${GATESH_INSTALL_PIP_ARGS:-} "$spec"

# --- the launcher --------------------------------------------------------------------------------
# `#!REAL_PYTHON -IS`: no site import and no environment (fast, S14), so the venv's import paths
# are computed now and written into the launcher. When a same-version system interpreter starts
# clearly faster (timed now), gatesh.launcher writes a small /bin/sh launcher instead: `-c` and the
# shims start on that one, everything else on REAL_PYTHON (it falls back to REAL_PYTHON if the
# faster one goes away). Rerun this script to choose again.
#
# The gate's code is the copy pip just put in the venv, never this source folder: every
# interpreter call below is isolated (-I: no current folder, no PYTHONPATH) and runs from /, and
# gatesh.launcher.installed_paths refuses a gatesh that is not a copy inside the venv.
interp="$venv/bin/python"
real=$(cd / && "$interp" -I -c 'import os, sys; print(os.path.realpath(sys.executable))')
case "$real" in
    */shims/*) echo "install.sh: $real is a shim, not an interpreter" >&2; exit 1 ;;
esac
mkdir -p "$prefix"
tmp="$launcher.tmp.$$"
(cd / && "$interp" -I -c '
import sys
from gatesh.launcher import LauncherError, installed_paths, write_launcher
try:
    write_launcher(sys.argv[1], paths=installed_paths(sys.executable))
except LauncherError as exc:
    sys.exit(f"install.sh: {exc}")
' "$tmp") || { rm -f "$tmp"; exit 1; }
mv -f "$tmp" "$launcher"
echo "wrote the launcher $launcher"
"$launcher" --version >/dev/null

# --- the man page --------------------------------------------------------------------------------
if [ -f "$src/man/gatesh.1" ]; then
    mkdir -p "$(dirname "$man_page")"
    cp "$src/man/gatesh.1" "$man_page.tmp.$$" && chmod 644 "$man_page.tmp.$$" && mv -f "$man_page.tmp.$$" "$man_page"
    echo "installed the man page $man_page"
    # man finds pages next to the folders on PATH; the launcher's folder may join PATH only at the
    # next login (Debian's ~/.profile adds ~/.local/bin when it exists), so say what works now.
    if ! command -v man >/dev/null 2>&1 || [ "$(man -w gatesh 2>/dev/null)" != "$man_page" ]; then
        man_now="    man $man_page"
    fi
fi

# --- the install record --------------------------------------------------------------------------
# What self-protection reads at decision time (S3.4): where this installation put its parts.
(cd / && "$interp" -I -c '
import os, sys
from gatesh import _paths, _person
launcher, venv, man, source, record = sys.argv[1:6]
known = _paths.read_install_record(record).launchers
_paths.update_install_record(record, _paths.RecordChange(
    launchers=tuple(dict.fromkeys([*known, launcher])),
    venv=venv, source=source,
    man=(man,) if os.path.isfile(man) else (),
    # Your folders and PATH, for a daemon started where your environment cannot be read (S9.7).
    folders=_person.recorded_folders(), path=os.environ.get("PATH") or "",
))
' "$launcher" "$venv" "$man_page" "$src" "$record") || { echo "install.sh: could not write $record" >&2; exit 1; }
echo "recorded the installation in $record"

# --- the shims folder ----------------------------------------------------------------------------
shims_text=$("$launcher" install shims)


# --- next steps ----------------------------------------------------------------------------------
gatesh_cmd="$launcher"
echo
echo "gatesh is installed: $launcher"
case ":${PATH}:" in
    *":$prefix:"*) gatesh_cmd=gatesh ;;
    *) echo
       echo "$prefix is not on your PATH. Add it (in ~/.bashrc or ~/.zshrc):"
       echo "    export PATH=\"$prefix:\$PATH\"" ;;
esac
if [ -n "${man_now:-}" ]; then
    echo
    echo "man gatesh finds the manual once $prefix is on your PATH (a new login); until then:"
    echo "    man $man_page"
fi
cat <<EOF

Next steps:
  $gatesh_cmd doctor
      check the installation and print what to fix
  $gatesh_cmd -c 'echo ok'
      gate one command, then run it (an interactive gated shell: $gatesh_cmd)
  $gatesh_cmd install claude-code        (or codex, gemini, git --global)
      hook gatesh into your agent; see gatesh(1) and the README
  $gatesh_cmd watch
      see every decision as it happens and answer escalations

$shims_text
EOF
