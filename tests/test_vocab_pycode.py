"""gatesh.vocab.pycode: which Python programs the builtin knows whole, and the files they open."""

from __future__ import annotations

import pytest

from gatesh.vocab.pycode import FileUse, file_uses, modelled, run_lines

MODELLED = (
    "print(list(memoryview(b'abc')))",
    "from decimal import Decimal; print(Decimal('-0').is_signed())",
    "import json, sys\nd = json.load(sys.stdin)\nprint(json.dumps(d, indent=2))",
    "import os\nprint(os.path.exists('x'), os.listdir('.'))",
    "with open('django/contrib/auth/backends.py', 'r') as f:\n    print(f.read())",
    "p = 'a.py'\nc = open(p).read().replace('x', 'y')\nwith open(p, 'w') as f:\n    f.write(c)",
    "class C:\n    def __repr__(self):\n        return type(self).__name__\nprint(C())",
)
NOT_MODELLED = (
    "import os\nos.system('x')",
    "import os as o\no.system('x')",
    "import os\nx = os\nx.system('y')",
    "from os import system",
    "import inspect\ninspect.os.system('x')",
    "import random\nrandom._os.system('x')",
    "().__class__.__bases__[0].__subclasses__()",
    "import sys\nsys.modules['os'].system('x')",
    "import sys\nsys._getframe().f_globals",
    "import django",
    "from . import x",
    "import pathlib\npathlib.Path('x').write_text('y')",
    "eval('1')",
    "f = open\nf('x', 'w')",
    "import io\nio.open(name, 'w')",
    "open(name)",
    "open('x', mode)",
    "import os\nprint(os.environ['HOME'])",
    "import pickle",
    "def (",
)


@pytest.mark.parametrize("code", MODELLED)
def test_programs_the_builtin_knows_whole(code: str) -> None:
    assert modelled(code) is not None


@pytest.mark.parametrize("code", NOT_MODELLED)
def test_programs_with_an_effect_it_does_not_model(code: str) -> None:
    assert modelled(code) is None


def test_the_files_a_program_opens_by_name_with_their_direction() -> None:
    code = "p = 'src/a.py'\nc = open(p).read()\nwith open(p, 'w') as f:\n    f.write(c)\nopen('log', 'a+')"
    assert set(file_uses(code)) == {
        FileUse("src/a.py", writes=False, replaces=False),
        FileUse("src/a.py", writes=True, replaces=True),
        FileUse("log", writes=True, replaces=False),
    }
    assert modelled(code) is not None and set(modelled(code) or ()) == set(file_uses(code))
    # a name assigned twice, or bound by a loop, is not spelled out
    assert file_uses("p = 'a'\np = 'b'\nopen(p)") == ()
    assert file_uses("for p in ['a']:\n    open(p, 'w')") == ()


RUN_LINES = (
    # a name bound once to a list argv, run by subprocess: that command line
    (
        "import subprocess\ncmd = ['ffmpeg', '-i', 'a.mp4']\nsubprocess.run(cmd, text=True)",
        ["ffmpeg -i a.mp4"],
    ),
    # the program a library ships, and which(): that program; a computed word is $VALUE
    (
        "import imageio_ffmpeg as f\nimport subprocess\nexe = f.get_ffmpeg_exe()\n"
        "subprocess.run([exe, '-t', str(n), 'out file.mp4'])",
        ["ffmpeg -t $VALUE 'out file.mp4'"],
    ),
    (
        "import subprocess as sp, shutil\nsp.check_output([shutil.which('git'), 'status'])",
        ["git status"],
    ),
    ("from os import system\nline = 'make test'\nsystem(line)", ["make test"]),
    ("import subprocess\nsubprocess.run(args=('ls', '-l'))", ["ls -l"]),
)
NOT_RUN_LINES = (
    "import subprocess\ncmd = ['ls']\ncmd.insert(0, 'rm')\nsubprocess.run(cmd)",  # changed later
    "import subprocess\ncmd = ['ls']\nfix(cmd)\nsubprocess.run(cmd)",  # passed on: may change
    "import subprocess\ncmd = ['rm']\ncmd = ['ls']\nsubprocess.run(cmd)",  # bound twice
    "import subprocess\nsubprocess.run([exe, 'x'])",  # the program is not known
    "import subprocess\nsubprocess.run(['a', *rest])",  # how many words, not known
    "import subprocess\nc = ['ls']\nsubprocess.run(c, shell=True)",  # a shell line's first word
    "import subprocess\nsubprocess = x\nsubprocess.run(['ls'])",  # not surely the module
    "import shutil as s\ns = 1\nimport subprocess\nsubprocess.run([s.which('rm'), '-rf'])",
    "import os\nos.system(input())",
    "not python at all (",
)


@pytest.mark.parametrize(("code", "lines"), RUN_LINES)
def test_commands_the_text_spells_out_through_names(code: str, lines: list[str]) -> None:
    got = run_lines(code)
    assert sorted(got.values()) == sorted(lines)
    for at in got:  # keyed by where the call starts, as the code rules find it
        assert code[at:].split("(", 1)[0].rsplit(".", 1)[-1] in (
            "run",
            "check_output",
            "system",
        )


@pytest.mark.parametrize("code", NOT_RUN_LINES)
def test_commands_not_known_before_they_run(code: str) -> None:
    assert run_lines(code) == {}
