"""Python code whose every effect the builtin models: computing, printing, and reading and
writing files its text names.

The code rules look for the commands and deletions inside program text; they do not claim to know
everything a program can do. For Python they can, for a program whose imports are all modules with
no effect beyond the process (:data:`PURE_PYTHON_MODULES`), that opens files only by names its text
spells out (returned as :class:`FileUse`, for the caller to judge: the reader makes them path
effects, the rater judges those), and that reaches no way around those limits (``eval``/``exec``,
dunder attributes, a module's private names, a module passed on). What such a program does is
known (S4: complete knowledge). Anything else — a project import, a subprocess — stays a gap.
"""

from __future__ import annotations

import ast
import re
import shlex
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

# Python modules whose import has no effect beyond the process and whose calls change nothing
# outside it (computing, formatting, parsing, reading): code importing only these, and opening
# files only to read them, is code the builtin models whole (this module).
# ``os`` and ``sys`` are here for their read-only parts; only those are allowed. pathlib is not:
# its paths read and write any file by a name computed at run time.
PURE_PYTHON_MODULES: Final[frozenset[str]] = frozenset(
    {
        "__future__",
        "abc",
        "array",
        "ast",
        "base64",
        "binascii",
        "bisect",
        "calendar",
        "cmath",
        "codecs",
        "collections",
        "colorsys",
        "contextlib",
        "copy",
        "dataclasses",
        "datetime",
        "decimal",
        "difflib",
        "dis",
        "enum",
        "fractions",
        "functools",
        "graphlib",
        "hashlib",
        "heapq",
        "hmac",
        "html",
        "inspect",
        "io",
        "itertools",
        "json",
        "keyword",
        "math",
        "numbers",
        "operator",
        "os",
        "pprint",
        "random",
        "re",
        "reprlib",
        "secrets",
        "shlex",
        "statistics",
        "string",
        "struct",
        "sys",
        "textwrap",
        "time",
        "tokenize",
        "traceback",
        "types",
        "typing",
        "unicodedata",
        "uuid",
        "warnings",
        "zoneinfo",
    }
)

# Names that reach past the limits above: code built from text, other modules, the interpreter's
# internals, a pager, or the file opener used other than by a call.
_FORBIDDEN_NAMES: Final = frozenset(
    {
        "eval",
        "exec",
        "compile",
        "__import__",
        "globals",
        "locals",
        "vars",
        "getattr",
        "setattr",
        "delattr",
        "breakpoint",
        "help",
        "__builtins__",
        "__loader__",
        "__spec__",
    }
)
# Attributes that lead from any object to a module with effects, to the interpreter's internals
# (``().__class__.__bases__[0].__subclasses__()``, frames and their globals), or to a file object
# that writes.
_FORBIDDEN_ATTRS: Final = frozenset(
    {
        "os",
        "posix",
        "nt",
        "sys",
        "subprocess",
        "builtins",
        "importlib",
        "ctypes",
        "shutil",
        "socket",
        "modules",
        "FileIO",
        "__subclasses__",
        "__bases__",
        "__base__",
        "__mro__",
        "__globals__",
        "__builtins__",
        "__dict__",
        "__code__",
        "__closure__",
        "__func__",
        "__self__",
        "__import__",
        "__loader__",
        "__spec__",
        "__getattribute__",
        "__reduce__",
        "__reduce_ex__",
        "__setattr__",
        "__delattr__",
        "__init_subclass__",
        "f_globals",
        "f_builtins",
        "f_locals",
        "f_back",
        "gi_frame",
        "cr_frame",
        "tb_frame",
    }
)
# The only ``os`` attributes modelled: path arithmetic and read-only looks at the process and tree.
_OS_READS: Final = frozenset(
    {
        "path",
        "getcwd",
        "listdir",
        "scandir",
        "walk",
        "stat",
        "lstat",
        "sep",
        "linesep",
        "pathsep",
        "curdir",
        "pardir",
        "name",
        "cpu_count",
        "getpid",
        "fspath",
    }
)
# open()'s modes, by what they do to the file: read it, or write it (replacing or adding to it).
_MODE: Final = re.compile(r"^(?=[rwaxbtU+]{1,4}$)(?!.*(.).*\1)")
# Longer programs are not analysed: the answer is "not modelled", which only asks the model.
MAX_CODE_CHARS: Final = 64 * 1024


@dataclass(frozen=True)
class FileUse:
    """A file the program opens, by the name its text spells out: read, or written (``replaces``
    when the mode empties it first, ``w``; adding to it, ``a``/``x``/``+``, does not)."""

    name: str
    writes: bool
    replaces: bool


def modelled(code: str) -> tuple[FileUse, ...] | None:
    """The files the Python program ``code`` opens (each named by the text) when every effect of
    it is one the builtin models (see the module's docstring); None for anything else, and for
    anything it cannot parse or tell. The caller judges the files it reads and writes."""
    if not code or len(code) > MAX_CODE_CHARS:
        return None
    return _modelled(code)


def file_uses(code: str) -> tuple[FileUse, ...]:
    """Every file ``code`` opens by a name its text spells out, modelled or not (for the path
    effects of inline code: a relative name is a path too when ``open`` is given it)."""
    if not code or len(code) > MAX_CODE_CHARS:
        return ()
    return _file_uses(code)


@lru_cache(maxsize=2048)
def _modelled(code: str) -> tuple[FileUse, ...] | None:
    try:
        check = _Check(ast.parse(code))
        return tuple(check.opened) if check.ok() else None
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


@lru_cache(maxsize=2048)
def _file_uses(code: str) -> tuple[FileUse, ...]:
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    literals = _literal_names(tree)
    out: list[FileUse] = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "open"
        ):
            _open_use(node, literals, out)
    return tuple(out)


class _Check:
    """One program's check: its imports, the names bound to ``os``/``sys``/openers, every node."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.parents: dict[int, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parents[id(child)] = node
        self.modules: dict[str, str] = {}  # bound name -> module
        self.literals = _literal_names(tree)
        self.opened: list[FileUse] = []  # the files it opens, by name

    def ok(self) -> bool:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    top = a.name.split(".")[0]
                    if top not in PURE_PYTHON_MODULES:
                        return False
                    self.modules[a.asname or top] = a.name if a.asname else top
            elif isinstance(node, ast.ImportFrom):
                if node.level or not node.module:
                    return False  # a relative import is the project's own code
                top = node.module.split(".")[0]
                if node.module != "__future__" and top not in PURE_PYTHON_MODULES:
                    return False
                for a in node.names:
                    if a.name == "*" or (a.name.startswith("_") and node.module != "__future__"):
                        return False
                    if a.name in _FORBIDDEN_ATTRS or (top == "os" and a.name not in _OS_READS):
                        return False
                    if a.name in ("open", "FileIO"):
                        return False
        return all(self._node_ok(node) for node in ast.walk(self.tree))

    def _node_ok(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            if node.id in _FORBIDDEN_NAMES:
                return False
            module = self.modules.get(node.id)
            parent = self.parents.get(id(node))
            if node.id == "open" and not (isinstance(parent, ast.Call) and parent.func is node):
                return False  # the opener passed on or renamed: its mode is no longer seen
            if module is not None:
                # a module name only as the object of an attribute (never passed on or rebound)
                if not (isinstance(parent, ast.Attribute) and parent.value is node):
                    return isinstance(parent, (ast.Import, ast.alias))
                if module == "os" and parent.attr not in _OS_READS:
                    return False
                if parent.attr.startswith("_"):
                    return False  # a module's private names hold the modules it uses
            return True
        if isinstance(node, ast.Attribute):
            return node.attr not in _FORBIDDEN_ATTRS
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id == "open":
                return _open_use(node, self.literals, self.opened)
            if (
                isinstance(f, ast.Attribute)
                and f.attr == "open"
                and isinstance(f.value, ast.Name)
                and self.modules.get(f.value.id) in ("io", "codecs", "tokenize")
            ):
                return _open_use(node, self.literals, self.opened)
        return True


def _literal_names(tree: ast.AST) -> dict[str, str]:
    """Names assigned exactly once in ``tree``, a string literal, and never bound otherwise (so
    ``open(path)`` names its file): name -> the literal."""
    return {
        n: v.value
        for n, v in _bindings(tree)[0].items()
        if isinstance(v, ast.Constant) and isinstance(v.value, str)
    }


def _named_file(arg: ast.expr, literals: dict[str, str]) -> str | None:
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    return literals.get(arg.id) if isinstance(arg, ast.Name) else None


def _open_use(call: ast.Call, literals: dict[str, str], opened: list[FileUse]) -> bool:
    """``open(NAME[, MODE])`` with a spelled-out name and a mode spelled out (the use is kept);
    False for a name or mode only known when it runs, or an opener of the code's own."""
    name = _named_file(call.args[0], literals) if call.args else None
    if name is None:
        return False
    mode: ast.expr | None = call.args[1] if len(call.args) > 1 else None
    for kw in call.keywords:
        if kw.arg == "mode":
            mode = kw.value
        elif kw.arg in ("opener", "file") or kw.arg is None:
            return False
    text = "r"
    if mode is not None:
        if not (isinstance(mode, ast.Constant) and isinstance(mode.value, str)):
            return False
        text = mode.value
        if not _MODE.match(text):
            return False
    writes = any(ch in text for ch in "wax+")
    opened.append(FileUse(name, writes, "w" in text))
    return True


# Calls that run a command line: the first argument (or ``args=``) is the command.
_RUNNERS: Final = frozenset(
    {
        ("os", "system"),
        ("os", "popen"),
        ("subprocess", "run"),
        ("subprocess", "call"),
        ("subprocess", "check_call"),
        ("subprocess", "check_output"),
        ("subprocess", "Popen"),
        ("subprocess", "getoutput"),
        ("subprocess", "getstatusoutput"),
    }
)
# Calls that return the path of a named program, so a list argv starting with one runs that
# program: the path a library ships its own binary at (its name is the binary's), and which(),
# the PATH lookup the shell itself would make for the same word.
PROGRAM_PATH_CALLS: Final = {("imageio_ffmpeg", "get_ffmpeg_exe"): "ffmpeg"}
_WHICH: Final = ("shutil", "which")
# A word of an argv the code computes when it runs (a number, a name from input): the rules read
# it as a word only known then, as they read an f-string's holes.
RUNTIME_WORD: Final = "$VALUE"


_LINE_BREAKS: Final = re.compile(r"(?<=\n)|(?<=\r)(?!\n)")


def run_lines(code: str) -> dict[int, str]:
    """For the Python program ``code``: the character offset of every call that runs a command
    (``subprocess.run(cmd)``, ``os.system(line)``) whose command the text spells out through
    names bound once -> that command line. A list argv's program must be spelled out (a literal,
    or a call of :data:`PROGRAM_PATH_CALLS` or ``shutil.which('x')``); its other words may be
    computed (read as ``$VALUE``). Calls whose command is not known are left out."""
    if not code or len(code) > MAX_CODE_CHARS:
        return {}
    return _run_lines(code)


@lru_cache(maxsize=1024)
def _run_lines(code: str) -> dict[int, str]:
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    bound, every = _bindings(tree)
    imported = _imported(tree, every)
    bound = _unchanged(tree, bound, imported)
    # the lines as the parser counts them (\n, \r\n, \r; not str.splitlines' other breaks)
    lines = _LINE_BREAKS.split(code)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    out: dict[int, str] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or _dotted(node.func, imported) not in _RUNNERS:
            continue
        arg = node.args[0] if node.args else None
        for k in node.keywords:
            if k.arg == "args" and arg is None:
                arg = k.value
            if k.arg == "shell" and not (isinstance(k.value, ast.Constant) and not k.value.value):
                if not isinstance(_value(arg, bound), ast.Constant):
                    arg = None  # a list under shell=True: its first word is a shell line
        command = _command_line(arg, bound, imported) if arg is not None else None
        if command is None or node.lineno > len(lines):
            continue
        # col_offset counts UTF-8 bytes; the rules' offsets count characters
        prefix = lines[node.lineno - 1].encode("utf-8")[: node.col_offset]
        out[starts[node.lineno - 1] + len(prefix.decode("utf-8", "replace"))] = command
    return out


def _bindings(tree: ast.AST) -> tuple[dict[str, ast.expr], set[str]]:
    """Names assigned exactly once in ``tree`` by a plain ``NAME = value`` and never bound
    otherwise (name -> the value's expression), and every name bound other than by an import."""
    values: dict[str, ast.expr | None] = {}
    imports: set[str] = set()

    def bind(name: str, value: ast.expr | None) -> None:
        values[name] = value if name not in values else None

    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                for name in ast.walk(t):
                    if isinstance(name, ast.Name):
                        bind(name.id, node.value if t is name else None)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.NamedExpr)):
            for name in ast.walk(node.target):
                if isinstance(name, ast.Name):
                    bind(name.id, None)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    for name in ast.walk(item.optional_vars):
                        if isinstance(name, ast.Name):
                            bind(name.id, None)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for arg in ast.walk(node.args):
                if isinstance(arg, ast.arg):
                    bind(arg.arg, None)
            if not isinstance(node, ast.Lambda):
                bind(node.name, None)
        elif isinstance(node, ast.ClassDef):
            bind(node.name, None)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for n in node.names:
                bind(n, None)
        elif isinstance(node, ast.comprehension):
            for name in ast.walk(node.target):
                if isinstance(name, ast.Name):
                    bind(name.id, None)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bind(node.name, None)
        elif isinstance(node, ast.Delete):
            for t in node.targets:
                for name in ast.walk(t):
                    if isinstance(name, ast.Name):
                        bind(name.id, None)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.update(a.asname or a.name.split(".")[0] for a in node.names)
    once = {n: v for n, v in values.items() if v is not None and n not in imports}
    return once, set(values)


def _unchanged(
    tree: ast.AST, bound: dict[str, ast.expr], imported: dict[str, tuple[str, ...]]
) -> dict[str, ast.expr]:
    """``bound`` without the names of lists that may change after their assignment: a list is
    kept only when every use of its name is as the command of a call that runs it (a method
    call, an index, or any other call could change the words)."""
    lists = {n for n, v in bound.items() if isinstance(v, ast.List)}
    if not lists:
        return bound
    fine: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _dotted(node.func, imported) in _RUNNERS:
            fine.update(id(a) for a in node.args[:1])
            fine.update(id(k.value) for k in node.keywords if k.arg == "args")
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in lists and isinstance(node.ctx, ast.Load):
            if id(node) not in fine:
                lists.discard(node.id)
                bound = {n: v for n, v in bound.items() if n != node.id}
    return bound


def _imported(tree: ast.AST, others: set[str]) -> dict[str, tuple[str, ...]]:
    """Names bound only by one import: name -> the dotted module (or module and name) it is."""
    seen: dict[str, tuple[str, ...] | None] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                name = a.asname or a.name.split(".")[0]
                what = tuple(a.name.split(".")) if a.asname else (a.name.split(".")[0],)
                seen[name] = what if name not in seen else None
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                name = a.asname or a.name
                what = (*node.module.split("."), a.name)
                seen[name] = what if name not in seen else None
    # a name also bound another way (assigned, an argument) is not surely the import
    return {n: w for n, w in seen.items() if w is not None and n not in others}


def _dotted(f: ast.expr, imported: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """``f`` as the dotted name it refers to (``sp.run`` with ``import subprocess as sp`` is
    ``("subprocess", "run")``); () when it is not a name of an import."""
    parts: list[str] = []
    while isinstance(f, ast.Attribute):
        parts.append(f.attr)
        f = f.value
    if not isinstance(f, ast.Name) or f.id not in imported:
        return ()
    return (*imported[f.id], *reversed(parts))


def _value(e: ast.expr | None, bound: dict[str, ast.expr]) -> ast.expr | None:
    """``e``, or the value of the name ``e`` when it is bound once."""
    return bound.get(e.id) if isinstance(e, ast.Name) else e


def _command_line(
    arg: ast.expr, bound: dict[str, ast.expr], imported: dict[str, tuple[str, ...]]
) -> str | None:
    value = _value(arg, bound)
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return value.value
    if not isinstance(value, (ast.List, ast.Tuple)) or not value.elts:
        return None
    words: list[str] = []
    for i, elt in enumerate(value.elts):
        if isinstance(elt, ast.Starred):
            return None  # how many words it adds, and which is the program, is not known
        word = _word(elt, bound, imported)
        if word is None:
            if i == 0:
                return None
            words.append(RUNTIME_WORD)
        else:
            words.append(shlex.quote(word))
    return " ".join(words)


def _word(
    e: ast.expr, bound: dict[str, ast.expr], imported: dict[str, tuple[str, ...]]
) -> str | None:
    """The word ``e`` is when its text spells it out, else None."""
    v = _value(e, bound)
    if isinstance(v, ast.Constant) and isinstance(v.value, str):
        return v.value
    if isinstance(v, ast.Call) and not v.keywords:
        called = _dotted(v.func, imported)
        if called in PROGRAM_PATH_CALLS and not v.args:
            return PROGRAM_PATH_CALLS[called]
        if called == _WHICH and len(v.args) == 1:
            name = v.args[0]
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                return name.value
    return None
