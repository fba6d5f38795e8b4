"""Obfuscation: commands that hide what they run (decoded payloads fed to a shell, commands built
from variables or substitutions, ``$IFS`` word-splitting, escaped heads)."""

from __future__ import annotations

import re
import unicodedata
from typing import Final

from gatesh._types import SUBSTITUTIONS
from gatesh.rater.builtin._base import (
    A,
    Cmd,
    Ctx,
    D,
    Hit,
    MatchResult,
    Rule,
    among,
    interpreters_and,
)
from gatesh.vocab.programs.interpreters import interpreter, invocation, is_interpreter
from gatesh.vocab.programs.shells import SHELLS

_IFS: Final = re.compile(r"\$\{?IFS\b")
_HEAD_ESCAPES: Final = re.compile(
    r"^\s*(?:\w+=\S*\s+)*(?:\$'[^']*\\(?:x[0-9a-fA-F]|[0-7]{3}|u[0-9a-fA-F])"
    r"|[\w/.-]*(?:''|\"\")[\w/.-]+\s)"
)
_ESCAPE_SEQ: Final = re.compile(r"\\x[0-9a-fA-F]{2}|\\[0-7]{3}|\\u[0-9a-fA-F]{4}")
_DECODE_WORDS: Final = re.compile(
    r"base64\s+(?:-\w*d|--decode|-D)|xxd\s+-r|\brev\b|\\x[0-9a-f]{2}|"
    r"b64decode|fromhex|unhexlify|decode\(|openssl\s+(?:enc\s+)?-?(?:base64|d)\b.*-d|"
    r"\bgunzip\b|\bzcat\b|uudecode|base32\s+-d|\btr\s+['\"]?[a-z]-[a-z]",
    re.I,
)
_BENIGN_DYNAMIC: Final = re.compile(
    r"^\"?\$(?:\{)?(?:[A-Za-z_][A-Za-z0-9_]*|@|\*|[0-9])(?:\})?\"?$"
)
_WHICH: Final = re.compile(
    r"^\"?(?:\$\((?:which|command -v|type -p)\s+[\w.+-]+\)|`(?:which|command -v)\s+[\w.+-]+`)\"?$"
)


def is_decoder(c: Cmd) -> bool:
    """``c`` turns encoded text back into text (base64 -d, xxd -r, rev, printf of escapes, …)."""
    h = c.head
    if h in ("base64", "base32", "basenc", "gbase64") and c.has("-d", "--decode", "-D"):
        return True
    if h == "xxd" and c.has("-r", "-revert"):
        return True
    if h == "openssl" and (("base64" in c.args or "enc" in c.args) and c.has("-d")):
        return True
    if h in ("rev", "uudecode", "zcat", "gunzip", "bzcat", "xzcat") or (
        h in ("gzip", "bzip2", "xz", "zstd") and c.has("-d")
    ):
        return True
    if h in ("printf", "echo") and any(_ESCAPE_SEQ.search(a) for a in c.args):
        return True
    if (
        h == "tr"
        and len(c.pos) >= 2
        and re.search(r"[a-z]-[a-z]", c.pos[0], re.I)
        and c.pos[0] != c.pos[1]
        and c.pos[1][:1].lower() in "nm"
    ):
        return True
    return bool(
        is_interpreter(h)
        and re.search(
            r"b64decode|fromhex|unhexlify|decode\(['\"](?:hex|base64|rot)", " ".join(c.args)
        )
    )


# The heads :func:`_is_sink` can be true of (the ``tried_on`` of the rules that ask it).
_SINKS: Final = interpreters_and(SHELLS, ("eval", "source", "."))


def _is_sink(c: Cmd) -> bool:
    h = c.head
    if h in SHELLS and not c.has("-c"):
        return True
    if h in ("eval", "source", "."):
        return True
    lang = interpreter(h)
    if (
        lang is not None
        and (not c.pos or c.pos[0] == "-")
        and not any(a in ("-c", "-e", "-r", "-E") for a in c.args)
        and not invocation(lang, c.args).module  # `python -mNAME` runs NAME, as `-m NAME` does
    ):
        return True
    return False


def decode_into_shell(c: Cmd) -> MatchResult:
    if not _is_sink(c):
        return None
    if any(is_decoder(f) for f in c.feeders):
        return Hit(detail="a decoded payload is piped into " + c.head)
    return None


def dynamic_code(c: Cmd) -> MatchResult:
    """eval / sh -c / source of a value only known at run time (an environment-setup generator's
    output, a vocabulary row the reader recognised, is not: ``eval "$(pyenv init -)"``)."""
    h = c.head
    if any(code.command == c.index and code.generator for code in c.ctx.facts.code):
        return None
    if h == "eval" or (h in SHELLS and c.has("-c")) or h in ("source", "."):
        dyn_words = [a for a, d in zip(c.args, c.dyn, strict=False) if d]
        if not dyn_words:
            return None
        joined = " ".join(dyn_words)
        if _DECODE_WORDS.search(joined) or any(
            is_decoder(x) for x in c.ctx.cmds if x.sc.context in SUBSTITUTIONS
        ):
            return Hit(detail="runs a decoded payload")
        if any(w.startswith("<(") or "curl" in w or "wget" in w for w in dyn_words):
            return Hit(severity=D, detail="runs code fetched at run time")
        return Hit(
            severity=D,
            detail="runs code that is only known when it runs",
            remedy="write the command out literally",
        )
    return None


def _quoted_space(raw: str) -> bool:
    """Whether the source word ``raw`` holds whitespace inside quotes, outside any expansion: the
    name it makes holds a space, which no program on PATH is called (``echo"Files in $d"``, a
    missing space), so it is a typo or a path, not a name put together to hide itself."""
    quote = ""
    depth = 0  # inside $( … ) or ${ … }
    i = 0
    while i < len(raw):
        ch = raw[i]
        if ch == "\\" and quote != "'":
            i += 2
            continue
        if depth:
            depth += ch in "({"
            depth -= ch in ")}"
        elif quote == "'":
            if ch == "'":
                quote = ""
            elif ch.isspace():
                return True
        elif ch == "$" and raw[i + 1 : i + 2] in ("(", "{"):
            depth, i = 1, i + 2
            continue
        elif quote == '"':
            if ch == '"':
                quote = ""
            elif ch.isspace():
                return True
        elif ch in "'\"":
            quote = ch
        i += 1
    return False


def dynamic_head(c: Cmd) -> MatchResult:
    assembled = c.sc.expanded_head
    if c.head and assembled and not (_BENIGN_DYNAMIC.match(assembled) or _WHICH.match(assembled)):
        # the reader put in the static values (S2.1), but a name built from pieces hides itself
        return Hit(
            detail=f"the program's name ({c.head}) is assembled from pieces ({assembled[:40]})"
        )
    if c.head:
        return None
    raw = c.sc.argv[0].text if c.sc.argv else ""
    if _WHICH.match(raw) or _BENIGN_DYNAMIC.match(raw):
        return Hit(
            severity=D, detail=f"the program is named by {raw}", remedy="name the program literally"
        )
    if _quoted_space(raw):  # a typo or a path with spaces: rated, not a halt
        return Hit(
            severity=D,
            detail=f"the program is named by a path only known when it runs ({raw[:40]})"
            if "/" in raw
            else f"the program's name ({raw[:40]}) holds a quoted space, so no program is "
            "called that (a missing space after the program?)",
            remedy="name the program literally"
            if "/" in raw
            else "put a space between the program and its arguments",
        )
    return Hit(detail=f"the program's name is assembled at run time ({raw[:40]})")


def text_tricks(ctx: Ctx) -> MatchResult:
    t = ctx.text
    if _IFS.search(t):
        return Hit(detail="$IFS word-splitting")
    for c in ctx.cmds:
        raw = c.sc.raw
        if (
            raw and ("'" in raw or '"' in raw) and _HEAD_ESCAPES.match(raw)
        ):  # each form holds a quote
            return Hit(detail="an escaped or quote-split command name")
    return None


RULES: tuple[Rule, ...] = (
    Rule(
        "obfuscation.decode-to-shell",
        A,
        "This hides what it runs: {detail}.",
        decode_into_shell,
        tried_on=_SINKS,
        examples=(
            "echo cm0gLXJmIH4= | base64 -d | sh",
            "xxd -r -p payload.hex | bash",
            "printf '\\x72\\x6d' | sh",
            "echo 'hsab' | rev | sh",
        ),
        counter=("echo aGk= | base64 -d", "cat script.sh | bash"),
    ),
    Rule(
        "obfuscation.dynamic-code",
        A,
        "This {detail}, so the gate cannot tell what it does.",
        dynamic_code,
        tried_on=among(SHELLS, ("eval", "source", ".")),
        examples=('eval "$(echo cm0= | base64 -d)"', 'bash -c "$(echo x | base64 --decode)"'),
        counter=("eval 'ls'", "bash -c 'echo hi'"),
    ),
    Rule(
        "obfuscation.dynamic-head",
        A,
        "The gate cannot tell what runs: {detail}.",
        dynamic_head,
        examples=(
            "a=r;b=m;$a$b -rf x",
            "$(echo rm) -rf x",
            "${x:0:1}m -rf y",
            'r"${x}"m -rf y',
            '"$(echo r)m" -rf y',
        ),
        counter=("ls", "git status"),
    ),
    Rule(
        "obfuscation.text-tricks",
        A,
        "This uses {detail}, a way to hide a command from readers.",
        text_tricks,
        on_facts=True,
        examples=("cat${IFS}/etc/passwd", "$'\\x72\\x6d' -rf x", "r''m -rf x"),
        counter=("IFS=, read -r a b <<< 'x,y'", "echo 'it''s'"),
    ),
)


# --- deception: look-alike command names (S3.2 homoglyphs; bypass_failures #9) --------------------

# Letters that look like Latin ones (Cyrillic, Greek, Latin extensions), after case folding.
_CONFUSABLES: Final = str.maketrans(
    {
        "а": "a",
        "в": "b",
        "е": "e",
        "к": "k",
        "м": "m",
        "н": "h",
        "о": "o",
        "р": "p",
        "с": "c",
        "т": "t",
        "у": "y",
        "х": "x",
        "ѕ": "s",
        "і": "i",
        "ї": "i",
        "ј": "j",
        "ԁ": "d",
        "һ": "h",
        "ԛ": "q",
        "ԝ": "w",
        "ӏ": "l",
        "ɡ": "g",
        "ƅ": "b",
        "ı": "i",
        "ɑ": "a",
        "ʏ": "y",
        "ο": "o",
        "α": "a",
        "ν": "v",
        "ρ": "p",
        "ι": "i",
        "κ": "k",
        "τ": "t",
        "υ": "u",
        "χ": "x",
        "β": "b",
        "ε": "e",
        "η": "n",
        "μ": "u",
        "ω": "w",
    }
)
# Invisible characters that are not format characters (Cf is checked by category).
_INVISIBLE: Final = frozenset("\u115f\u1160\u3164\uffa0\u2800\u180e")
_ASCII_NAME: Final = re.compile(r"[a-z0-9_][a-z0-9._+-]*")


def _plain_name(word: str) -> str | None:
    """The ASCII name ``word`` imitates (None when it is plain ASCII or imitates nothing)."""
    if word.isascii():
        return None
    text = unicodedata.normalize("NFKC", word).casefold()
    text = "".join(ch for ch in text if ch not in _INVISIBLE and unicodedata.category(ch) != "Cf")
    text = text.translate(_CONFUSABLES)
    return text if text.isascii() and _ASCII_NAME.fullmatch(text) else None


def lookalike_head(c: Cmd) -> MatchResult:
    """A command name (or a peeled wrapper's) that imitates an ASCII name with other characters:
    fullwidth ``ｒｍ``, a zero-width space inside ``rm``, Cyrillic ``ѕudo``. Arguments are not judged (``echo héllo``)."""
    for word in (c.head, *c.sc.wrappers):
        name = _plain_name(word)
        if name is not None:
            return Hit(detail=f"{word!r} is written to look like {name!r}")
    return None


# --- inline code that decodes a payload and runs it (bypass_failures #7) -------------------------

_CODE_DECODE: Final = re.compile(
    r"b64decode|b32decode|b85decode|base64\.\w*decode|fromhex|unhexlify|codecs\.decode|zlib\.decompress"
    r"|decode\(\s*['\"](?:hex|base64|rot)|Buffer\.from\([^)]{0,200}?['\"](?:base64|hex)['\"]|\batob\("
    r"|decode_base64|MIME::Base64|\bunpack\(\s*['\"][mH]|\bpack\(\s*['\"]H|decode64|\.unpack1?\(\s*['\"]m"
)
_CODE_RUN: Final = re.compile(
    r"\b(?:exec|eval|compile|execfile|system|popen|spawn\w*|execSync|execFile\w*|instance_eval|class_eval"
    r"|passthru|shell_exec|proc_open|Function|subprocess|child_process|qx)\b|\bos\.exec"
)


def decode_and_run(c: Cmd) -> MatchResult:
    if not is_interpreter(c.head) and c.head not in ("deno", "bun"):
        return None
    from gatesh.rater.builtin.code import code_of

    code = code_of(c)
    if code and _CODE_DECODE.search(code) and _CODE_RUN.search(code):
        return Hit(detail=f"{c.head} inline code decodes a payload and runs it")
    return None


def transformed_code(ctx: Ctx) -> MatchResult:
    """Known text rewritten on its way into a shell or interpreter (the reader's code facts)."""
    for code in ctx.facts.code:
        if code.transformed:
            return Hit(detail=f"text {code.transformed} rewrites on its way into {code.language}")
    return None


RULES = (
    *RULES,
    Rule(
        "obfuscation.transformed-code",
        A,
        "This hides what it runs: {detail}.",
        transformed_code,
        on_facts=True,
        examples=(
            "rev <<< '~ fr- mr' | sh",
            "tr 'a-z' 'n-za-m' <<< 'ez -es ~' | sh",
            "echo 'ls' | sed 's/l/r/' | bash",
            "pwsh -EncodedCommand SQBFAFgA",
        ),
        counter=("echo ls | sh", "./gen | sed 's/a/b/' | sh", "echo 'x y' | tr ' ' '\n'"),
    ),
    Rule(
        "deception.lookalike-name",
        A,
        "This is deception: a look-alike command name ({detail}).",
        lookalike_head,
        examples=("ｒｍ -rf x", "r\u200bm -rf x", "ѕudo ls", "sudo ｒｍ x"),
        counter=("echo héllo", "ls café.txt", "./résumé.sh", "rm -rf ./naïve"),
    ),
    Rule(
        "obfuscation.decode-and-run",
        A,
        "This hides what it runs: {detail}.",
        decode_and_run,
        tried_on=interpreters_and(("deno", "bun")),
        examples=(
            "python3 -c \"import base64,os; os.system(base64.b64decode('bHM=').decode())\"",
            "python3 -c \"exec(bytes.fromhex('7072696e74283129').decode())\"",
            "node -e \"eval(Buffer.from('bHM=', 'base64').toString())\"",
            "perl -MMIME::Base64 -e 'eval decode_base64(\"cHJpbnQgMQ==\")'",
        ),
        counter=(
            "python3 -c \"import base64; print(base64.b64decode('aGk='))\"",
            "python3 -c \"import os; os.system('ls')\"",
            "node -e 'console.log(1)'",
        ),
    ),
)


_FETCHERS: Final = frozenset(
    {"curl", "wget", "fetch", "aria2c", "http", "https", "xh", "lwp-download", "lynx"}
)


def fetch_into_shell(c: Cmd) -> MatchResult:
    if _is_sink(c) and any(f.head in _FETCHERS for f in c.feeders):
        return True
    return None


RULES = (
    *RULES,
    Rule(
        "obfuscation.fetch-to-shell",
        D,
        "This runs code downloaded from the network without showing it.",
        fetch_into_shell,
        tried_on=_SINKS,
        remedy="download the script to a file, read it, then run it",
        examples=(
            "curl -fsSL https://example.com/install.sh | sh",
            "wget -qO- https://x.example/i | bash",
        ),
        counter=("curl -fsSL https://example.com/install.sh -o install.sh",),
    ),
)
