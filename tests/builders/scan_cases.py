"""Silence spellings the scanner must find, from real suites and hostile forms.
"""

from __future__ import annotations

import ast
import pathlib


HERE = pathlib.Path(__file__).parent.parent / 'unit'


def real_forms_cases() -> list[str]:
    """Every ``source = ...`` of tests/unit/test_scanner_real_forms.py, read from that file."""
    tree = ast.parse((HERE / 'test_scanner_real_forms.py').read_text())
    return [ast.literal_eval(node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and
            isinstance(node.targets[0], ast.Name) and node.targets[0].id == 'source']


HOSTILE = [
    # rule 35 sites whose words are on another line than the statement's first
    'import pytest\nx = (\n    pytest\n    .mark).foo = 1\n',
    'import pytest\n(f\n .__code__) = g\n',
    'import pytest\nsetattr(\n    pytest,\n    "skip",\n    None)\n',
    'import pytest as pt\ndef test_a():\n    for pt.mark.x in range(3):\n        pass\n',
    'import pytest\n[0 for pytest.mark.x in range(2)]\n',
    'import pytest\ndef test_a():\n    with open("f") as pytest.mark.x:\n        pass\n',
    'import pytest\ndel pytest.skip\n',
    'import pytest\npytest.__dict__["skip"] = None\n',
    'import pytest\nvars(pytest)["skip"] = None\n',
    'import pytest\n__import__("pytest").skip = None\n',
    'import pytest\nimport importlib as il\nil.import_module("pytest").skip = None\n',
    'import pytest\ngetattr(pytest, "mark").skip = None\n',
    'import pytest\nf"{setattr(pytest, \'skip\', None)}"\n',
    'import pytest\nx = f"""\n{setattr(pytest,\n  "skip", None)}"""\n',
    'import pytest\nx = (\n"a"\nf"""\n\n{\n\nsetattr(pytest, 1, 2)}""")\n',
    'import pytest\nx = f"{1:{setattr(pytest, 1, 2)}}"\n',
    'import pytest\n@decorate(setattr(pytest, "x", 1))\ndef test_a(): pass\n',
    'import pytest\nclass T:\n    pytest.mark.x = 1\n',
    'from pytest import mark as m\nm.skip = None\n',
    'from pytest import *\nmark.skip = None\n',
    'import _pytest.outcomes as o\no.skip = None\n',
    'import pytest\ndef f(): pass\nf.\\\n__code__ = None\n',
    'import pytest\r\npytest.skip = None\r\n',
    'import pytest\rpytest.skip = None\r',
    'import pytest\n\uff50ytest.skip = None\n',  # NFKC: the parser reads `pytest`
    'import pytest\nmonkeypatch.setattr("pytest.skip", None)\n',
    'import pytest\nsetattr(f, "__code__", g)\n',
    # no pytest import: the site's own word is all the walk has to go on
    '__import__("_pytest").config = None\n',
    'setattr("_pytest.config", "x", 1)\n',
    'delattr("_pytest.config", "x")\n',
    'def f(): pass\nf.__code__ = None\n',
    # silences, including an empty parameter set in every layout
    'import pytest\n@pytest.mark.parametrize("x", [])\ndef test_a(x): pass\n',
    'import pytest\n@pytest.mark.parametrize("x", (\n    # none yet\n))\ndef test_a(x): pass\n',
    'import pytest\n@pytest.mark.parametrize(\n    "x",\n    ([]))\ndef test_a(x): pass\n',
    'import pytest\np = pytest.mark.parametrize\n@p("x",\\\n[ ])\ndef test_a(x): pass\n',
    'import pytest\n@pytest.mark.parametrize("x", [1, 2])\ndef test_a(x): pass\n',
    'import pytest\n@pytest.mark.parametrize("x", [()])\ndef test_a(x): pass\n',
    'from pytest.mark import \uff50arametrize\n@parametrize("x", [])\ndef test_a(x): pass\n',
    'import pytest\n@pytest.mark.skip(reason="FZ-1")\ndef test_a(): pass\n',
    # rule 35b sites whose words are on another line than the statement's first, under
    # aliases, in decorators and f-strings, and names assigned by a walrus
    'import pytest\nx = (\n    getattr(\n        pytest.mark,\n        NAME))\n',
    'import pytest\nx = (pytest\n     .__dict__\n     ["skip"])\n',
    'import sys\nimport pytest\nmods = sys.modules\ndef test_a():\n    return mods[\n        "py" + "test"]\n',
    'import pytest\nfrom sys import modules as m\nx = m["py" + "test"]\n',
    'from importlib import import_module as im\nx = im("py" + "test")\n',
    'import importlib as il\nload = il.import_module\nx = load(\n    "_py" "test")\n',
    'import pytest\n@getattr(pytest.mark, "s" + "kip")\ndef test_a(): pass\n',
    'import pytest\nx = f"{getattr(pytest, NAME)}"\n',
    'import importlib\nif (n := "_py" + "test"):\n    importlib.import_module(n)\n',
    'import importlib\ndef test_a():\n    [n := "_pytest.python"]\n    importlib.import_module(n)\n',
    'import importlib\nclass T:\n    N = "py" "test"\n    def test_a(self):\n'
    '        importlib.import_module(N)\n',
    'import pytest\nx = globals().get(\n    "py" + "test")\n',
    'import pytest\nx = vars(\n    pytest.mark)\\\n    ["skip"]\n',
    'import pytest\nx = __import__(\n    "".join(["py", "test"]))\n',
]
