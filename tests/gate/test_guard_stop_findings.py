"""One cause, one finding: what the oracle-guard plugin itself does to a run is named once,
and what follows from it is not reported again as a forged run.

* A property the lock check refuses (here: a Hypothesis property of the base with no lock
  entry) fails that test in both runs; the gate names it once (OG711), and the reference
  run's failure of it is not blamed on ``src``. Before, the plugin stopped the session:
  OG716, OG723 and a "forged run" OG724 for each canary that never ran.
* A new property the pull request adds without its lock entry is the hooks' OG601; the
  plugin's failure of that test is not a second finding.
* A silence the plugin stops the session for (a skip mark built at run time, which no hook
  reads) is OG716 with its reason; the canaries that did not run and the stopped session
  are folded under it (no OG723, no OG724), and the gate still fails.
Real git repositories and real ``oracle-guard ci`` runs; nothing is mocked.
"""
from __future__ import annotations

from builders.ci_repo import adopted_with
from builders.ci_repo import build_template
from builders.ci_repo import copy_template

PROPERTY = '''\
from hypothesis import given, strategies as st

from calc import add


@given(st.integers(), st.integers())
def test_add_commutes_for_all(a, b):
    assert add(a, b) == add(b, a)
'''
HONEST_SRC = ('def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n\n\n'
              'def double(a):\n    return add(a, a)\n')
HIDDEN_SKIP = '''\
import pytest

from calc import add

pytestmark = getattr(pytest.mark, "s" + "kip")


def test_add_again():
    assert add(2, 3) == 5
'''
CASCADE = ('OG716', 'OG723', 'OG724', 'OG725', 'OG730', 'OG702')


def test_an_unlocked_property_is_one_finding_and_no_forged_run(tmp_path) -> None:
    repo = adopted_with(str(tmp_path / 'r'), {'tests/properties/test_all.py': PROPERTY})
    repo.pull_request({'src/calc/__init__.py': HONEST_SRC}, bug=False)
    ci = repo.ci()
    assert ci.rc == 1, ci.out
    named = ci.lines('OG711')
    assert len(named) == 1, ci.out
    assert ('tests/properties/test_all.py::test_add_commutes_for_all: unlocked property: '
            'test_add_commutes_for_all has no entry') in named[0], ci.out
    assert '`oracle-guard lock`' in ci.out, ci.out
    for code in CASCADE:
        assert not ci.lines(code), f'{code}:\n{ci.out}'


def test_the_plugins_own_stop_is_named_once_and_the_gate_still_fails(tmp_path) -> None:
    repo = copy_template(build_template(str(tmp_path / 'template')), str(tmp_path / 'r'))
    repo.pull_request({'tests/test_again.py': HIDDEN_SKIP})
    ci = repo.ci()
    assert ci.rc == 1, ci.out
    stopped = ci.lines('OG716')
    assert len(stopped) == 1, ci.out
    assert 'tests/test_again.py::test_add_again: @pytest.mark.skip without a freeze id' in \
        stopped[0], ci.out
    for code in ('OG723', 'OG724', 'OG725'):
        assert not ci.lines(code), f'{code}:\n{ci.out}'


NEW_PROPERTY = '''\
from hypothesis import given, strategies as st

from calc import add


@given(st.integers())
def test_add_zero(a):
    assert add(a, 0) == a
'''


def test_a_new_unlocked_property_is_the_hooks_one_finding(tmp_path) -> None:
    repo = copy_template(build_template(str(tmp_path / 'template')), str(tmp_path / 'r'))
    # A new property test outside the properties folder: a file added under it would be
    # an oracle change to approve as well (rule 56), a second cause.
    repo.pull_request({'tests/test_new_props.py': NEW_PROPERTY}, bug=False)
    ci = repo.ci()
    assert ci.rc == 1, ci.out
    found = [line for line in ci.out.splitlines() if ': OG' in line]
    assert len(found) == 1 and found[0].startswith(
        'tests/test_new_props.py:7:1: OG601 unlocked property: test_add_zero'), ci.out
