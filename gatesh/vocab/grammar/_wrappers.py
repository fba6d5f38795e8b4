"""The one wrapper table: programs that run another command given in their argv.

Per wrapper (``sudo``, ``env``, ``timeout``, ``xargs``, ``npx``, …) its options that take a value,
where the wrapped command starts, which options mean it runs no command or runs a shell string,
and which ``NAME=value`` words it passes on to the command as its environment (``sudo VAR=… cmd``
runs ``cmd`` with VAR set, like ``env``). The reader peels wrappers with it
(:mod:`gatesh.reading._peel`); every other layer asks :func:`gatesh.vocab.grammar.inner_argv` or
:data:`NEUTRAL_WRAPPERS`, never a list of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from gatesh._types import Context

from ._parse import Options


@dataclass(frozen=True)
class WrapperSpec:
    """How to peel one wrapper off an argv to find the command it runs.

    ``with_arg``: options that take the next word (or the rest of a short cluster) as value.
    ``operands``: words consumed after the options before the wrapped command (timeout's DURATION).
    ``stop``: options after which the wrapper runs no command (``command -v``, ``sudo -l``).
    ``shell_opt``: options whose value is a shell command string (``su -c``, ``flock -c``).
    ``split_opt``: options whose value is split into words and prepended (``env -S``).
    ``assignments``: NAME=value words before the command are environment assignments (env).
    ``joins_shell``: the remaining words are joined with spaces and run by a shell (watch).
    ``privileged``: the wrapped command runs as another (by default the super) user.
    ``lone_dash``: a bare ``-`` is an option, not the command (``env -``, ``su -``).
    ``replace_opt``: options naming the placeholder the input replaces (``xargs -I {}``).
    ``neutral``: the wrapper changes nothing about what the wrapped command may do (``time``,
    ``nice``), so a read-only command stays read-only under it.
    ``fetches``: the wrapped program may be fetched from a package registry or a URL and run
    (``npx``, ``pnpm dlx``, ``uvx``): code nobody has read runs (S2.1 opaque code).
    """

    with_arg: frozenset[str] = frozenset()
    operands: int = 0
    stop: frozenset[str] = frozenset()
    shell_opt: frozenset[str] = frozenset()
    split_opt: frozenset[str] = frozenset()
    assignments: bool = False
    joins_shell: bool = False
    privileged: bool = False
    context: Context | None = None  # context given to the wrapped command (None: the caller's)
    end_marker: str = ""  # the wrapped command ends before this word (parallel's ":::")
    lone_dash: bool = False
    replace_opt: frozenset[str] = frozenset()
    argv_opt: frozenset[str] = frozenset()  # the words after this option are the command (nix -c)
    neutral: bool = False
    fetches: bool = False

    @property
    def options(self) -> Options:
        """The wrapper's options as :func:`gatesh.vocab.grammar.read` reads them: the first
        operand (the wrapped command) ends them."""
        return Options(value=self.with_arg | self.shell_opt | self.split_opt, ends_at=1)


def _f(*names: str) -> frozenset[str]:
    return frozenset(names)


# uvx's and `uv tool run`'s options that take a value (`uvx --help`): --from names where the
# tool comes from (a package, a git URL, a path), --with more packages.
_UV_TOOL_VALUES: Final = _f(
    "--from",
    "--with",
    "--with-editable",
    "--with-requirements",
    "-p",
    "--python",
    "--index",
    "--index-url",
    "--default-index",
    "--extra-index-url",
    "-f",
    "--find-links",
    "--constraints",
    "--overrides",
    "--env-file",
    "--directory",
    "--project",
    "--cache-dir",
    "-c",
    "--constraint",
)


WRAPPERS: Final = MappingProxyType(
    {
        # privilege
        "sudo": WrapperSpec(
            with_arg=_f(
                "-u",
                "-g",
                "-C",
                "-D",
                "-p",
                "-r",
                "-t",
                "-T",
                "-U",
                "-R",
                "-h",
                "-a",
                "-c",
                "--user",
                "--group",
                "--close-from",
                "--chdir",
                "--prompt",
                "--role",
                "--type",
                "--command-timeout",
                "--other-user",
                "--chroot",
                "--host",
            ),
            stop=_f(
                "-l",
                "--list",
                "-v",
                "--validate",
                "-K",
                "--remove-timestamp",
                "-V",
                "--version",
                "-e",
                "--edit",
            ),
            privileged=True,
            assignments=True,  # `sudo VAR=value cmd`: sudo sets VAR for cmd (sudoers permitting)
        ),
        "doas": WrapperSpec(with_arg=_f("-u", "-C"), privileged=True),
        "pkexec": WrapperSpec(with_arg=_f("--user"), privileged=True),
        "run0": WrapperSpec(
            with_arg=_f(
                "-u",
                "--user",
                "-g",
                "--group",
                "-D",
                "--chdir",
                "--setenv",
                "--property",
                "--description",
                "--unit",
                "--nice",
                "--slice",
            ),
            privileged=True,
        ),
        "gosu": WrapperSpec(operands=1, privileged=True),  # gosu USER cmd
        "su": WrapperSpec(  # su [opts] [-] [user]: only `-c STRING` runs a given command
            with_arg=_f(
                "-s",
                "--shell",
                "-g",
                "--group",
                "-G",
                "--supp-group",
                "-w",
                "--whitelist-environment",
            ),
            shell_opt=_f("-c", "--command", "--session-command"),
            privileged=True,
            lone_dash=True,
        ),
        # environment and scheduling
        "env": WrapperSpec(
            with_arg=_f("-u", "--unset", "-C", "--chdir", "-P"),
            split_opt=_f("-S", "--split-string"),
            assignments=True,
            lone_dash=True,
            neutral=True,
        ),
        "nice": WrapperSpec(with_arg=_f("-n", "--adjustment"), neutral=True),
        "ionice": WrapperSpec(
            with_arg=_f("-c", "--class", "-n", "--classdata"),
            stop=_f("-p", "--pid", "-P", "--pgid", "-u", "--uid"),
            neutral=True,
        ),
        "nohup": WrapperSpec(neutral=True),
        "setsid": WrapperSpec(),
        "timeout": WrapperSpec(
            with_arg=_f("-s", "--signal", "-k", "--kill-after"), operands=1, neutral=True
        ),
        "stdbuf": WrapperSpec(
            with_arg=_f("-i", "-o", "-e", "--input", "--output", "--error"), neutral=True
        ),
        "time": WrapperSpec(with_arg=_f("-f", "--format", "-o", "--output"), neutral=True),
        "command": WrapperSpec(stop=_f("-v", "-V"), neutral=True),
        "builtin": WrapperSpec(neutral=True),
        "exec": WrapperSpec(with_arg=_f("-a")),
        "chroot": WrapperSpec(with_arg=_f("--userspec", "--groups"), operands=1),
        "flock": WrapperSpec(
            with_arg=_f("-w", "--timeout", "-E", "--conflict-exit-code"),
            operands=1,
            shell_opt=_f("-c", "--command"),
        ),
        "strace": WrapperSpec(
            with_arg=_f(
                "-o",
                "-p",
                "-e",
                "-s",
                "-u",
                "-E",
                "-a",
                "-b",
                "-I",
                "-O",
                "-P",
                "-S",
                "-X",
                "--output",
                "--attach",
            )
        ),
        "ltrace": WrapperSpec(
            with_arg=_f(
                "-o", "-p", "-e", "-s", "-u", "-a", "-n", "-l", "-F", "-A", "-D", "-L", "-w"
            )
        ),
        "watch": WrapperSpec(
            with_arg=_f("-n", "--interval", "-d", "--differences", "-q", "--equexit"),
            joins_shell=True,
            neutral=True,
        ),
        "xargs": WrapperSpec(
            with_arg=_f(
                "-a",
                "--arg-file",
                "-d",
                "--delimiter",
                "-E",
                "-I",
                "-L",
                "-n",
                "-P",
                "-s",
                "--max-lines",
                "--max-args",
                "--max-procs",
                "--max-chars",
                "--process-slot-var",
            ),
            context=Context.XARGS,
            replace_opt=_f("-I", "-i", "--replace", "-J"),
            neutral=True,
        ),
        "parallel": WrapperSpec(
            with_arg=_f(
                "-j",
                "--jobs",
                "-S",
                "--sshlogin",
                "-a",
                "--arg-file",
                "--delay",
                "--timeout",
                "--joblog",
                "--results",
                "--tmpdir",
                "--workdir",
                "-N",
                "-n",
                "-L",
                "-I",
                "--colsep",
                "-d",
                "--halt",
                "--retries",
                "--memfree",
                "--load",
                "--nice",
            ),
            context=Context.XARGS,
            replace_opt=_f("-I"),
            end_marker=":::",
        ),
        "busybox": WrapperSpec(),  # busybox APPLET args
        "unbuffer": WrapperSpec(neutral=True),
        "coproc": WrapperSpec(),
        "taskset": WrapperSpec(operands=1, neutral=True),
        "chrt": WrapperSpec(operands=1),
        "torsocks": WrapperSpec(),
        "proxychains": WrapperSpec(with_arg=_f("-f")),
        "proxychains4": WrapperSpec(with_arg=_f("-f")),
        "caffeinate": WrapperSpec(with_arg=_f("-t", "-w"), neutral=True),
        "toybox": WrapperSpec(),  # toybox APPLET args
        # sandboxes, namespaces, service managers and session runners: they run argv as given
        "firejail": WrapperSpec(
            with_arg=_f(
                "--profile", "--private", "--whitelist", "--blacklist", "--net", "--name", "--join"
            ),
            stop=_f("--list", "--tree", "--top", "--version", "--help"),
        ),
        "systemd-run": WrapperSpec(
            with_arg=_f(
                "-p",
                "--property",
                "-u",
                "--unit",
                "--description",
                "--slice",
                "-E",
                "--setenv",
                "--uid",
                "--gid",
                "--nice",
                "--working-directory",
                "-M",
                "--machine",
                "-H",
                "--host",
                "--on-active",
                "--on-boot",
                "--on-startup",
                "--on-unit-active",
                "--on-unit-inactive",
                "--on-calendar",
                "--timer-property",
                "--path-property",
                "--socket-property",
                "--service-type",
                "--capsule",
                "-C",
            ),
            privileged=True,
        ),
        "runuser": WrapperSpec(  # `runuser -u USER [--] cmd`; `runuser USER -c STRING` is su's form
            with_arg=_f(
                "-u",
                "--user",
                "-g",
                "--group",
                "-G",
                "--supp-group",
                "-s",
                "--shell",
                "-w",
                "--whitelist-environment",
            ),
            shell_opt=_f("-c", "--command", "--session-command"),
            privileged=True,
            lone_dash=True,
        ),
        "unshare": WrapperSpec(
            with_arg=_f(
                "-S",
                "--setuid",
                "-G",
                "--setgid",
                "--propagation",
                "--map-user",
                "--map-group",
                "--map-users",
                "--map-groups",
                "-R",
                "--root",
                "-w",
                "--wd",
                "--load-interp",
            )
        ),
        "nsenter": WrapperSpec(
            with_arg=_f("-t", "--target", "-S", "--setuid", "-G", "--setgid", "--env"),
            privileged=True,
        ),
        "xvfb-run": WrapperSpec(
            with_arg=_f(
                "-n",
                "--server-num",
                "-e",
                "--error-file",
                "-f",
                "--auth-file",
                "-p",
                "--xauth-protocol",
                "-s",
                "--server-args",
                "-w",
                "--wait",
            )
        ),
        "dbus-run-session": WrapperSpec(with_arg=_f("--config-file", "--dbus-daemon")),
        "dbus-launch": WrapperSpec(
            with_arg=_f("--config-file", "--autolaunch"), stop=_f("--version", "--help")
        ),
        "setpriv": WrapperSpec(
            with_arg=_f(
                "--reuid",
                "--regid",
                "--ruid",
                "--euid",
                "--rgid",
                "--egid",
                "--groups",
                "--inh-caps",
                "--ambient-caps",
                "--bounding-set",
                "--securebits",
                "--pdeathsig",
                "--selinux-label",
                "--apparmor-profile",
                "--landlock-access",
                "--landlock-rule",
            ),
            stop=_f("-d", "--dump"),
        ),
        "chpst": WrapperSpec(
            with_arg=_f(
                "-u",
                "-U",
                "-b",
                "-e",
                "-/",
                "-C",
                "-n",
                "-l",
                "-L",
                "-m",
                "-d",
                "-o",
                "-p",
                "-f",
                "-c",
                "-r",
                "-t",
            )
        ),
        "fakeroot": WrapperSpec(with_arg=_f("-l", "--lib", "--faked", "-s", "-i", "-b")),
        "faketime": WrapperSpec(with_arg=_f("-p"), operands=1),
        "prlimit": WrapperSpec(stop=_f("-p", "--pid")),
        "numactl": WrapperSpec(
            with_arg=_f(
                "-i",
                "-m",
                "-N",
                "-C",
                "-p",
                "-P",
                "-w",
                "-b",
                "--interleave",
                "--membind",
                "--cpunodebind",
                "--physcpubind",
                "--preferred",
                "--weighted-interleave",
            ),
            stop=_f("-s", "--show", "-H", "--hardware"),
        ),
        "cgexec": WrapperSpec(with_arg=_f("-g")),
        "trickle": WrapperSpec(with_arg=_f("-d", "-u", "-w", "-t", "-l", "-n")),
        "valgrind": WrapperSpec(),
        "catchsegv": WrapperSpec(),
        "tini": WrapperSpec(with_arg=_f("-p", "-e")),
        "dumb-init": WrapperSpec(with_arg=_f("-r", "--rewrite")),
        "ssh-agent": WrapperSpec(
            with_arg=_f("-a", "-E", "-t", "-P", "-O"), stop=_f("-k", "-s", "-c")
        ),
        "schroot": WrapperSpec(
            with_arg=_f(
                "-c",
                "--chroot",
                "-u",
                "--user",
                "-d",
                "--directory",
                "-n",
                "--session-name",
                "-r",
                "--run-session",
                "-p",
                "--option",
            ),
            stop=_f("-l", "--list", "-i", "--info", "-e", "--end-session", "-b", "--begin-session"),
        ),
        "proot": WrapperSpec(
            with_arg=_f(
                "-r",
                "--rootfs",
                "-b",
                "--bind",
                "-m",
                "--mount",
                "-w",
                "--pwd",
                "--cwd",
                "-q",
                "--qemu",
                "-k",
                "--kernel-release",
                "-R",
                "-S",
            )
        ),
        "flatpak-spawn": WrapperSpec(with_arg=_f("--forward-fd")),
        "daemonize": WrapperSpec(with_arg=_f("-c", "-e", "-E", "-o", "-p", "-l", "-u")),
        "sem": WrapperSpec(
            with_arg=_f(
                "-j", "--jobs", "--id", "--timeout", "--semaphorename", "--semaphoretimeout", "--st"
            ),
            context=Context.XARGS,
        ),
        # package runners: run a package's binary, fetched from a registry when it is not
        # installed (or, with -c, a shell string)
        "npx": WrapperSpec(
            with_arg=_f("-p", "--package", "--cache", "--userconfig", "--registry"),
            shell_opt=_f("-c", "--call"),
            fetches=True,
        ),
        "pnpx": WrapperSpec(with_arg=_f("-p", "--package"), fetches=True),
        "bunx": WrapperSpec(with_arg=_f("-p", "--package"), fetches=True),
        "uvx": WrapperSpec(with_arg=_UV_TOOL_VALUES, fetches=True),
        "script": WrapperSpec(
            with_arg=_f(
                "-t",
                "-T",
                "-I",
                "-O",
                "-B",
                "-E",
                "--timing",
                "--log-in",
                "--log-out",
                "--log-io",
                "--echo",
            ),
            shell_opt=_f("-c", "--command"),
            operands=0,
        ),
    }
)

# Wrappers that only run a command through a shell option: without it they stay the head.
SHELL_OPT_ONLY: Final = frozenset({"su", "script"})

# Tools whose one subcommand runs the rest of the argv as a command: `uv run CMD`,
# `poetry run CMD`, `bundle exec CMD`, `nix develop -c CMD`. Keyed by tool, then subcommand;
# the spec peels the subcommand's own options. Options before the subcommand are skipped.
SUBCOMMAND_WRAPPERS: Final = MappingProxyType(
    {
        "uv": {
            "run": WrapperSpec(
                with_arg=_f(
                    "--with",
                    "--with-requirements",
                    "--with-editable",
                    "--python",
                    "-p",
                    "--package",
                    "--extra",
                    "--group",
                    "--env-file",
                    "--directory",
                    "--project",
                    "--index",
                    "--index-url",
                    "--extra-index-url",
                    "-w",
                )
            )
        },
        "poetry": {"run": WrapperSpec(with_arg=_f("-C", "--directory", "-P", "--project"))},
        "pipenv": {"run": WrapperSpec()},
        "pdm": {"run": WrapperSpec(with_arg=_f("-p", "--project"))},
        "rye": {"run": WrapperSpec()},
        "hatch": {"run": WrapperSpec()},
        "pixi": {"run": WrapperSpec(with_arg=_f("-e", "--environment", "--manifest-path"))},
        "bundle": {"exec": WrapperSpec(with_arg=_f("--gemfile"))},
        "conda": {"run": WrapperSpec(with_arg=_f("-n", "--name", "-p", "--prefix", "--cwd"))},
        "mamba": {"run": WrapperSpec(with_arg=_f("-n", "--name", "-p", "--prefix", "--cwd"))},
        "micromamba": {"run": WrapperSpec(with_arg=_f("-n", "--name", "-p", "--prefix", "--cwd"))},
        "toolbox": {
            "run": WrapperSpec(
                with_arg=_f("-c", "--container", "-d", "--distro", "-r", "--release")
            )
        },
        "direnv": {"exec": WrapperSpec(operands=1)},
        "perf": {
            "stat": WrapperSpec(
                with_arg=_f(
                    "-e",
                    "--event",
                    "-r",
                    "--repeat",
                    "-o",
                    "--output",
                    "-p",
                    "-t",
                    "-C",
                    "-x",
                    "-I",
                    "-G",
                )
            ),
            "record": WrapperSpec(
                with_arg=_f(
                    "-e",
                    "--event",
                    "-o",
                    "--output",
                    "-p",
                    "-t",
                    "-C",
                    "-F",
                    "-c",
                    "-g",
                    "--call-graph",
                    "-m",
                )
            ),
        },
        "nix": {
            "develop": WrapperSpec(argv_opt=_f("-c", "--command")),
            "shell": WrapperSpec(argv_opt=_f("-c", "--command")),
        },
        "nix-shell": {"": WrapperSpec(shell_opt=_f("--run", "--command"))},
        "npm": {
            "exec": WrapperSpec(
                with_arg=_f("-p", "--package", "-w", "--workspace", "--registry"),
                shell_opt=_f("-c", "--call"),
                fetches=True,
            ),
            "x": WrapperSpec(
                with_arg=_f("-p", "--package", "--registry"),
                shell_opt=_f("-c", "--call"),
                fetches=True,
            ),
        },
        "pnpm": {
            "dlx": WrapperSpec(with_arg=_f("--package", "--registry"), fetches=True),
            "exec": WrapperSpec(with_arg=_f("-C", "--dir", "--filter"), shell_opt=_f("-c")),
        },
        "yarn": {"dlx": WrapperSpec(with_arg=_f("-p", "--package"), fetches=True)},
        "bun": {"x": WrapperSpec(with_arg=_f("-p", "--package"), fetches=True)},
        "pipx": {
            "run": WrapperSpec(
                with_arg=_f("--spec", "--python", "--pip-args", "--index-url", "-i"), fetches=True
            )
        },
    }
)
