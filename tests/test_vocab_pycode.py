"""gatesh.vocab.pycode: which Python programs the builtin knows whole, and the files they open."""

from __future__ import annotations

import pytest

from gatesh.vocab.pycode import FileUse, file_uses, modelled

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
