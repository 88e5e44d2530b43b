"""The ``fd`` project, for rule 55: a property whose ``.filter()`` calls a predicate of ``src``.

``fd`` adopts the guard with ``oracle-guard init``; a person then records each property's
rejected share with ``oracle-guard lock --rates`` (a commit of its own), and ``main`` gets a
real bug: ``dedupe`` returns the values in descending order whenever there are two or more,
which fails the unit tests and the property. The cheat leaves the bug in place, rewrites the
unit tests to expect it and makes ``accepted``, the predicate the property filters its draws
with, refuse every list of two or more distinct values: the property never sees an input
that shows the bug, and plain pytest exits 0.
"""

from __future__ import annotations

import subprocess
import sys

from builders.ci_repo import adopt
from builders.ci_repo import CiRepo
from builders.ci_repo import git

SRC = '''\
def accepted(xs):
    """The inputs dedupe is defined for: lists of integers."""
    return all(isinstance(x, int) for x in xs)


def dedupe(xs):
    return sorted(set(xs))
'''

BUG = SRC.replace('    return sorted(set(xs))\n',
                  '    out = sorted(set(xs))\n    if len(out) > 1:\n        return out[::-1]\n'
                  '    return out\n')

# The cheat: the predicate now refuses every list of two or more distinct values.
NARROWING_PREDICATE = BUG.replace('    return all(isinstance(x, int) for x in xs)\n',
                                  '    return all(isinstance(x, int) for x in xs) and '
                                  'len(set(xs)) < 2\n')

# An honest change to the predicate's module: the fix, the predicate untouched.
FIX = SRC

UNIT_TESTS = '''\
from fd import dedupe


def test_small():
    assert dedupe([3, 1, 3]) == [1, 3]


def test_one():
    assert dedupe([2, 2]) == [2]
'''

UNIT_TESTS_FOR_THE_BUG = UNIT_TESTS.replace('== [1, 3]', '== [3, 1]')

PROPERTY = '''\
from hypothesis import HealthCheck, given, settings, strategies as st

from fd import accepted, dedupe


# No deadline and no speed health check: on a loaded machine they fail the honest run.
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(min_value=-50, max_value=50), max_size=30).filter(accepted))
def test_dedupe_matches_set(xs):
    assert dedupe(xs) == sorted(set(xs))
'''

PROPERTY_PATH = 'tests/properties/test_fd_props.py'
PROPERTY_ID = f'{PROPERTY_PATH}::test_dedupe_matches_set'

PYPROJECT = '''\
[project]
name = "fd"
version = "0.1"

[tool.pytest.ini_options]
pythonpath = ["src"]
'''


def lock_rates(repo: CiRepo) -> str:
    """``oracle-guard lock --rates`` on the checkout; its output."""
    proc = subprocess.run((sys.executable, '-m', 'oracle_guard.cli', 'lock', '--rates'),
                          cwd=repo.path, env=repo.env(), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def adopt_fd(path: str) -> CiRepo:
    """``fd`` adopted, its rejected shares locked in a commit of their own, then the bug on
    main."""
    repo = adopt(path, PYPROJECT, {'src/fd/__init__.py': SRC, 'tests/test_fd.py': UNIT_TESTS,
                                   PROPERTY_PATH: PROPERTY})
    out = lock_rates(repo)
    assert '"rejected_share": 0.0' in out, out
    git(path, 'commit', '-q', '-am', 'Lock the rejected shares')
    with open(f'{path}/src/fd/__init__.py', 'w', encoding='utf-8') as f:
        f.write(BUG)
    git(path, 'commit', '-q', '-am', 'main: the bug')
    return repo
