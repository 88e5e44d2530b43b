"""A src root that is one module (``src = ["parse.py"]``, parse's layout) is
imported from its parent in the gate's reference tree, as the test command imports it
from the checkout: an honest change to it passes the whole gate, its reference run
included. Real git repositories and real ``oracle-guard ci`` runs; nothing is mocked.
"""
from __future__ import annotations

import pytest

from builders.ci_repo import adopt
from builders.ci_repo import PYTEST

# The reference run is what this judges.
pytestmark = pytest.mark.reference_run

PYPROJECT = '''\
[project]
name = "calc"
version = "0.1"

[tool.oracle-guard]
src = ["calc.py"]
tests = ["tests/"]
properties = ["tests/test_props.py"]
'''
PROJECT = {
    'calc.py': 'def add(a, b):\n    return a + b\n',
    'tests/test_calc.py': 'from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n',
    'tests/test_props.py': '''\
        from calc import add


        def test_add_commutes():
            for a in range(5):
                for b in range(5):
                    assert add(a, b) == add(b, a)
        ''',
}


def test_an_honest_change_to_a_single_module_src_root_passes_the_reference_run(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = adopt(str(tmp_path / 'repo'), PYPROJECT, PROJECT)
    repo.pull_request({
        'calc.py': 'def add(a, b):\n    return a + b\n\n\ndef double(a):\n    return add(a, a)\n',
        'tests/test_calc.py': 'from calc import add, double\n\n\ndef test_add():\n'
                              '    assert add(2, 3) == 5\n\n\ndef test_double():\n'
                              '    assert double(2) == 4\n'}, bug=False)
    plain, ci = repo.both(PYTEST)
    assert plain.rc == 0, plain.out
    assert not [line for line in ci.out.splitlines() if ': OG' in line], ci.out
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 0', ci.out
