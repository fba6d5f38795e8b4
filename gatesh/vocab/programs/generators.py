"""Environment-setup generators: programs whose output a shell is told to run at setup
(``eval "$(pyenv init -)"``, ``source <(kubectl completion bash)``).

Only the exact invocations of :data:`GENERATOR_ROWS` count (each row with an id and the reason its
output is the program's own shell setup); any other command's output fed to a shell stays opaque
(S2.1).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from gatesh.vocab.programs.shells import SHELL_ROWS


def _f(*names: str) -> frozenset[str]:
    return frozenset(names)


@dataclass(frozen=True)
class Generator:
    """A program whose output a shell is told to run at setup (``eval "$(pyenv init -)"``,
    ``source <(kubectl completion bash)``): what it prints is that program's own shell setup.

    ``args`` is a regular expression over the words after the program, joined by one space
    (``{shell}`` stands for a shell name). Only these exact invocations count: any other
    command's output fed to a shell stays opaque (S2.1).
    """

    id: str
    programs: frozenset[str]
    args: str
    reason: str


_SETUP = (
    "prints {what}: environment variables, PATH entries and shell functions for this shell only"
)
_COMPLETION = (
    "prints a completion script: functions and `complete` registrations for this shell only"
)
GENERATOR_ROWS: Final[tuple[Generator, ...]] = (
    Generator(
        "pyenv-init",
        _f("pyenv"),
        r"init(?: --path| --no-push-path| --no-rehash)*(?: -)?(?: {shell})?",
        _SETUP.format(what="pyenv's shims and its shell function"),
    ),
    Generator(
        "pyenv-virtualenv-init",
        _f("pyenv"),
        r"virtualenv-init -(?: {shell})?",
        _SETUP.format(what="pyenv-virtualenv's activation hook"),
    ),
    Generator(
        "version-manager-init",
        _f(
            "rbenv",
            "nodenv",
            "goenv",
            "jenv",
            "plenv",
            "phpenv",
            "luaenv",
            "scalaenv",
            "exenv",
            "ndenv",
        ),
        r"init(?: --no-rehash)?(?: -)?(?: {shell})?",
        _SETUP.format(what="the version manager's shims"),
    ),
    Generator(
        "direnv-hook",
        _f("direnv"),
        r"(?:hook|export) {shell}",
        _SETUP.format(
            what="direnv's prompt hook, which loads .envrc files direnv was told to allow"
        ),
    ),
    Generator(
        "ssh-agent",
        _f("ssh-agent"),
        r"(?:(?:-[sc]|-t \S+|-a \S+)(?: |$))*",
        "starts an ssh key agent and prints the two variables that point to it",
    ),
    Generator(
        "brew-shellenv", _f("brew"), r"shellenv(?: {shell})?", _SETUP.format(what="Homebrew's PATH")
    ),
    Generator(
        "conda-hook",
        _f("conda"),
        r"shell\.{shell} hook",
        _SETUP.format(what="conda's activate function"),
    ),
    Generator(
        "mamba-hook",
        _f("mamba", "micromamba"),
        r"shell hook(?: (?:-s|--shell)[ =]{shell})?(?: (?:-r|--root-prefix|-p|--prefix)[ =]\S+)?",
        _SETUP.format(what="mamba's activate function"),
    ),
    Generator(
        "fnm-env",
        _f("fnm"),
        r"env(?: --use-on-cd| --shell[ =]{shell}| --version-file-strategy[ =]\S+"
        r"| --corepack-enabled| --resolve-engines)*",
        _SETUP.format(what="fnm's Node.js PATH"),
    ),
    Generator(
        "prompt-init",
        _f("zoxide", "starship", "atuin", "mcfly", "oh-my-posh", "navi"),
        r"(?:init|widget) {shell}(?: --\S+(?: [^-\s]\S*)?)*",
        _SETUP.format(what="the prompt or history tool's hook"),
    ),
    Generator(
        "mise-activate",
        _f("mise", "rtx"),
        r"activate(?: {shell})?(?: --shims| --quiet| -q)*",
        _SETUP.format(what="mise's tool PATH"),
    ),
    Generator(
        "thefuck-alias",
        _f("thefuck"),
        r"--alias(?: \w+)?",
        "prints the shell alias that runs thefuck",
    ),
    Generator(
        "opam-env",
        _f("opam"),
        r"env(?: --switch[ =]\S+| --set-switch| --shell[ =]{shell})*",
        _SETUP.format(what="opam's OCaml switch"),
    ),
    Generator(
        "luarocks-path",
        _f("luarocks"),
        r"path(?: --bin| --lr-path| --lr-cpath)*",
        _SETUP.format(what="Lua's module search paths"),
    ),
    Generator(
        "keychain-eval",
        _f("keychain"),
        r"--eval(?: --quiet| -q| --agents \S+| \S+)*",
        "prints the variables that point to the running ssh or gpg agent",
    ),
    Generator(
        "dircolors",
        _f("dircolors"),
        r"(?:-[bc]|--sh|--csh|--bourne-shell|--c-shell)?",
        "prints the LS_COLORS variable",
    ),
    Generator(
        "lesspipe",
        _f("lesspipe", "lesspipe.sh"),
        r"",
        "prints the LESSOPEN variable for less's filters",
    ),
    Generator(
        "coursier-java",
        _f("cs", "coursier"),
        r"java(?: --jvm \S+)? (?:--env|--disable)",
        _SETUP.format(what="the JAVA_HOME coursier selected"),
    ),
    Generator(
        "poetry-env-activate",
        _f("poetry"),
        r"env activate(?: \S+)?",
        "prints the command that sources the project's virtualenv activate script",
    ),
    Generator(
        "pixi-shell-hook",
        _f("pixi"),
        r"shell-hook(?: (?:-s|--shell)[ =]{shell})?",
        _SETUP.format(what="pixi's environment"),
    ),
    Generator(
        "fzf-shell", _f("fzf"), r"--(?:bash|zsh|fish)", "prints fzf's key bindings and completion"
    ),
    Generator(
        "completion",
        _f(
            "kubectl",
            "helm",
            "gh",
            "glab",
            "docker",
            "minikube",
            "kind",
            "k3d",
            "kustomize",
            "flux",
            "argocd",
            "istioctl",
            "velero",
            "eksctl",
            "doctl",
            "hcloud",
            "linkerd",
            "cilium",
            "tkn",
            "kn",
            "oc",
            "op",
            "supabase",
            "stripe",
            "hugo",
            "gcrane",
            "crane",
            "ko",
            "goreleaser",
            "golangci-lint",
            "rclone",
            "exo",
            "kool",
            "frpc",
            "frps",
            "cobra-cli",
            "talosctl",
            "kubeadm",
            "clusterctl",
            "skaffold",
            "tilt",
            "dagger",
            "atlas",
            "buf",
            "task",
            "devbox",
            "gitleaks",
            "trivy",
            "grype",
            "syft",
            "cosign",
            "nerdctl",
            "limactl",
            "colima",
            "podman",
            "npm",
            "pnpm",
            "ng",
        ),
        r"completions?(?: (?:-s|--shell)[ =]?)?(?: {shell}| script)?(?: --no-descriptions)?",
        _COMPLETION,
    ),
    Generator(
        "completion-subcommand",
        _f(
            "rustup",
            "deno",
            "bun",
            "poetry",
            "pip",
            "pip3",
            "just",
            "uv",
            "ruff",
            "pdm",
            "rye",
            "starship",
            "volta",
            "zellij",
            "procs",
            "bat",
            "rg",
        ),
        r"(?:completions?|generate-shell-completion|--completions|--generate[ =]complete-)[ =]?"
        r"(?:--)?{shell}(?: \S+)?",
        _COMPLETION,
    ),
    Generator(
        "argcomplete",
        _f("register-python-argcomplete", "register-python-argcomplete3"),
        r"(?:--shell[ =]{shell} )?[\w.-]+",
        _COMPLETION,
    ),
)
_SHELL_WORD: Final = (
    r"(?:" + "|".join(sorted((re.escape(s.name) for s in SHELL_ROWS), key=len, reverse=True)) + r")"
)
_GENERATOR_MATCH: Final = tuple(
    (row, re.compile(row.args.replace("{shell}", _SHELL_WORD))) for row in GENERATOR_ROWS
)
# The rows of each program, in table order (built once: most heads have none).
_GENERATORS_OF: Final[dict[str, tuple[tuple[Generator, re.Pattern[str]], ...]]] = {
    head: tuple(m for m in _GENERATOR_MATCH if head in m[0].programs)
    for head in sorted({p for row in GENERATOR_ROWS for p in row.programs})
}


def generator(head: str, args: tuple[str, ...] | list[str]) -> Generator | None:
    """The environment-setup row ``head ARGS…`` (static words) is, or None."""
    rows = _GENERATORS_OF.get(head)
    if not rows:
        return None
    joined = " ".join(args)
    for row, pattern in rows:
        if pattern.fullmatch(joined):
            return row
    return None
