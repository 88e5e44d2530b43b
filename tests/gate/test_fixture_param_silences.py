"""A ``skipif`` on a param of a fixture (``@pytest.fixture(params=[pytest.param(...,
marks=pytest.mark.skipif(...))])``, exceptiongroup's ``patched`` fixture) marks every test
that uses the fixture. Accepted at adoption (an environment condition here), it stops
neither the plugin's session nor the gate: an honest change passes with 0 findings. Real
git repositories and real ``oracle-guard ci`` runs; nothing is mocked.
"""
from __future__ import annotations

import pytest

from builders.ci_repo import adopted_with

# The honest change touches src/: it must pass the whole gate, its reference run included.
pytestmark = pytest.mark.reference_run

FIXTURE_PARAMS = '''\
import sys

import pytest

from calc import add


@pytest.fixture(
    params=[
        pytest.param(1, id="one"),
        pytest.param(
            2,
            id="two",
            marks=[pytest.mark.skipif(sys.version_info >= (3, 0),
                                      reason="not on Python 3")],
        ),
    ],
)
def step(request):
    return request.param


def test_add_step(step):
    assert add(step, 0) == step


def test_add_step_twice(step):
    assert add(step, step) == 2 * step
'''
HONEST_SRC = ('def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n\n\n'
              'def double(a):\n    return add(a, a)\n')


def test_a_skipif_on_a_fixture_param_passes_the_gate_on_an_honest_change(tmp_path) -> None:
    repo = adopted_with(str(tmp_path / 'r'), {'tests/test_steps.py': FIXTURE_PARAMS})
    repo.pull_request({'src/calc/__init__.py': HONEST_SRC}, bug=False)
    ci = repo.ci()
    assert ci.rc == 0, ci.out
    assert not [line for line in ci.out.splitlines() if ': OG' in line], ci.out
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 0', ci.out
