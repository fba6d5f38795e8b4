"""Tables the reader applies: wrappers and their option arities, shells, interpreters, network tools.

Each table is data: change a row here, not a branch in the walker.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Final


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
    """

    with_arg: frozenset[str] = frozenset()
    operands: int = 0
    stop: frozenset[str] = frozenset()
    shell_opt: frozenset[str] = frozenset()
    split_opt: frozenset[str] = frozenset()
    assignments: bool = False
    joins_shell: bool = False
    privileged: bool = False
    context: str = ""  # context given to the wrapped command ("" keeps the caller's)
    end_marker: str = ""  # the wrapped command ends before this word (parallel's ":::")
    lone_dash: bool = False
    replace_opt: frozenset[str] = frozenset()


def _f(*names: str) -> frozenset[str]:
    return frozenset(names)


WRAPPERS: Final = MappingProxyType(
    {
        # privilege
        "sudo": WrapperSpec(
            with_arg=_f("-u", "-g", "-C", "-D", "-p", "-r", "-t", "-T", "-U", "-R", "-h",
                        "--user", "--group", "--close-from", "--chdir", "--prompt", "--role",
                        "--type", "--command-timeout", "--other-user", "--chroot", "--host"),
            stop=_f("-l", "--list", "-v", "--validate", "-K", "--remove-timestamp", "-V",
                    "--version", "-e", "--edit"),
            privileged=True,
        ),
        "doas": WrapperSpec(with_arg=_f("-u", "-C"), privileged=True),
        "pkexec": WrapperSpec(with_arg=_f("--user"), privileged=True),
        "run0": WrapperSpec(
            with_arg=_f("-u", "--user", "-g", "--group", "-D", "--chdir", "--setenv",
                        "--property", "--description", "--unit", "--nice", "--slice"),
            privileged=True,
        ),
        "gosu": WrapperSpec(operands=1, privileged=True),  # gosu USER cmd
        "su": WrapperSpec(  # su [opts] [-] [user]: only `-c STRING` runs a given command
            with_arg=_f("-s", "--shell", "-g", "--group", "-G", "--supp-group", "-w",
                        "--whitelist-environment"),
            shell_opt=_f("-c", "--command", "--session-command"),
            privileged=True,
            lone_dash=True,
        ),
        # environment and scheduling
        "env": WrapperSpec(with_arg=_f("-u", "--unset", "-C", "--chdir", "-P"),
                           split_opt=_f("-S", "--split-string"), assignments=True,
                           lone_dash=True),
        "nice": WrapperSpec(with_arg=_f("-n", "--adjustment")),
        "ionice": WrapperSpec(with_arg=_f("-c", "--class", "-n", "--classdata"),
                              stop=_f("-p", "--pid", "-P", "--pgid", "-u", "--uid")),
        "nohup": WrapperSpec(),
        "setsid": WrapperSpec(),
        "timeout": WrapperSpec(with_arg=_f("-s", "--signal", "-k", "--kill-after"), operands=1),
        "stdbuf": WrapperSpec(with_arg=_f("-i", "-o", "-e", "--input", "--output", "--error")),
        "time": WrapperSpec(with_arg=_f("-f", "--format", "-o", "--output")),
        "command": WrapperSpec(stop=_f("-v", "-V")),
        "builtin": WrapperSpec(),
        "exec": WrapperSpec(with_arg=_f("-a")),
        "chroot": WrapperSpec(with_arg=_f("--userspec", "--groups"), operands=1),
        "flock": WrapperSpec(with_arg=_f("-w", "--timeout", "-E", "--conflict-exit-code"),
                             operands=1, shell_opt=_f("-c", "--command")),
        "strace": WrapperSpec(with_arg=_f("-o", "-p", "-e", "-s", "-u", "-E", "-a", "-b", "-I",
                                          "-O", "-P", "-S", "-X", "--output", "--attach")),
        "ltrace": WrapperSpec(with_arg=_f("-o", "-p", "-e", "-s", "-u", "-a", "-n", "-l")),
        "watch": WrapperSpec(with_arg=_f("-n", "--interval", "-d", "--differences", "-q",
                                         "--equexit"),
                             joins_shell=True),
        "xargs": WrapperSpec(
            with_arg=_f("-a", "--arg-file", "-d", "--delimiter", "-E", "-I", "-L", "-n", "-P",
                        "-s", "--max-lines", "--max-args", "--max-procs", "--max-chars",
                        "--process-slot-var"),
            context="xargs",
            replace_opt=_f("-I", "-i", "--replace", "-J"),
        ),
        "parallel": WrapperSpec(
            with_arg=_f("-j", "--jobs", "-S", "--sshlogin", "-a", "--arg-file", "--delay",
                        "--timeout", "--joblog", "--results", "--tmpdir", "--workdir", "-N",
                        "-n", "-L", "-I", "--colsep", "-d", "--halt", "--retries", "--memfree",
                        "--load", "--nice"),
            context="xargs",
            replace_opt=_f("-I"),
            end_marker=":::",
        ),
        "busybox": WrapperSpec(),  # busybox APPLET args
        "unbuffer": WrapperSpec(),
        "coproc": WrapperSpec(),
        "taskset": WrapperSpec(operands=1),
        "chrt": WrapperSpec(operands=1),
        "torsocks": WrapperSpec(),
        "proxychains": WrapperSpec(with_arg=_f("-f")),
        "proxychains4": WrapperSpec(with_arg=_f("-f")),
        "caffeinate": WrapperSpec(with_arg=_f("-t", "-w")),
        "script": WrapperSpec(with_arg=_f("-t", "-T", "-I", "-O", "-B", "-E", "--timing",
                                          "--log-in", "--log-out", "--log-io", "--echo"),
                              shell_opt=_f("-c", "--command"), operands=0),
    }
)

# Wrappers that only run a command through a shell option: without it they stay the head.
SHELL_OPT_ONLY: Final = frozenset({"su", "script"})

SHELLS: Final = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh",
                           "rbash", "busybox-sh"})
# Shell options that take the next word as value (bash -o pipefail -c …).
SHELL_WITH_ARG: Final = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})

# Interpreters whose scripts (and heredoc bodies) go to the model as context; prefix-matched
# so python3.11 and perl5.36 count.
INTERPRETERS: Final = ("python", "perl", "ruby", "node", "nodejs", "deno", "bun", "php", "lua",
                       "tclsh", "rscript", "osascript", "pwsh", "powershell", "irb", "jshell",
                       "groovy", "julia")

SOURCE_BUILTINS: Final = frozenset({".", "source"})

FIND_EXEC: Final = frozenset({"-exec", "-execdir", "-ok", "-okdir"})

# Tools whose operands name a remote host (S3.5 "fetch or transfer position").
NETWORK_TOOLS: Final = frozenset({
    "curl", "wget", "aria2c", "http", "https", "httpie", "xh", "xhs", "nc", "ncat", "netcat",
    "telnet", "ssh", "sftp", "ftp", "scp", "rsync", "aws", "gsutil", "az", "git", "mosh",
    "lftp", "axel", "pip", "pip3", "npm", "pnpm", "yarn", "gem", "cargo", "uv", "socat",
    "ping", "dig", "nslookup", "host", "whois", "traceroute", "nmap", "ssh-copy-id", "sshpass",
    "docker", "podman", "helm", "kubectl", "gcloud", "rclone", "s3cmd", "tftp", "openssl",
})
# Tools where the first operand is a host even without user@ or a scheme.
HOST_OPERAND_TOOLS: Final = frozenset({"ssh", "mosh", "telnet", "nc", "ncat", "netcat", "ftp",
                                       "sftp", "ssh-copy-id", "ping", "traceroute", "nmap",
                                       "whois", "dig", "nslookup", "host", "lftp", "tftp"})
# Options of ssh-like tools that take a value (so the value is not mistaken for the host).
SSH_WITH_ARG: Final = frozenset({"-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L",
                                 "-l", "-m", "-O", "-o", "-p", "-P", "-Q", "-R", "-S", "-W",
                                 "-w", "-B"})
GIT_REMOTE_SUBCOMMANDS: Final = frozenset({"clone", "push", "pull", "fetch", "remote",
                                           "submodule", "ls-remote", "archive"})
