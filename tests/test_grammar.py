"""The one grammar per tool (gatesh.vocab.grammar): the parser reads each spelling as its program
does; every layer decides every spelling of an option alike; and no module keeps a second table of
a row's options."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest
from _fixtures import load

from gatesh._types import Decision, Rung
from gatesh.config import default
from gatesh.pipeline import decide
from gatesh.vocab.grammar import (
    GRAMMARS,
    NEUTRAL_WRAPPERS,
    WRAPPERS,
    Bundling,
    Grammar,
    Options,
    copy_destination,
    inner_argv,
    module_program,
    parse,
    read,
)
from gatesh.vocab.programs import info, readers, verbless

PROBES = load("grammar_walk").PROBES
CONFIG = default()
ROOT = Path(__file__).resolve().parent.parent / "gatesh"


# --- the parser -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("head", "argv", "path", "options", "operands"),
    [
        ("git", "-C src clean -fdxq", ("clean",), {"-C": "src", "-f": None, "-q": None}, ()),
        ("git", "clean -qfdx", ("clean",), {"-f": None, "-d": None, "-x": None}, ()),
        ("git", "--exec-path clean -fdx", ("clean",), {"--exec-path": None}, ()),
        ("git", "--exec-path=/tmp/x status", ("status",), {"--exec-path": "/tmp/x"}, ()),
        ("git", "-c core.pager=x log -n5", ("log",), {"-c": "core.pager=x", "-n": "5"}, ()),
        ("git", "push --force-w origin main", ("push",), {"--force-with-lease": None}, None),
        ("git", "stash drop stash@{1}", ("stash", "drop"), {}, ("stash@{1}",)),
        ("git", "-- reset --hard", ("reset",), {"--hard": None}, ()),
        ("git", "checkout -- -f", ("checkout",), {}, ("-f",)),
        ("git", "remote add x https://e/r.git", ("remote", "add"), {}, ("x", "https://e/r.git")),
        ("kubectl", "-n prod delete deploy api", ("delete",), {"-n": "prod"}, ("deploy", "api")),
        ("kubectl", "delete ns x --context=prod", ("delete",), {"--context": "prod"}, ("ns", "x")),
        ("kubectl", "--context prod-eu delete ns p", ("delete",), {"--context": "prod-eu"}, None),
        ("kubectl", "logs -p web", ("logs",), {"-p": None}, ("web",)),
        ("docker", "-H unix:///s run -it alpine sh", ("run",), {"-H": "unix:///s"}, None),
        ("docker", "run alpine ls -la", ("run",), {}, ("alpine", "ls", "-la")),
        ("curl", "-sLo /tmp/i https://x", (), {"-s": None, "-L": None, "-o": "/tmp/i"}, None),
        ("curl", "-sd@.env https://x", (), {"-d": "@.env"}, ("https://x",)),
        ("ssh", "-p 22 host -t ls -la", (), {"-p": "22", "-t": None}, ("host", "ls", "-la")),
        ("ssh", "-- host -- rm", (), {}, ("host", "--", "rm")),
        ("scp", "-p a.txt host:/x", (), {"-p": None}, ("a.txt", "host:/x")),
        ("cp", "-t dst a b", (), {"-t": "dst"}, ("a", "b")),
        ("mv", "--target-direc=foo bar", (), {"--target-directory": "foo"}, ("bar",)),
        ("npm", "i github:x/y", ("install",), {}, ("github:x/y",)),
        ("terraform", "-chdir=infra destroy -auto-approve", ("destroy",), {}, ()),
    ],
)
def test_the_parser_reads_as_the_program_does(
    head: str,
    argv: str,
    path: tuple[str, ...],
    options: dict[str, str | None],
    operands: tuple[str, ...] | None,
) -> None:
    got = parse(head, argv.split())
    assert got.path == path, got
    names = {o.name: o.value for o in got.options}
    for name, value in options.items():
        assert name in names and names[name] == value, (name, got)
    if operands is not None:
        assert got.operands == operands, got


def test_every_word_is_read_once_and_odd_input_does_not_raise() -> None:
    for g in GRAMMARS:
        for words in (["-"], ["--"], ["-", "--", "-x"], ["--=", "-="], [""], ["-C"], ["--repo"]):
            got = read(g, words)
            seen = (
                list(got.path_at)
                + list(got.operand_at)
                + [o.at for o in got.options]
                + [o.value_at for o in got.options if o.value_at > o.at]
                + ([got.dashdash] if got.dashdash >= 0 else [])
            )
            assert sorted(set(seen)) == list(range(len(words))), (g.id, words, got)


def test_a_word_only_known_at_run_time_stops_the_subcommand_search() -> None:
    got = parse("git", ["$SUB", "-fdx"], [False, True])
    assert got.unknown and got.path == ()


def test_module_forms_runners_and_destinations() -> None:
    assert module_program("python3", ["-m", "twine", "upload", "dist/x"]) == ("twine", 2)
    assert module_program("python3.11", ["-u", "-m", "pip", "install", "x"]) == ("pip", 3)
    assert module_program("python", ["-m", "http.server"]) is None  # stays python's
    assert module_program("python", ["-c", "import x", "-m", "pip"]) is None
    assert inner_argv(["exec", "env", "A=1", "nice", "-n", "5", "bash", "-c", "x"])[0] == "bash"
    assert inner_argv(["sudo", "-u", "root", "VAR=1", "sh"]) == ["sh"]
    assert copy_destination("install", ["-m", "755", "a", "/usr/bin/a"]) == (("a",), "/usr/bin/a")
    assert copy_destination("cp", ["-t", "/x", "a", "b"]) == (("a", "b"), "/x")
    assert "time" in NEUTRAL_WRAPPERS and "sudo" not in NEUTRAL_WRAPPERS
    assert WRAPPERS["sudo"].assignments  # `sudo VAR=… cmd` runs cmd


# --- the walk: every row's spellings, every layer ------------------------------------------------


def _level(row: Grammar, path: tuple[str, ...]) -> Options:
    level, opts = row, row.options
    for word in path:
        nxt = level.subcommands.get(level.aliases.get(word, word))
        if nxt is None:
            assert level.open, (row.id, path)
            return level.default
        opts = (opts | nxt.options) if nxt.inherit else nxt.options
        level = nxt
    return opts


def _row(rid: str) -> Grammar:
    return next(g for g in GRAMMARS if g.id == rid)


_VALUE = "x1"


def _spellings(name: str, opts: Options, probe: str) -> Iterator[str]:
    """Every spelling of ``name x1`` the program reads as the same option and value."""
    forms: list[str] = []
    if name.startswith("--"):
        forms += [f"{name} {_VALUE}", f"{name}={_VALUE}"]
        if opts.abbreviate:
            known = [k for k in opts.known() if k.startswith("--") and k != name]
            for cut in range(len(name) - 1, 2, -1):
                prefix = name[:cut]
                if not any(k.startswith(prefix) for k in known):
                    forms.append(f"{prefix} {_VALUE}")
                    break
    elif opts.bundling is Bundling.NONE or len(name) != 2:
        forms.append(f"{name} {_VALUE}")
    else:
        forms += [f"{name} {_VALUE}", f"{name}{_VALUE}"]
        # a flag that changes nothing the layers judge, bundled before the option
        letter = next((ch for ch in "vqs" if f"-{ch}" in opts.flags), "")
        if letter:
            forms += [f"-{letter}{name[1]} {_VALUE}", f"-{letter}{name[1]}{_VALUE}"]
    for form in forms:
        yield probe.replace("{opt}", form)
        if not opts.ends_at and not probe.endswith("{opt}") and " -- " not in probe:
            head, bar, tail = probe.replace(" {opt}", "").partition(" | ")
            yield f"{head} {form}{bar}{tail}"  # after the operands


def _verdict(d: Decision) -> tuple[object, ...]:
    facts = d.facts
    verdict = d.verdict
    return (
        d.action,
        d.stage,
        d.rule_id,
        d.outcome,
        tuple(sorted(f.rule_id for f in d.floors)),
        tuple(sorted(f.rule_id for f in verdict.findings)) if verdict else (),
        facts.heads,
        tuple(sorted(facts.hosts)),
        tuple(sorted((p.resolved, p.direction.value) for p in facts.paths)),
        tuple(c.opaque != "" for c in facts.code),
    )


def _walk() -> Iterator[tuple[str, str, list[str]]]:
    for rid, path, probe in PROBES:
        opts = _level(_row(rid), path)
        for name in sorted(opts.value):
            yield probe, name, list(dict.fromkeys(_spellings(name, opts, probe)))


def test_every_row_has_a_probe() -> None:
    probed = {rid for rid, _, _ in PROBES}
    assert probed == {g.id for g in GRAMMARS}, {g.id for g in GRAMMARS} - probed


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a file of unsaved work, where every spelling is decided (deciding writes
    nothing, so the module's cases share it)."""
    project = tmp_path_factory.mktemp("grammar") / "proj"
    (project / "src").mkdir(parents=True)
    (project / "src" / "work.py").write_text("print('unsaved work')\n")
    return project


@pytest.mark.parametrize(("probe", "name", "spellings"), list(_walk()))
def test_every_layer_reads_every_spelling_alike(
    probe: str, name: str, spellings: list[str], project: Path
) -> None:
    verdicts = {
        text: _verdict(decide(text, cwd=str(project), config=CONFIG, rung=Rung.AUTO))
        for text in spellings
    }
    first = verdicts[spellings[0]]
    differ = {t: v for t, v in verdicts.items() if v != first}
    assert not differ, (spellings[0], first, differ)


# --- one answer per question in the code --------------------------------------------------------

# Literal collections that can only be a table of one family's value-taking options, or of which
# programs are wrappers: the grammar's, and nobody else's. A collection holding at least ``k`` of a
# family's signature words is such a table.
_SIGNATURES: dict[str, tuple[frozenset[str], int]] = {
    "git's global options": (frozenset({"--git-dir", "--work-tree", "--namespace", "-C"}), 3),
    "kubectl's options": (frozenset({"--kubeconfig", "--context", "--namespace", "--cluster"}), 3),
    "docker run's options": (frozenset({"--volume", "--publish", "--entrypoint", "--env"}), 3),
    "curl's options": (frozenset({"--max-time", "--user-agent", "--referer", "--retry"}), 3),
    "wget's options": (frozenset({"--output-document", "--user-agent", "--tries"}), 3),
    "where cp/mv/install write": (frozenset({"--target-directory", "--suffix", "--mode"}), 2),
    "ssh's options": (frozenset({"-J", "-L", "-R", "-W", "-i", "-o", "-p"}), 6),
    "aws's options": (
        frozenset({"--region", "--profile", "--endpoint-url", "--recursive", "--no-paginate"}),
        3,
    ),
    "which programs are wrappers": (
        frozenset({"env", "nohup", "setsid", "nice", "timeout", "stdbuf", "command", "builtin"}),
        4,
    ),
}
# The grammar itself.
_EXEMPT = ("vocab/grammar/",)

# The other tables of one fact each (gatesh.vocab.programs): which words make a program only print
# its version or help, which programs' words are data to the verb rules, which programs only read
# their files. A literal collection holding most of one of their named sets, and little else, is a
# second copy of it.
_TABLES: Final = (info, verbless, readers)
# Where a literal set of such words is not a copy: the tables' own modules and grammar rows (a
# program's own options); gatesh's own CLI flags, read by the launcher on the standard library
# alone, before any table may be imported.
_TABLE_EXEMPT = ("vocab/grammar/", "vocab/programs/info.py", "_invoke.py")


def _named_sets() -> dict[str, frozenset[str]]:
    return {
        f"{mod.__name__.rsplit('.', 1)[1]}.{name}": value
        for mod in _TABLES
        for name in mod.__all__
        if isinstance(value := getattr(mod, name), frozenset)
    }


def _copies(names: frozenset[str], table: frozenset[str]) -> bool:
    """Whether the literal ``names`` copies ``table``: most of the table, and little else."""
    common = len(names & table)
    return common >= max(3, 0.6 * len(table)) and common >= 0.75 * len(names)


def _literal_sets(tree: ast.AST) -> Iterator[tuple[int, frozenset[str]]]:
    for node in ast.walk(tree):
        items: list[ast.expr] | None = None
        if isinstance(node, ast.Set | ast.Tuple | ast.List):
            items = list(node.elts)
        elif isinstance(node, ast.Call) and node.args and not node.keywords:
            items = list(node.args)
        if items and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in items):
            yield node.lineno, frozenset(str(e.value) for e in items)  # type: ignore[attr-defined]


@functools.cache
def _literal_sets_in(path: Path) -> tuple[tuple[int, frozenset[str]], ...]:
    """The literal string collections of the module at ``path``, parsed once for both checks."""
    return tuple(_literal_sets(ast.parse(path.read_text(encoding="utf-8"))))


def tables_outside_the_grammar(root: Path = ROOT) -> dict[str, list[str]]:
    """Per family, where a literal table of its options (or of wrapper names) is kept outside the
    grammar (``file:line``, one entry per table)."""
    found: dict[str, list[str]] = {name: [] for name in _SIGNATURES}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(_EXEMPT):
            continue
        for line, names in _literal_sets_in(path):
            for family, (sig, k) in _SIGNATURES.items():
                where = f"{rel}:{line}"
                if len(sig & names) >= k and where not in found[family]:
                    found[family].append(where)
    return found


def copies_of_the_tables(root: Path = ROOT) -> dict[str, list[str]]:
    """Per named set of :data:`_TABLES`, where a literal copy of it is kept (``file:line``)."""
    tables = _named_sets()
    found: dict[str, list[str]] = {name: [] for name in tables}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(_TABLE_EXEMPT):
            continue
        for line, names in _literal_sets_in(path):
            for name, table in tables.items():
                where = f"{rel}:{line}"
                if _copies(names, table) and where not in found[name]:
                    found[name].append(where)
    return found


def test_each_question_has_one_answer_in_the_code() -> None:
    found = tables_outside_the_grammar() | copies_of_the_tables()
    assert not any(found.values()), {k: v for k, v in found.items() if v}


@pytest.mark.parametrize(
    "text",
    [
        '_V = frozenset({"--version", "-V", "--help", "-h"})\n',
        'def f(a):\n    return a in ("--version", "-version", "--help", "-help", "version", "-V")\n',
        f"NO_VERBS = frozenset({sorted(verbless.NO_STATE_VERBS - {'rm', 'git'})!r})\n",
        f"DATA = {set(sorted(verbless.NO_DELETE_VERBS)[:-30])!r}\n",
        f"READERS = _f(*{sorted(readers.READ_OPERANDS)[5:]!r})\n",
    ],
)
def test_a_second_copy_of_a_table_fails(text: str, tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(text)
    assert any(copies_of_the_tables(tmp_path).values())
