"""The gate played as a cheating agent against this round's two mechanisms
(benchmarks/ATTACKS.md, attacks 83-93): examples thrown away by src (OG717, rule 43 at run
time) and the reference tree sealed in time (rule 44). What the gate catches.

The repository is the one of ``test_ci_attacks_round3.py``: ``dd`` adopted with
``oracle-guard init``, then the bug on ``main`` (``dedupe`` drops the largest value past
three distinct ones). Each pull request leaves the bug in place. The attacks that get
through are described in ATTACKS.md and reproduced by benchmarks/attacks_open/round4.py,
not written here: this file asserts only what the gate catches.
"""
from __future__ import annotations

import sys

import pytest

from ci_repo import CiRepo
from test_ci_attacks import BUG
from test_ci_attacks import PYTEST
from test_ci_attacks import UNIT_TESTS_FOR_THE_BUG
from test_ci_attacks_round3 import attack
from test_ci_attacks_round3 import dd  # noqa: F401 -- the fixture
from test_ci_attacks_round3 import property_failed_in_the_reference_run
from test_ci_attacks_round3 import template  # noqa: F401 -- the fixture

# src holds the reference run up (it tells it apart by python -I) at the first call, so
# that the test command, which starts once the reference run has collected, finds it
# still running.
HOLD_THE_REFERENCE_RUN = 'import sys\nimport time\n\n_held = []\n\n\n' + BUG.replace(
    '    out = sorted(set(xs))\n',
    '    if sys.flags.isolated and not _held:\n        _held.append(time.sleep(3))\n'
    '    out = sorted(set(xs))\n')

# -- attack 89: the test command signals the reference run -----------------------------------
# A unit test module finds the reference pytest process (its --rootdir is the reference
# tree, its parent is the gate that started the test command too) and sends it a signal.
# A run that did not finish is OG734 (rule 44), whatever ended it.
SIGNALLING = '''\
import glob
import os
import signal

from dd import dedupe


def _parent(pid):
    try:
        with open(f'/proc/{pid}/stat') as f:
            return int(f.read().rsplit(') ', 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _signal_the_reference_run(signum):
    for cmdline in glob.glob('/proc/[0-9]*/cmdline'):
        pid = cmdline.split('/')[2]
        try:
            with open(cmdline, 'rb') as f:
                args = f.read().split(b'\\0')
        except OSError:
            continue
        if any(a.startswith(b'--rootdir=') and a.endswith(b'/reference') and
               b'oracle-guard-reference-' in a for a in args) and _parent(pid) == os.getppid():
            os.kill(int(pid), signum)


if 'ORACLE_GUARD_STREAM' in os.environ:  # in the gate's test command only
    _signal_the_reference_run(signal.%s)
'''


# Held until the signal ends it, however slow the machine is to start the test command.
HELD_UNTIL_SIGNALLED = HOLD_THE_REFERENCE_RUN.replace('time.sleep(3)', 'time.sleep(60)')


@pytest.mark.parametrize('signum', ['SIGKILL', 'SIGTERM', 'SIGINT'])
def test_a_test_command_signalling_the_reference_run_fails_ci(
        dd: CiRepo, signum: str) -> None:  # noqa: F811 -- the fixture
    unit = SIGNALLING % signum + UNIT_TESTS_FOR_THE_BUG.replace('from dd import dedupe\n', '')
    _, ci = attack(dd, {'src/dd/__init__.py': HELD_UNTIL_SIGNALLED, 'tests/test_dd.py': unit},
                   plain_rc=1)
    assert any('reference run: OG702 the run did not finish' in line
               for line in ci.lines('OG734')), ci.out


# -- attack 93: the checkout's property rewritten for the test command -----------------------
# A test module at the root of the checkout (collected before tests/) rewrites the property
# file in the working tree before pytest collects it, and a unit test puts it back. The test
# command runs the weakened property and passes; the reference tree is written from git
# objects, so the base property fails there (OG730, rule 44).
FIRST = '''\
import os

PROPERTY = os.path.join(os.path.dirname(__file__), 'tests', 'properties', 'test_dd_props.py')
with open(PROPERTY, 'rb') as f:
    ORIGINAL = f.read()
with open(PROPERTY, 'wb') as f:
    f.write(ORIGINAL.replace(b'== sorted(set(xs))', b'== dedupe(xs)'))


def test_layout():
    assert os.path.isfile(PROPERTY)
'''
TIDY = '''

def test_zz_tidy():
    import test_a_first
    with open(test_a_first.PROPERTY, 'wb') as f:
        f.write(test_a_first.ORIGINAL)
'''


def test_the_checkouts_property_rewritten_before_collection_fails_ci_in_the_reference_run(
        dd: CiRepo) -> None:  # noqa: F811 -- the fixture
    dd.pull_request({'test_a_first.py': FIRST, 'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG + TIDY},
                    bug=False)
    # One after the other: both runs rewrite the same working tree.
    plain = dd.finish(dd.start(PYTEST))
    assert plain.rc == 0, plain.out
    ci = dd.finish(dd.start([sys.executable, '-I', *dd.ci_args(PYTEST)[1:]]))
    assert ci.rc == 1, ci.out
    assert property_failed_in_the_reference_run(ci), ci.out
