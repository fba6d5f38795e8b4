"""Defined, then run, in one text (S2.1): files and settings written earlier and then run.

``cat > x.sh <<EOF … EOF; bash x.sh``, ``echo '{"scripts":…}' > package.json && npm run x``,
``ln -s /bin/rm ./sweep && ./sweep -rf ~``: what runs is what the same text wrote before. The
reader remembers, per reading, what each command writes (:class:`Written`) — a text when it is
static, the program a copy or link points to, or nothing known — and reads a later run of that
file from it: a script as the shell's code, a Makefile's or justfile's recipes and package.json's
scripts as shell, a copy of a program as that program. Written but not known is opaque code.

:class:`DefinedReading` is a part of the reader: it takes the reading's
:class:`~._state.ReadState`.
"""

from __future__ import annotations

import itertools
import json
import os
import posixpath
import re
from collections.abc import Callable, Sequence
from typing import Final

from gatesh._types import Code, CodeSource, Context, SimpleCommand, Word
from gatesh.vocab.grammar import parse
from gatesh.vocab.paths.classes import others_may_create
from gatesh.vocab.programs.shells import PARSED_SHELLS

from ._code import CodeReading
from ._peel import head_of, shebang_head
from ._state import Again, Inherit, ReadState, Written
from ._walk import RawCommand

# Folders whose programs are the system's own: a copy or link of one is that program.
_PROGRAM_DIRS: Final = (
    "/bin/",
    "/sbin/",
    "/usr/bin/",
    "/usr/sbin/",
    "/usr/local/bin/",
    "/usr/local/sbin/",
    "/opt/homebrew/bin/",
    "/nix/var/nix/profiles/default/bin/",
    "/run/current-system/sw/bin/",
)
# Folders on a usual PATH: a program written there runs by its bare name.
_PATH_DIRS: Final = (
    "/usr/local/bin",
    "/usr/bin",
    "/bin",
    "/usr/local/sbin",
    "/usr/sbin",
    "/sbin",
    "~/bin",
    "~/.local/bin",
    "/opt/homebrew/bin",
)
_COPIERS: Final = frozenset({"cp", "ln", "install", "mv", "rsync"})
# Every program ``_record`` remembers a write of beside write redirections (keep the two in step).
# Programs that rewrite the files they are given in place (with an option, or always: ed, ex).
_IN_PLACE_EDITORS: Final = frozenset({"sed", "gsed", "perl", "ruby", "awk", "gawk", "ed", "ex"})
_RECORDERS: Final = (
    _COPIERS | _IN_PLACE_EDITORS | {"tee", "curl", "wget", "git", "tar", "gtar", "bsdtar", "unzip"}
)
_WHICH: Final = re.compile(
    r"^\"?\$\((?:which|command -v|type -p)\s+([\w.+-]+)\)\"?$|^`(?:which|command -v)\s+([\w.+-]+)`$"
)
_MAKEFILES: Final = ("GNUmakefile", "makefile", "Makefile")
_JUSTFILES: Final = ("justfile", "Justfile", ".justfile")
# npm lifecycle: the scripts a subcommand runs (each with its pre and post script).
_NPM_LIFECYCLE: Final = {
    "install": (
        "preinstall",
        "install",
        "postinstall",
        "prepublish",
        "preprepare",
        "prepare",
        "postprepare",
    ),
    "ci": ("preinstall", "install", "postinstall", "prepare"),
    "i": ("preinstall", "install", "postinstall", "prepare"),
    "test": ("pretest", "test", "posttest"),
    "t": ("pretest", "test", "posttest"),
    "start": ("prestart", "start", "poststart"),
    "stop": ("prestop", "stop", "poststop"),
    "restart": ("prerestart", "restart", "postrestart"),
    "pack": ("prepack", "prepare", "postpack"),
    "publish": ("prepublishOnly", "prepack", "prepare", "postpack", "publish", "postpublish"),
}
_PACKAGE_RUNNERS: Final = frozenset({"npm", "pnpm", "yarn", "bun"})
# Programs that run recipes from a file in the working folder.
RECIPE_RUNNERS: Final = frozenset({"make", "gmake", "bmake", "just"}) | _PACKAGE_RUNNERS
# A git hook: written, it runs at the next git command (writing one counts as running it).
_GIT_HOOK: Final = re.compile(r"(?:^|/)\.git/hooks/[\w.-]+$")


# The note that a file this text wrote is run: its text is read (as this shell's code, or as the
# program of its interpreter, whose own gaps say how much of it the builtin models).
WRITTEN_RUN_NOTE: Final = " runs the text written to it earlier in this text"


class DefinedReading:
    """Remembering what a text writes, and reading later runs of it (a part of the reader)."""

    def __init__(self, st: ReadState, again: Again, inputs: CodeReading) -> None:
        self.st = st
        self.again = again
        self.inputs = inputs

    def _key(self, path: str) -> str:
        if self.st.written_cwd is not None and not path.startswith(("/", "~")):
            return posixpath.normpath(posixpath.join(self.st.written_cwd, path))
        return posixpath.normpath(self.st.resolve(path))

    def follow_cd(self, argv: Sequence[Word]) -> None:
        """A ``cd DIR`` of this text: relative paths written or run after it are under DIR (the
        folder only known when it runs: forgotten, and paths resolve as before)."""
        target = argv[1] if len(argv) > 1 else None
        if target is None or not target.static or target.text == "-":
            self.st.written_cwd = None
            return
        self.st.written_cwd = self._key(target.text)

    def written_at(self, path: str) -> Written | None:
        """What an earlier command of this text wrote to ``path`` (None: nothing): the file
        itself, or a folder it lies in whose whole content was fetched (``git clone URL d``)."""
        if not self.st.written:
            return None
        key = self._key(path)
        found = self.st.written.get(key)
        if found is not None:
            return found
        for folder, what in self.st.written.items():
            if what.folder and key.startswith(folder.rstrip("/") + "/"):
                return what
        return None

    def key(self, path: str) -> str:
        """``path`` as this text's writes are remembered: absolute, under the folder a ``cd`` of
        this text moved to."""
        return self._key(path)

    def writes_under(self, folder: str) -> bool:
        """Whether an earlier command of this text writes a file under ``folder`` (which then
        exists when the command runs)."""
        if not self.st.written:
            return False
        prefix = self._key(folder).rstrip("/") + "/"
        return any(key.startswith(prefix) for key in self.st.written)

    # --- what a command writes --------------------------------------------------------------

    def record_writes(
        self, cmd: SimpleCommand, raw: RawCommand, depth: int, inherit: Inherit
    ) -> list[int]:
        """Remember the files ``cmd`` writes (its redirections, tee, cp/ln/install/mv, downloads);
        a git hook written with a known text is read as the script it is."""
        if cmd.head not in _RECORDERS and not any(r.writes for r in cmd.redirects):
            return []  # nothing for ``_record`` to remember: nothing written, no hook to read
        before = dict(self.st.written)
        self._record(cmd, raw)
        out: list[int] = []
        for key, what in self.st.written.items():
            if before.get(key) is not what and _GIT_HOOK.search(key) and self.st.commands:
                out.extend(
                    self.run_text(
                        len(self.st.commands) - 1, key, what, "git", depth, inherit, shebang=True
                    )
                )
        return out

    def _record(self, cmd: SimpleCommand, raw: RawCommand) -> None:
        for r in cmd.redirects:
            if (
                not r.writes
                or r.target is None
                or r.target.startswith("/dev/")
                or r.fd not in (None, 1)
            ):
                continue
            fed = self.inputs.output_of(raw, 0) if cmd.head not in ("", ":") else None
            text = None if fed is None or fed.dynamic else fed.text
            self._write(
                r.target, Written(text, why=f"`{raw.raw.strip()[:60]}`"), append=r.op == ">>"
            )
        if cmd.head == "tee":
            fed = self.inputs.fed_input(raw)
            text = None if fed is None or fed.dynamic else fed.text
            append = any(w.static and w.text in ("-a", "--append") for w in cmd.argv[1:])
            for w in cmd.argv[1:]:
                if w.static and not w.text.startswith("-"):
                    self._write(
                        w.text, Written(text, why=f"`{raw.raw.strip()[:60]}`"), append=append
                    )
        elif cmd.head in _COPIERS:
            self._copy(cmd)
        elif cmd.head in ("curl", "wget"):
            for value in _download_targets(cmd):
                self._write(value, Written(why=f"downloaded by `{raw.raw.strip()[:60]}`"))
        elif cmd.head in _IN_PLACE_EDITORS:
            for path in _edited_in_place(cmd):
                if self.written_at(path) is not None or os.path.isfile(self.st.resolve(path)):
                    # what it holds now is the old text edited: not a text gatesh has read
                    why = f"edited in place by `{raw.raw.strip()[:60]}`"
                    self._write(path, Written(why=why))
        elif cmd.head == "git":
            folder = _clone_target(cmd)
            if folder:
                why = f"cloned by `{raw.raw.strip()[:60]}`"
                self.st.written[self._key(folder)] = Written(why=why, folder=True)
        elif cmd.head in _UNPACKERS:
            folder = self._unpacked(cmd)
            if folder:
                why = f"unpacked from a download by `{raw.raw.strip()[:60]}`"
                self.st.written[self._key(folder)] = Written(why=why, folder=True)

    def _unpacked(self, cmd: SimpleCommand) -> str:
        """The folder an archive that came from the network is unpacked into, or ''."""
        args = [w.text for w in cmd.argv[1:]]
        if cmd.head in ("unzip",):
            source = next((a for a in args if not a.startswith("-")), "-")
            dest = _option(args, ("-d",)) or "."
        else:  # tar, bsdtar, gtar
            first = args[0] if args else ""
            extracting = any(a in ("-x", "--extract", "--get") for a in args) or (
                "x" in first.lstrip("-") and first.lstrip("-").isalpha()
            )
            if not extracting:
                return ""
            source = _option(args, ("-f", "--file")) or (
                "-" if not any("f" in a.lstrip("-") for a in args[:1]) else ""
            )
            dest = _option(args, ("-C", "--directory")) or "."
        downloaded = any(c.head in _DOWNLOADERS for c in self.st.commands)
        if source in ("", "-"):
            return dest if downloaded else ""
        what = self.written_at(source)
        return (
            dest
            if (what is not None and "download" in what.why)
            or (downloaded and source.startswith(("http://", "https://")))
            else ""
        )

    def _write(self, path: str, what: Written, *, append: bool = False) -> None:
        key = self._key(path)
        if append:
            before = self.st.written.get(key)
            if before is None and os.path.exists(key):
                what = Written(why=f"appended to {path}, which holds text gatesh did not read")
            elif before is not None:
                joined = (
                    None if before.text is None or what.text is None else before.text + what.text
                )
                what = Written(joined, why=what.why or before.why)
        self.st.written[key] = what

    def _copy(self, cmd: SimpleCommand) -> None:
        """cp/ln/install/mv SRC… DST: each destination holds what its source held."""
        args = list(cmd.argv[1:])
        argv = parse(cmd.head, [w.text for w in args], [w.static for w in args])
        words = [args[k] for k in argv.operand_at]
        target_dir: Word | None = None
        for o in argv.opts("-t", "--target-directory"):
            if o.value is not None:
                target_dir = args[o.value_at] if o.value_at > o.at else Word(o.value)
        if target_dir is None:
            if len(words) < 2:
                return
            sources, dest = words[:-1], words[-1]
        else:
            sources, dest = words, target_dir
        if not dest.static:
            return
        into = (
            len(sources) > 1
            or dest.text.endswith("/")
            or target_dir is not None
            or os.path.isdir(self.st.resolve(dest.text))
        )
        for src in sources:
            name = posixpath.basename(src.text.rstrip("/")) if src.static else ""
            path = posixpath.join(dest.text, name) if into else dest.text
            if into and not name:
                continue
            if cmd.head != "ln" and self._nothing_at(src):
                # cp/mv/install of a file that is not there fails and writes nothing: the
                # destination keeps what it held (a link, unlike a copy, follows a later write)
                continue
            self._write(path, self._source_of(src))

    def _nothing_at(self, src: Word) -> bool:
        """Whether the static name ``src`` names nothing when the command is decided: not
        written earlier in the text, not a program folder's file, no pattern, no file on disk,
        and in no folder where another user may create it in between (``/tmp``)."""
        if not src.static or any(ch in src.text for ch in "*?[") or not src.text:
            return False
        if self.written_at(src.text) is not None or src.text.startswith(_PROGRAM_DIRS):
            return False
        full = self.st.resolve(src.text)
        return not os.path.lexists(full) and not others_may_create(full)

    def _source_of(self, src: Word) -> Written:
        if not src.static:
            m = _WHICH.match(src.text)
            if m:
                return Written(program=m.group(1) or m.group(2))
            return Written(why=f"a copy of {src.text[:60]}, named only when it runs")
        before = self.written_at(src.text)
        if before is not None:
            return before
        if src.text.startswith(_PROGRAM_DIRS):
            return Written(program=head_of(src.text))
        full = self.st.resolve(src.text)
        try:
            if os.path.isfile(full) and os.path.getsize(full) <= 256 * 1024:
                with open(full, "rb") as fh:
                    data = fh.read()
                if b"\x00" not in data[:4096]:
                    return Written(data.decode("utf-8", "replace"))
        except OSError:
            pass
        return Written(why=f"a copy of {src.text[:60]}")

    # --- running what was written -----------------------------------------------------------

    def run_written(
        self, cmd: SimpleCommand, raw: RawCommand, index: int, depth: int, inherit: Inherit
    ) -> list[int] | None:
        """``./x …`` (or ``x`` written into a PATH folder) where this text wrote x: the program it
        copies runs (as that program), or its text is read as a script. None: x was not written."""
        word = cmd.argv[0]
        if not word.static:
            return None
        what = self.written_at(word.text) if "/" in word.text else self._on_path(word.text)
        if what is None:
            return None
        if what.program is not None:
            self.st.note(f"{word.text} was made a copy of {what.program} earlier in the text")
            sub = RawCommand(
                [Word(what.program), *cmd.argv[1:]],
                raw.context,
                raw.frame,
                raw.start,
                raw.raw,
                assignments=list(raw.assignments),
            )
            return self.again.finalize(sub, depth + 1, inherit)[0]
        return self.run_text(index, word.text, what, cmd.head, depth, inherit, shebang=True)

    def _on_path(self, name: str) -> Written | None:
        if not self.st.written or "/" in name:
            return None
        for folder in _PATH_DIRS:
            found = self.written_at(posixpath.join(folder, name))
            if found is not None:
                return found
        return None

    def run_text(
        self,
        index: int,
        path: str,
        what: Written,
        language: str,
        depth: int,
        inherit: Inherit,
        *,
        shebang: bool = False,
    ) -> list[int]:
        """Read a written file as the script it is (its shebang's language, or sh)."""
        if what.text is None:
            why = f"{path}, written earlier in this text with content gatesh does not know ({what.why})"
            self.st.code.append(
                Code(index, language, CodeSource.DEFINED, opaque=f"{language} runs {why}")
            )
            self.st.note(f"opaque code: {language} runs {why}")
            return []
        interp = shebang_head(what.text) if shebang else language
        self.st.code.append(Code(index, language, CodeSource.DEFINED, text=what.text[: 64 * 1024]))
        self.st.note(f"{path}{WRITTEN_RUN_NOTE}")
        if interp and interp not in PARSED_SHELLS:
            self.st.context_script(path, interp, what.text)
            return []
        return self.again.read_text(what.text, Context.SCRIPT, depth + 1, inherit)

    def run_recipes(
        self, cmd: SimpleCommand, index: int, depth: int, inherit: Inherit
    ) -> list[int]:
        """make, just and the package runners, when this text wrote their recipe file."""
        head = cmd.head
        args = [w.text for w in cmd.argv[1:] if w.static]
        if head in ("make", "gmake", "bmake"):
            found = self._recipe_file(
                _option(args, ("-f", "--file", "--makefile")),
                _MAKEFILES,
                _option(args, ("-C", "--directory")),
            )
            return (
                []
                if found is None
                else self._recipe_lines(index, head, found, make_recipes, depth, inherit)
            )
        if head == "just":
            found = self._recipe_file(
                _option(args, ("-f", "--justfile")),
                _JUSTFILES,
                _option(args, ("-d", "--working-directory")),
            )
            return (
                []
                if found is None
                else self._recipe_lines(index, head, found, _just_recipes, depth, inherit)
            )
        if head in _PACKAGE_RUNNERS:
            found = self._recipe_file(
                None, ("package.json",), _option(args, ("--prefix", "-C", "--dir", "--cwd"))
            )
            if found is None:
                return []
            names = _package_scripts(head, args)
            return (
                []
                if not names
                else self._recipe_lines(
                    index, head, found, lambda text: _json_scripts(text, names), depth, inherit
                )
            )
        return []

    def _recipe_file(
        self, given: str | None, names: tuple[str, ...], folder: str | None
    ) -> tuple[str, Written] | None:
        if not self.st.written:
            return None
        candidates = (
            [given] if given else [posixpath.join(folder, n) if folder else n for n in names]
        )
        for path in candidates:
            what = self.written_at(path)
            if what is not None:
                return path, what
        return None

    def _recipe_lines(
        self,
        index: int,
        head: str,
        found: tuple[str, Written],
        extract: Callable[[str], list[str] | None],
        depth: int,
        inherit: Inherit,
    ) -> list[int]:
        path, what = found
        if what.text is None:
            return self.run_text(index, path, what, head, depth, inherit)
        lines = extract(what.text)
        if lines is None:
            return self.run_text(
                index,
                path,
                Written(why=f"{path} cannot be read as {head} reads it"),
                head,
                depth,
                inherit,
            )
        self.st.code.append(
            Code(index, head, CodeSource.DEFINED, text="\n".join(lines)[: 64 * 1024])
        )
        self.st.note(f"{head} runs the recipes {path} was given earlier in this text")
        return (
            self.again.read_text("\n".join(lines), Context.SCRIPT, depth + 1, inherit)
            if lines
            else []
        )


def _option(args: list[str], names: tuple[str, ...]) -> str | None:
    for k, a in enumerate(args):
        if a in names and k + 1 < len(args):
            return args[k + 1]
        for n in names:
            if n.startswith("--") and a.startswith(n + "="):
                return a.split("=", 1)[1]
    return None


# A rule with its recipe on the same line: `target: prerequisites ; recipe`.
_INLINE_RECIPE: Final = re.compile(r"^[^\t#=:][^=:]*::?(?!=)[^;#]*;(.*)$")


def make_recipes(text: str) -> list[str]:
    """A makefile's recipe lines (a tab first, or after ``target: ;``), less make's ``@-+``
    prefixes."""
    out: list[str] = []
    for ln in text.split("\n"):
        if ln.startswith("\t"):
            out.append(ln[1:].lstrip("@-+ \t"))
            continue
        m = _INLINE_RECIPE.match(ln)
        if m and m.group(1).strip():
            out.append(m.group(1).strip().lstrip("@-+ \t"))
    return out


def _just_recipes(text: str) -> list[str]:
    """A justfile's recipe lines: the indented lines under a ``name …:`` header, less ``@``/``-``."""
    out: list[str] = []
    in_recipe = False
    for ln in text.split("\n"):
        if not ln.strip() or ln.lstrip().startswith("#"):
            continue
        if ln[:1] in (" ", "\t"):
            if in_recipe:
                out.append(ln.strip().lstrip("@-").lstrip())
            continue
        in_recipe = bool(re.match(r"^@?[\w-]+(?:\s[^:=]*)?:(?!=)", ln))
    return out


def _package_scripts(head: str, args: list[str]) -> tuple[str, ...]:
    """The package.json scripts a package-runner command runs (pre/post scripts included)."""
    words = [a for a in args if not a.startswith("-")]
    if not words:
        return (
            ("preinstall", "install", "postinstall", "prepare")
            if head in ("yarn", "bun", "pnpm")
            else ()
        )
    sub = words[0]
    if sub in ("run", "run-script", "rum", "urn") and len(words) > 1:
        name = words[1]
        return (f"pre{name}", name, f"post{name}")
    if sub in _NPM_LIFECYCLE:
        return _NPM_LIFECYCLE[sub]
    if head in ("yarn", "pnpm", "bun") and sub not in (
        "add",
        "remove",
        "dlx",
        "exec",
        "x",
        "create",
        "init",
    ):
        return (f"pre{sub}", sub, f"post{sub}")
    return ()


def _json_scripts(text: str, names: tuple[str, ...]) -> list[str] | None:
    try:
        data = json.loads(text)
    except ValueError:
        return None
    scripts = data.get("scripts") if isinstance(data, dict) else None
    if scripts is None:
        return []
    if not isinstance(scripts, dict):
        return None
    return [str(scripts[n]) for n in names if n in scripts]


_UNPACKERS: Final = frozenset({"tar", "gtar", "bsdtar", "unzip"})
_DOWNLOADERS: Final = frozenset({"curl", "wget", "wget2", "aria2c", "fetch", "http", "xh"})


def _clone_target(cmd: SimpleCommand) -> str:
    """The folder ``git clone URL [DIR]`` makes (DIR, or the URL's last part less ``.git``)."""
    args = [w.text for w in cmd.argv[1:]]
    argv = parse("git", args, [w.static for w in cmd.argv[1:]])
    if argv.path[:1] != ("clone",) or not argv.operands:
        return ""
    if len(argv.operands) >= 2:
        return argv.operands[1]
    name = argv.operands[0].rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    return name.removesuffix(".git")


def _download_targets(cmd: SimpleCommand) -> list[str]:
    """The files curl or wget writes what it fetched to (``-o F``, ``-sLo F``, ``--output=F``;
    wget's ``-O F``), read through the program's grammar."""
    args = cmd.argv[1:]
    argv = parse(cmd.head, [w.text for w in args], [w.static for w in args])
    names = ("-o", "--output") if cmd.head == "curl" else ("-O", "--output-document")
    named = [
        o.value
        for o in argv.opts(*names)
        if o.value is not None and o.value != "-" and (o.value_at < 0 or args[o.value_at].static)
    ]
    if named:
        return named
    # curl -O / wget with no -O: the file takes the last part of the URL's path.
    if cmd.head == "curl" and not argv.has("-O", "--remote-name", "--remote-name-all"):
        return []
    folder = argv.value("--output-dir", "-P", "--directory-prefix") or ""
    out = []
    for url in argv.operands:
        path = url.split("?", 1)[0].split("#", 1)[0]
        if "://" in path and "/" in path.split("://", 1)[1]:
            name = path.rsplit("/", 1)[-1]
            if name:
                out.append(posixpath.join(folder, name) if folder else name)
    return out


# Options whose value is a program text or a file of one, not a file the editor rewrites.
_SCRIPT_OPTIONS: Final = {
    "sed": frozenset({"-e", "--expression", "-f", "--file", "-l", "--line-length"}),
    "perl": frozenset({"-e", "-E", "-M", "-m", "-I", "-x"}),
    "ruby": frozenset({"-e", "-r", "-I", "-C", "-x"}),
    "awk": frozenset({"-f", "--file", "-v", "--assign", "-F", "-i", "--include", "-e"}),
}


def _edited_in_place(cmd: SimpleCommand) -> list[str]:
    """The files ``cmd`` rewrites in place: ``sed -i``/``--in-place``, ``perl -i``/``-pi``,
    ``ruby -i``, ``gawk -i inplace``, and the file ``ed``/``ex`` is given. Every static operand
    that is not the program text counts (over-counting only makes a known text unknown)."""
    head = {"gsed": "sed", "gawk": "awk"}.get(cmd.head, cmd.head)
    words = [w.text for w in cmd.argv[1:] if w.static]
    if head in ("ed", "ex"):
        return [w for w in words if not w.startswith(("-", "+"))]
    if head == "sed":
        edits = any(
            w.startswith("--in-place") or re.match(r"^-[nrsuEz]*i", w) is not None for w in words
        )
    elif head in ("perl", "ruby"):
        edits = any(re.match(r"^-[a-zA-Z0-9]*i", w) is not None for w in words)
    else:
        edits = any(
            w in ("-i", "--include") and nxt == "inplace" for w, nxt in itertools.pairwise(words)
        ) or any(w in ("-iinplace", "--include=inplace") for w in words)
    if not edits:
        return []
    takes = _SCRIPT_OPTIONS.get(head, frozenset())
    operands: list[str] = []
    has_script = False
    skip = False
    for w in words:
        if skip:
            skip = False
            continue
        if w == "--":
            continue
        if w in takes:
            has_script = has_script or w in ("-e", "-E", "--expression", "-f", "--file")
            skip = True
            continue
        if w.startswith("-"):
            has_script = has_script or (head in ("perl", "ruby") and w.rstrip("e") != w)
            continue
        operands.append(w)
    if not has_script and operands:
        operands = operands[1:]  # the first operand is the program text
    return operands
