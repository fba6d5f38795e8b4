"""Code fed to shells and interpreters, and languages gatesh does not parse (S2.1, issue 14).

Each form of static fed text is read as the code it is; the text the reader computes is checked
against what real bash writes (the producer is run alone, never the consumer, and the payloads
are harmless words). Code gatesh cannot see is a fact of its own and never rated safe.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from gatesh._types import Action, CodeSource, Context, Facts, Outcome, Rung, Stage
from gatesh.config import default
from gatesh.pipeline import decide
from gatesh.policy._rules import inline_code
from gatesh.rater.builtin import BuiltinRater
from gatesh.reading import read
from gatesh.reading._fed import MAX_OUTPUT, Unknown, echo_output, printf_output
from gatesh.vocab.programs.generators import GENERATOR_ROWS, generator
from gatesh.vocab.programs.interpreters import INTERPRETER_ROWS
from gatesh.vocab.programs.shells import SHELL_ROWS

CONFIG = default()
BASH = shutil.which("bash")
needs_bash = pytest.mark.skipif(BASH is None, reason="bash is not installed")


def _cmds(facts: Facts) -> list[tuple[str, tuple[str, ...], str]]:
    return [(c.head, c.words, str(c.context)) for c in facts.commands]


def _fed(facts: Facts) -> list[tuple[str, tuple[str, ...]]]:
    """Commands read from fed text (not the producer, not the consumer)."""
    return [
        (c.head, c.words) for c in facts.commands if c.context in (Context.FED, Context.HEREDOC)
    ]


def _rate(text: str, cwd: str = "/tmp") -> tuple[Outcome, tuple[str, ...]]:
    v = BuiltinRater(home="/home/u").rate(read(text, cwd=cwd, home="/home/u"), cwd=cwd)
    return v.outcome, tuple(f.rule_id for f in v.findings)


# --- printf and echo compute what bash writes ------------------------------------------------


_FMT_ALPHABET = [
    "%",
    "s",
    "d",
    "b",
    "c",
    "x",
    "5",
    ".",
    "2",
    "-",
    "*",
    "\\",
    "n",
    "t",
    "0",
    "1",
    "7",
    "u",
    "e",
    " ",
    "'",
    '"',
    "f",
    "g",
    "#",
    "+",
    "A",
    "?",
    "%%",
    "\\x4",
    "\\u00e9",
    "\\0101",
    "\\c",
    "i",
    "o",
]
_ARG_ALPHABET = [
    "a",
    "b c",
    "\\n",
    "\\c",
    "\\0101",
    "42",
    "-3",
    "0x1f",
    "010",
    "'A",
    "",
    "1.5",
    "x\\ty",
    "é",
    "%s",
]


@pytest.mark.slow
@needs_bash
def test_printf_and_echo_write_what_bash_writes() -> None:
    """Random formats, escapes and options: the reader's text equals real bash's, byte for byte,
    or the reader says it does not compute that form (never a different text)."""
    rng = random.Random(14)
    computed = 0
    for _ in range(400):
        fmt = "".join(rng.choice(_FMT_ALPHABET) for _ in range(rng.randint(1, 9)))
        args = [rng.choice(_ARG_ALPHABET) for _ in range(rng.randint(0, 4))]
        if rng.random() < 0.3:
            argv = [
                rng.choice(["-n", "-e", "-E", "-ne", "-en", "--", "-x"])
                for _ in range(rng.randint(0, 2))
            ]
            argv += [fmt, *args]
            real = subprocess.run(
                [BASH, "-c", 'echo "$@"', "_", *argv], capture_output=True, check=False
            ).stdout
            assert echo_output(argv) == real, argv
            computed += 1
            continue
        real = subprocess.run(
            [BASH, "-c", 'printf "$@"', "_", fmt, *args], capture_output=True, check=False
        ).stdout
        try:
            mine = printf_output([fmt, *args])
        except Unknown:
            continue
        assert mine == real, (fmt, args)
        computed += 1
    assert computed > 300


# Each static form, with the consumer replaced by `cat` so bash shows the very text it would feed.
_FORMS = [
    ("echo 'touch gatesh-marker' | sh", "echo 'touch gatesh-marker' | cat"),
    ("echo -e 'touch \\x67atesh-m\\0141rker' | sh", "echo -e 'touch \\x67atesh-m\\0141rker' | cat"),
    ("echo -n 'true' | bash", "echo -n 'true' | cat"),
    ("printf '%s %s\\n' touch gatesh-marker | sh", "printf '%s %s\\n' touch gatesh-marker | cat"),
    ("printf 'touch %b\\n' 'm\\x61rker' | sh", "printf 'touch %b\\n' 'm\\x61rker' | cat"),
    ("printf '%-6s|%03d\\n' ab 7 | sh", "printf '%-6s|%03d\\n' ab 7 | cat"),
    ("echo $'touch \\u0067m' | sh", "echo $'touch \\u0067m' | cat"),
    ("sh <<< 'touch gatesh-marker'", "cat <<< 'touch gatesh-marker'"),
    ("bash <<< \"$(printf 'touch a\\ntouch b')\"", "cat <<< \"$(printf 'touch a\\ntouch b')\""),
    (
        "cat <<'EOF' | bash\ntouch one\ntouch two\nEOF",
        "cat <<'EOF' | cat\ntouch one\ntouch two\nEOF",
    ),
    ("sh <(printf 'touch x\\n')", "cat <(printf 'touch x\\n')"),
    ("{ printf 'touch '; echo x; } | sh", "{ printf 'touch '; echo x; } | cat"),
    ("echo 'touch x' | tee /dev/null | sh", "echo 'touch x' | tee /dev/null | cat"),
]


@needs_bash
@pytest.mark.parametrize(("fed", "shown"), _FORMS, ids=[f for f, _ in _FORMS])
def test_fed_text_is_what_bash_feeds(fed: str, shown: str, tmp_path: Path) -> None:
    real = subprocess.run(
        [BASH, "-c", shown], capture_output=True, cwd=tmp_path, check=True
    ).stdout.decode()
    facts = read(fed, cwd=str(tmp_path))
    codes = [c.text for c in facts.code if c.text is not None]
    heredoc_read = [c for c in facts.commands if c.context is Context.HEREDOC]
    assert codes == [real] or (heredoc_read and not facts.code), (facts.code, real)
    expected = read(real.replace("\x00", ""), cwd=str(tmp_path))
    assert [w for _, w in _fed(facts)] == [c.words for c in expected.commands]


@pytest.mark.parametrize(
    ("text", "fed"),
    [
        ("printf 'git status\\n' | sh", [("git", ("git", "status"))]),
        ("echo 'git clean -fdx' | bash -s", [("git", ("git", "clean", "-fdx"))]),
        ("echo 'git status' | sudo bash -s -- a b", [("git", ("git", "status"))]),
        ("cat <<EOF | sh\ngit reset --hard\nEOF", [("git", ("git", "reset", "--hard"))]),
        ("sh /dev/stdin <<< 'make test'", [("make", ("make", "test"))]),
        (". /dev/stdin <<< 'make test'", [("make", ("make", "test"))]),
        ("source <(echo 'make test')", [("make", ("make", "test"))]),
        ("bash < <(echo 'make test')", [("make", ("make", "test"))]),
        ("yes 'make test' | sh", [("make", ("make", "test"))]),
        ("printf 'ma\\0ke test\\n' | sh", [("make", ("make", "test"))]),  # bash drops the NUL
    ],
)
def test_fed_commands_are_read(text: str, fed: list[tuple[str, tuple[str, ...]]]) -> None:
    facts = read(text)
    assert facts.readable, facts.unreadable
    assert _fed(facts) == fed, _cmds(facts)


@pytest.mark.parametrize(
    ("text", "read_as"),
    [
        ('eval "$(echo git status)"', ("git", "status")),
        ("eval \"$(printf 'g%st status' i)\"", ("git", "status")),
        ("sh -c \"$(printf 'git status')\"", ("git", "status")),
        ("bash -c `echo git status`", ("git", "status")),
    ],
)
def test_substitution_of_static_text_is_read_in_place(text: str, read_as: tuple[str, ...]) -> None:
    facts = read(text)
    assert read_as in [c.words for c in facts.commands], _cmds(facts)
    assert "eval" not in facts.heads and not facts.code


def test_a_script_file_on_the_input_is_read(tmp_path: Path) -> None:
    (tmp_path / "steps.txt").write_text("git status\nmake test\n")
    facts = read("bash < steps.txt", cwd=str(tmp_path))
    assert [w for _, w in _fed(facts)] == [("git", "status"), ("make", "test")]
    missing = read("bash < nothing.txt", cwd=str(tmp_path))
    assert missing.code and "nothing.txt" in missing.code[0].opaque


# --- opaque code ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "source", "says"),
    [
        ("./codegen | bash", CodeSource.PIPE, "bash runs the output of `./codegen`"),
        ("./gen | perl", CodeSource.PIPE, "perl runs the output of `./gen`"),
        ("sh < <(./gen)", CodeSource.PROCESS_SUBSTITUTION, "the output of `./gen`"),
        ("source <(./gen)", CodeSource.PROCESS_SUBSTITUTION, "the output of `./gen`"),
        ('eval "$(./gen)"', CodeSource.SUBSTITUTION, "the output of `./gen`"),
        ('sh -c "$(./gen)"', CodeSource.SUBSTITUTION, "the output of `./gen`"),
        ('echo "rm $X" | sh', CodeSource.PIPE, "values only known when it runs"),
        ("bash <<EOF\nrm $X\nEOF", CodeSource.HEREDOC, "values only known when it runs"),
        ("printf '%099999999d' 1 | sh", CodeSource.PIPE, "wider than a command may be"),
        ("grep '=' f.ini | source /dev/stdin", CodeSource.PIPE, "the output of `grep"),
        ("./gen | ssh host", CodeSource.PIPE, "on host"),
    ],
)
def test_code_gatesh_cannot_see_is_opaque(text: str, source: CodeSource, says: str) -> None:
    facts = read(text)
    opaque = [c for c in facts.code if c.opaque]
    assert opaque and opaque[0].source is source and says in opaque[0].opaque, facts.code
    outcome, rules = _rate(text)
    assert outcome is not Outcome.SAFE and "reader.opaque-code" in rules


def test_opaque_code_rating_says_why_and_what_to_do() -> None:
    v = BuiltinRater(home="/home/u").rate(read("./codegen | bash"), cwd="/tmp")
    f = next(f for f in v.findings if f.rule_id == "reader.opaque-code")
    assert f.outcome is Outcome.DESTRUCTIVE
    assert f.reason.startswith(
        "gatesh cannot see what this runs: bash runs the output of `./codegen`"
    )
    assert f.remedy == "run the commands themselves, written out, so the gate can read them"
    d = decide("./codegen | bash", cwd="/tmp", config=CONFIG, rung=Rung.AUTO)
    assert d.action is Action.REJECT and "gatesh cannot see what this runs" in d.message


@pytest.mark.parametrize(
    ("text", "by"),
    [
        ("rev <<< 'sutats tig' | sh", "rev"),
        ("echo 'git status' | tr a-z A-Z | bash", "tr"),
        ("base64 -d <<< Z2l0IHN0YXR1cwo= | sh", "base64"),
        ("echo 'X status' | sed 's/X/git/' | sh", "sed"),
        ("pwsh -EncodedCommand ZwBpAHQA", "base64"),
    ],
)
def test_known_text_transformed_on_its_way_is_obfuscation(text: str, by: str) -> None:
    facts = read(text)
    assert any(c.transformed == by for c in facts.code), facts.code
    assert _rate(text)[0] is Outcome.ATTACK


def test_unknown_text_transformed_is_opaque_not_obfuscation() -> None:
    facts = read("find . -name '*.bak' | sed 's/^/rm /' | sh")
    assert facts.code and not facts.code[0].transformed and facts.code[0].opaque
    assert (
        "obfuscation.transformed-code" not in _rate("find . -name '*.bak' | sed 's/^/rm /' | sh")[1]
    )


def test_data_on_an_interpreters_input_is_not_code() -> None:
    for text in (
        "cat data.csv | python3 -c 'import sys; print(len(sys.stdin.read()))'",
        "ls | perl -ne 'print if /x/'",
        "seq 3 | perl -e'@x=<>; print @x'",
        "find . | xargs -n1 php -l",
        'cat x | python -c"import sys"',
        "ls -1 | perl -l40pe0",
        "curl -s x.example | jq .",
    ):
        assert not read(text).code, text


def test_a_program_on_an_interpreters_input_is_read_as_its_code() -> None:
    facts = read("echo \"import shutil; shutil.rmtree('/etc')\" | python3")
    assert (
        facts.code[0].text == "import shutil; shutil.rmtree('/etc')\n" and not facts.code[0].opaque
    )
    assert facts.scripts and facts.scripts[0].path == "<stdin>"
    assert _rate("echo \"import shutil; shutil.rmtree('/etc')\" | python3")[0] is not Outcome.SAFE


# --- shells gatesh does not parse ---------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        'csh -c "rm -rf /"',
        'tcsh -c "mkfs.ext4 /dev/sdb"',
        "fish -c 'rm -rf ~'",
        "echo 'rm -rf ~' | fish",
        "pwsh -Command 'rm -rf ~'",
        "nu -c 'rm -rf ~'",
        "powershell -c 'rm -rf /'",
        "rc -c 'rm -rf ~'",
        "fish -c 'rm -rf ~; set x (ls)'",
    ],
)
def test_foreign_shell_code_is_read_for_hardline(text: str) -> None:
    facts = read(text)
    assert any(
        c.head in ("rm", "mkfs.ext4") and c.context is Context.FOREIGN for c in facts.commands
    ), _cmds(facts)
    for rung in (Rung.AUTO, Rung.BYPASS):
        assert decide(text, cwd="/tmp", config=CONFIG, rung=rung).stage is Stage.HARDLINE


@pytest.mark.parametrize(
    ("text", "opaque"),
    [
        ("fish -c 'git status; ls | wc -l'", False),
        ("csh -c 'make && make install'", False),
        ("echo \"echo 'tcsh is executed'\" | tcsh", False),
        ("nu -c 'ls'", False),
        ("fish -c 'set x (ls)'", True),
        ("csh -c 'rm !$'", True),
        ("fish -c 'ls > out'", True),
        ("pwsh -c 'echo x'", True),
        ("cmd /c dir", True),
        ("xonsh -c 'print x'", True),
    ],
)
def test_plain_commands_mean_the_same_in_every_shell_family(text: str, opaque: bool) -> None:
    """Plain words, quotes and ; | && || run the same programs in csh, fish, rc, nu … as in sh:
    gatesh reads those; anything else of a language it does not parse is opaque (PowerShell,
    cmd.exe and xonsh always: their plain words are cmdlets or Python)."""
    assert any(c.opaque for c in read(text).code) is opaque


@pytest.mark.parametrize(
    "text",
    [
        "pwsh -c 'Remove-Item -Recurse ~/src'",
        "fish path/to/script.fish",
        "xonsh -c 'print(1)'",
        "elvish -c 'put $x'",
        "nu --log-level info x.nu",
        "pwsh -InputFormat Text -File x.ps1",
        "fish -c 'set x (ls'",
    ],
)
def test_foreign_shell_code_is_never_safe(text: str) -> None:
    facts = read(text)
    assert facts.readable and any(c.opaque for c in facts.code), facts
    assert _rate(text)[0] is not Outcome.SAFE


def test_fish_code_that_is_no_sh_does_not_make_the_command_unreadable() -> None:
    facts = read("fish -c 'if test -d x; echo y; end'")
    assert facts.readable and facts.code[0].opaque


def test_foreign_shell_version_is_no_code() -> None:
    assert not read("fish --version").code and not read("pwsh -Version").code


# --- every name any layer treats as a shell or interpreter ---------------------------------------


@pytest.mark.parametrize("row", SHELL_ROWS, ids=[s.name for s in SHELL_ROWS])
def test_every_shell_is_unfolded_or_opaque(row) -> None:  # type: ignore[no-untyped-def]
    flag = "/c" if row.name == "cmd" else "-c"
    facts = read(f"{row.name} {flag} 'touch gatesh-marker'")
    if row.parsed:
        assert facts.heads == ("touch",), _cmds(facts)
    else:
        assert facts.commands[0].head == row.name and "touch" in facts.heads
        assert [c.command for c in facts.code if c.opaque] == (
            [] if row.shares_simple_commands else [0]
        )
        other = read(f"{row.name} {flag} 'touch (x) > y'")
        assert [c.command for c in other.code if c.opaque] == [0], other.code
    fed = read(f"./gen | {row.name}")
    assert [c.command for c in fed.code if c.opaque] == [1], (row.name, fed.code)


@pytest.mark.parametrize("row", INTERPRETER_ROWS, ids=[i.name for i in INTERPRETER_ROWS])
def test_every_interpreter_code_is_read_or_opaque(row) -> None:  # type: ignore[no-untyped-def]
    if row.program_operand:
        text = f"{row.name} 'BEGIN {{ x = 1 }}'"
    elif row.inline:
        opt = sorted(row.inline, key=len)[0]
        text = f"{row.name} {opt} 'x = 1'"
    else:
        text = f"echo 'x = 1' | {row.name}"
    facts = read(text)
    cmd = next(c for c in facts.commands if c.head == row.name)
    opaque = [c for c in facts.code if c.opaque]
    if row.modelled:
        assert not opaque and (
            "x = 1" in "".join(inline_code(cmd)) or facts.code[0].text == "x = 1\n"
        ), facts
    else:
        assert opaque, facts
    if row.stdin:
        assert any(c.opaque for c in read(f"./gen | {row.name}").code), row.name


# --- environment-setup generators ----------------------------------------------------------------

_GENERATED = {
    "pyenv-init": 'eval "$(pyenv init -)"',
    "pyenv-virtualenv-init": 'eval "$(pyenv virtualenv-init -)"',
    "version-manager-init": 'eval "$(rbenv init - zsh)"',
    "direnv-hook": 'eval "$(direnv hook bash)"',
    "ssh-agent": 'eval "$(ssh-agent -s)"',
    "brew-shellenv": 'eval "$(/opt/homebrew/bin/brew shellenv)"',
    "conda-hook": 'eval "$(conda shell.bash hook)"',
    "mamba-hook": 'eval "$(micromamba shell hook -s bash)"',
    "fnm-env": 'eval "$(fnm env --use-on-cd)"',
    "prompt-init": 'eval "$(starship init bash)"',
    "mise-activate": 'eval "$(mise activate bash)"',
    "thefuck-alias": 'eval "$(thefuck --alias)"',
    "opam-env": "eval $(opam env)",
    "luarocks-path": 'eval "$(luarocks path --bin)"',
    "keychain-eval": 'eval "$(keychain --eval id_ed25519)"',
    "dircolors": 'eval "$(dircolors -b)"',
    "lesspipe": 'eval "$(lesspipe)"',
    "coursier-java": 'eval "$(cs java --jvm 17 --env)"',
    "poetry-env-activate": 'eval "$(poetry env activate)"',
    "pixi-shell-hook": 'eval "$(pixi shell-hook)"',
    "fzf-shell": 'eval "$(fzf --bash)"',
    "completion": "source <(kubectl completion bash)",
    "completion-subcommand": 'eval "$(uv generate-shell-completion bash)"',
    "argcomplete": 'eval "$(register-python-argcomplete my-tool)"',
}


def test_every_generator_row_has_an_example() -> None:
    assert set(_GENERATED) == {g.id for g in GENERATOR_ROWS}
    assert all(g.reason for g in GENERATOR_ROWS)


@pytest.mark.parametrize(("row", "text"), sorted(_GENERATED.items()))
def test_environment_setup_is_a_row_not_dynamic_code(row: str, text: str) -> None:
    facts = read(text)
    assert [c.generator for c in facts.code] == [row]
    assert decide(text, cwd="/tmp", config=CONFIG, rung=Rung.AUTO).allowed


@pytest.mark.parametrize(
    "text",
    [
        'eval "$(pyenv init - ; ./x)"',
        'eval "$(pyenv install 3.12)"',
        'eval "$(curl completion bash)"',
        'eval "$(./pyenv init -)x"',
        "source <(kubectl get secret x)",
        'eval "$(ssh-agent -s | sed s/x/y/)"',
    ],
)
def test_other_output_fed_to_a_shell_stays_opaque(text: str) -> None:
    assert not any(c.generator for c in read(text).code)
    assert not decide(text, cwd="/tmp", config=CONFIG, rung=Rung.AUTO).allowed


def test_a_shell_name_given_to_a_generator_is_no_escape() -> None:
    for text in ("kubectl completion bash", "gh completion -s zsh", "direnv hook fish"):
        assert generator(text.split()[0], text.split()[1:]) is not None
        assert "escape.shell-argument" not in _rate(text)[1], text


# --- bad input: bounded time, a clear rating, no traceback ---------------------------------------


def _bounded(text: str, *, harmful: bool = True) -> None:
    start = time.process_time()
    for rung in (Rung.AUTO, Rung.BYPASS):
        d = decide(text, cwd="/tmp", config=CONFIG, rung=rung)
        assert d.stage is not Stage.ERROR, d.reason
        if rung is Rung.AUTO and harmful:
            assert d.action is not Action.ALLOW, (text[:80], d.reason)
    assert time.process_time() - start < 10


def _nested(levels: int, opener: str) -> str:
    """Fed code nested ``levels`` deep, growing linearly (each level its own heredoc delimiter)."""
    heads = "".join(opener.format(n=n) + "\n" for n in range(levels))
    tails = "".join(f"E{n}\n" for n in reversed(range(levels)))
    return heads + "touch x\n" + tails


@pytest.mark.parametrize("opener", ["sh <<'E{n}'", "cat <<'E{n}' | bash", "bash -s <<'E{n}'"])
def test_deeply_nested_fed_code_is_bounded(opener: str) -> None:
    text = _nested(60, opener)
    _bounded(text)
    facts = read(text)
    assert not facts.readable and "too deep" in facts.unreadable


def test_huge_printf_format_is_bounded() -> None:
    start = time.process_time()
    with pytest.raises(Unknown):
        printf_output(["%s" * (512 * 1024), *(["x"] * 10)] + ["y" * 1024] * 200)
    with pytest.raises(Unknown):
        printf_output(["x" * (1024 * 1024)])
    assert len(printf_output(["%.3s\\n", "abcdef"] * 1)) < MAX_OUTPUT
    assert time.process_time() - start < 5
    _bounded("printf '%0999999999999d' 1 | sh")
    _bounded("printf '%s%s%s%s%s%s%s%s' " + " ".join(["x" * 4000] * 8) + " | sh", harmful=False)
    _bounded("printf '%*d' 99999999 1 | bash")


def test_nul_inside_fed_text_is_dropped_as_bash_drops_it() -> None:
    facts = read("printf 'to\\0uch x\\n' | sh")
    assert ("touch", ("touch", "x")) in _fed(facts)
    assert any("NUL" in n for n in facts.notes)
    _bounded("printf 'r\\0m -rf ~\\n' | sh")


@pytest.mark.parametrize(
    "text",
    [
        "bash <<'E'\nr\x00m -rf ~\nE",
        "sh <<< 'rm -rf \x00~'",
        "printf 'rm -rf ~\x00\\n' | sh",
        "echo 'touch x' | bash -s \x00",
    ],
)
def test_a_nul_byte_in_fed_text_is_a_clear_refusal(text: str) -> None:
    """A NUL byte written into the text itself (not a printf escape) cannot reach bash intact:
    the command is unreadable, refused at auto with the reason, and never an internal error."""
    _bounded(text)
    d = decide(text, cwd="/tmp", config=CONFIG, rung=Rung.AUTO)
    assert d.rule_id == "reader.unreadable" and "NUL" in d.reason, d.reason


@pytest.mark.slow
def test_a_1mib_printf_format_fed_to_a_shell_is_rated() -> None:
    """Past the reader's 64 KiB limit the command is unreadable and rated so, at every rung,
    with the reason in words; hardline's raw-text rules still run over all of it."""
    text = "printf '" + "%s" * (512 * 1024) + "' x | sh"
    d = decide(text, cwd="/tmp", config=CONFIG, rung=Rung.AUTO)
    assert (
        d.action is not Action.ALLOW and d.rule_id == "reader.unreadable" and "too long" in d.reason
    ), d.reason
    assert decide(text, cwd="/tmp", config=CONFIG, rung=Rung.BYPASS).stage is not Stage.ERROR
    harmful = "printf '" + "%s" * (512 * 1024) + " rm -rf ~\\n' | sh"
    for rung in (Rung.AUTO, Rung.BYPASS):
        d = decide(harmful, cwd="/tmp", config=CONFIG, rung=rung)
        assert d.stage is Stage.HARDLINE and d.rule_id == "hardline.rm-root", (
            rung,
            d.stage,
            d.reason,
        )


@pytest.mark.parametrize(
    "text",
    [
        "printf 'rm -rf ~\\n' | sh",
        "echo -e 'rm -rf /\\tx' | bash",
        "printf 'cd /tmp\\nrm -rf $HOME\\n' | sh",
    ],
)
def test_fed_text_past_the_read_limit_still_meets_hardline(text: str) -> None:
    """Padded past 64 KiB the reader cannot unfold the fed text; hardline's raw-text views read
    its \\n and \\t as the newline and tab printf and echo -e make of them, at every rung."""
    padded = text + " # " + "x" * (66 * 1024)
    d = decide(padded, cwd="/tmp", config=CONFIG, rung=Rung.BYPASS)
    assert d.stage is Stage.HARDLINE and not d.allowed, (d.stage, d.reason)
