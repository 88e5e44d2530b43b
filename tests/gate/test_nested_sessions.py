"""A pytest plugin's own suite runs pytest sessions of its own (``pytester``, in process
and in a subprocess), in temporary folders outside the checkout. Under ``oracle-guard ci``
those sessions are the suite's subject: they record nothing and get no canaries, so
their outcomes are what the suite expects and the gate counts the outer run only. Real
git repositories and real ``oracle-guard ci`` runs; nothing is mocked.
"""
from __future__ import annotations

import pytest

from builders.ci_repo import adopted_with

# The honest change touches src/: it must pass the whole gate, its reference run included.
pytestmark = pytest.mark.reference_run

INNER_SESSIONS = '''\
def test_an_inner_session_reports_its_own_failure(pytester):
    pytester.makepyfile(test_subject='def test_fails():\\n    assert 1 == 2\\n')
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)


def test_an_inner_subprocess_session_reports_its_own_pass(pytester):
    pytester.makepyfile(test_subject='def test_passes():\\n    assert 1 == 1\\n')
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1)
'''
HONEST_SRC = ('def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n\n\n'
              'def double(a):\n    return add(a, a)\n')


def test_a_plugin_suite_with_pytester_sessions_passes_the_gate_on_an_honest_change(
        tmp_path) -> None:
    repo = adopted_with(str(tmp_path / 'r'), {'conftest.py': 'pytest_plugins = ["pytester"]\n',
                                              'tests/test_inner.py': INNER_SESSIONS})
    repo.pull_request({'src/calc/__init__.py': HONEST_SRC}, bug=False)
    ci = repo.ci()
    assert ci.rc == 0, ci.out
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 0', ci.out
