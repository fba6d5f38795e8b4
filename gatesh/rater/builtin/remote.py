"""Remote code: commands that fetch code nobody has read and run it (S2.1 opaque code).

By mechanism: a package runner told to fetch what it runs (``npx --yes``, ``pnpm dlx``, ``yarn
dlx``, ``bunx``, a version or source named for ``uvx``, ``pipx run``, ``npx``); ``go run`` of a
remote module at a version; ``deno run`` of a URL with permissions; an install whose source is a
repository or a URL instead of a registry (its install scripts run here); a cluster given a
manifest from a URL. Code fetched and then run in the same line (a clone, an unpacked archive, a
download) is the reader's defined-then-run (opaque code). A runner's own options are read from
its words through the one wrapper table (:data:`gatesh.vocab.grammar.WRAPPERS`).
"""

from __future__ import annotations

import re
import shlex
from typing import Final

from gatesh.rater.builtin._base import Cmd, D, Hit, MatchResult, Rule, heads
from gatesh.vocab.grammar import SUBCOMMAND_WRAPPERS, WRAPPERS, Grammar, WrapperSpec, read

# A package named by where its code comes from rather than by registry name: a git or hosting
# shorthand, a URL, a tarball.
REMOTE_SPEC: Final = re.compile(
    r"^(?:git\+|git://|github:|gitlab:|bitbucket:|gist:|https?://|ssh://|git@)", re.I
)
# npm's `OWNER/REPO` shorthand for a GitHub repository (one slash, not a scope or a path).
_SHORTHAND: Final = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+(?:#.*)?$")
_VERSIONED: Final = re.compile(r"^@?[\w.-]+(?:/[\w.-]+)?@[\w.^~<>=*-]+$")
# Runners that always download what they run (their name says so: "download and execute").
_ALWAYS: Final = frozenset({("pnpm", "dlx"), ("yarn", "dlx"), ("bunx", ""), ("pnpx", "")})
_RUNNERS: Final = frozenset({"npx", "pnpx", "bunx", "uvx", "npm", "pnpm", "yarn", "bun", "pipx"})


def _runner(c: Cmd) -> tuple[str, str, WrapperSpec, list[str]] | None:
    """(runner, its subcommand, its spec, its option words and the program word) read from the
    command's own text, when a fetching runner was peeled off it."""
    if not any(w in _RUNNERS for w in c.sc.wrappers):
        return None
    try:
        words = shlex.split(c.sc.raw)
    except ValueError:
        words = c.sc.raw.split()
    for k, w in enumerate(words):
        name = w.rsplit("/", 1)[-1]
        spec = WRAPPERS.get(name)
        sub = ""
        rest = words[k + 1 :]
        if spec is None and name in SUBCOMMAND_WRAPPERS and rest:
            verbs = [r for r in rest if not r.startswith("-")]
            sub = verbs[0] if verbs else ""
            spec = SUBCOMMAND_WRAPPERS[name].get(sub)
            rest = rest[rest.index(sub) + 1 :] if sub else rest
        if spec is None or not spec.fetches:
            continue
        argv = read(Grammar(name, options=spec.options), rest)
        end = argv.operand_at[0] + 1 if argv.operand_at else len(rest)
        return name, sub, spec, rest[:end]
    return None


def package_runner(c: Cmd) -> MatchResult:
    found = _runner(c)
    if found is None:
        return None
    name, sub, spec, words = found
    argv = read(Grammar(name, options=spec.options), words)
    program = argv.operands[0] if argv.operands else ""
    label = f"{name} {sub}".strip()
    sources = [*argv.values("-p", "--package", "--from", "--spec", "--with"), program]
    if (name, sub) in _ALWAYS:
        return Hit(detail=f"{label} downloads {program or 'a package'} and runs it")
    remote = [s for s in sources if s and (REMOTE_SPEC.search(s) or _SHORTHAND.match(s))]
    if remote and not (name in ("uvx", "pipx") and not REMOTE_SPEC.search(remote[0])):
        return Hit(detail=f"{label} runs code fetched from {remote[0]}")
    if name in ("npx", "npm", "bun") and (argv.has("--yes", "-y") or argv.has("-p", "--package")):
        return Hit(
            detail=f"{label} installs {program or 'a package'} from the registry and runs it"
        )
    if name in ("npx", "npm", "bun") and _VERSIONED.match(program):
        return Hit(detail=f"{label} fetches {program} and runs it")
    return None


def go_run(c: Cmd) -> MatchResult:
    if c.sub(0) != "run":
        return None
    pkg = next((p for p in c.pos[1:] if not p.endswith(".go")), "")
    if "@" in pkg and "." in pkg.split("/", 1)[0]:
        return Hit(detail=f"go run builds and runs {pkg}, fetched from its host")
    return None


_DENO_POWERS: Final = ("-A", "--allow-all", "--allow-run", "--allow-write", "--allow-ffi")


def deno_url(c: Cmd) -> MatchResult:
    if c.sub(0) not in ("run", "x", "install", "eval"):
        return None
    script = next((p for p in c.pos[1:] if p.startswith(("http://", "https://"))), "")
    powers = c.has(*_DENO_POWERS) or any(
        a.startswith(("--allow-all", "--allow-run", "--allow-write", "--allow-ffi")) for a in c.args
    )
    if script and powers:
        return Hit(detail=f"deno runs {script} with the power to change this machine")
    return None


_INSTALLERS: Final = {
    "npm": ("install", "i", "add", "ci", "in"),
    "pnpm": ("install", "i", "add"),
    "yarn": ("add", "install"),
    "bun": ("add", "install", "i"),
    "pip": ("install",),
    "pip3": ("install",),
    "cargo": ("install",),
}


def remote_install(c: Cmd) -> MatchResult:
    verbs = _INSTALLERS.get(c.head)
    if verbs is None or c.sub(0) not in verbs:
        return None
    if c.head == "cargo":
        url = c.opt_value("--git")
        return Hit(detail=f"cargo install builds code from {url}") if url else None
    npm = c.head in ("npm", "pnpm", "yarn", "bun")
    for spec in c.pos[1:]:
        if REMOTE_SPEC.search(spec) or (npm and _SHORTHAND.match(spec) and "|" not in spec):
            return Hit(detail=f"{c.head} {c.sub(0)} runs the install scripts of {spec}")
    return None


def kube_url(c: Cmd) -> MatchResult:
    if c.argv.subcommand not in ("apply", "create", "replace"):
        return None
    for v in c.opt_values("-f", "--filename", "-k", "--kustomize"):
        if v.startswith(("http://", "https://")) or v.startswith("github.com/"):
            return Hit(detail=f"kubectl {c.argv.subcommand} applies a manifest fetched from {v}")
    return None


RULES: tuple[Rule, ...] = (
    Rule(
        "remote.package-runner",
        D,
        "This runs code nobody here has read: {detail}.",
        package_runner,
        remedy="install the package as a dependency and run it from the project, or read it first",
        examples=(
            "npx --yes some-pkg",
            "npx -y create-thing app",
            "pnpm dlx create-vite",
            "yarn dlx some-tool",
            "bunx some-tool",
            "uvx --from git+https://github.com/x/y tool",
            "npx github:x/y",
            "npm exec --package=github:x/y -- y",
            "sudo npx -y cowsay hi",
            "pipx run --spec git+https://github.com/x/y y",
        ),
        counter=(
            "npx tsc --noEmit",
            "npx eslint .",
            "uvx ruff check .",
            "pnpm exec vitest",
            "npm run build",
        ),
    ),
    Rule(
        "remote.go-run",
        D,
        "This runs code nobody here has read: {detail}.",
        go_run,
        heads=heads("go"),
        remedy="add the module as a dependency and run it from the project",
        examples=("go run github.com/x/y@latest", "go run golang.org/x/tools/cmd/stringer@v0.1.0"),
        counter=("go run .", "go run main.go", "go run ./cmd/app"),
    ),
    Rule(
        "remote.deno-url",
        D,
        "This runs code nobody here has read: {detail}.",
        deno_url,
        heads=heads("deno"),
        remedy="download the script, read it, and run it with only the permissions it needs",
        examples=(
            "deno run -A https://example.com/x.ts",
            "deno run --allow-all https://example.com/x.ts",
            "deno run --allow-run=sh https://example.com/x.ts",
        ),
        counter=("deno run https://deno.land/std/examples/welcome.ts", "deno run -A main.ts"),
    ),
    Rule(
        "remote.install-source",
        D,
        "This runs code nobody here has read: {detail}.",
        remote_install,
        heads=frozenset(_INSTALLERS),
        remedy="install a released version from the registry, or read the source first",
        examples=(
            "npm i github:x/y",
            "npm install git+https://github.com/x/y.git",
            "yarn add x/y",
            "pnpm add https://example.com/pkg.tgz",
            "pip install git+https://github.com/x/y",
            "cargo install --git https://github.com/x/y",
        ),
        counter=(
            "npm i lodash",
            "npm install @types/node",
            "pip install requests",
            "yarn add -D vite",
        ),
    ),
    Rule(
        "remote.kube-manifest",
        D,
        "This changes a cluster with configuration nobody here has read: {detail}.",
        kube_url,
        heads=heads("kubectl", "oc", "k", "kubecolor"),
        remedy="download the manifest, read it, and apply the file",
        examples=(
            "kubectl apply -f https://example.com/x.yaml",
            "kubectl create -f=https://example.com/x.yaml",
            "kubectl -n x apply --filename https://raw.githubusercontent.com/x/y/main/k.yaml",
        ),
        counter=("kubectl apply -f k8s/app.yaml", "kubectl get -f https://example.com/x.yaml"),
    ),
)

__all__ = ["REMOTE_SPEC", "RULES"]
