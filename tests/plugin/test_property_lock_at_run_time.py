"""The plugin and the static readers agree on what a property is, and a property the lock
check refuses fails that test only.

A repository adopted with the README's commands (``oracle-guard init``) whose Hypothesis
tests take every shape the plugin collects: inside ``try: import hypothesis / except
ImportError / else:``, methods of classes, a unittest case, a parametrized test, a state
machine, and a property drawing from a strategy the package under ``src`` ships (its
``.filter()`` is the package's, read by no static reader). The lock ``init`` writes passes
at once. Afterwards a new unlocked property, and a ``.filter()`` the test adds to the
shipped strategy, each fail that one test while the others run.
"""
from __future__ import annotations

import subprocess
import sys

import pytest as pytest_module

from builders.ci_repo import adopt
from builders.ci_repo import CiRepo
from builders.ci_repo import copy_template
from builders.ci_repo import git
from builders.ci_repo import shared_template
from builders.ci_repo import write

PYPROJECT = '''\
[project]
name = "pkg"
version = "0.1"
requires-python = ">=3.9"

[tool.pytest.ini_options]
pythonpath = ["src"]
'''
SRC = '''\
from hypothesis import strategies as st

positive = st.integers().filter(lambda n: n > 0).map(lambda n: n % 1000 + 1)
'''
PROPERTIES = '''\
import unittest

import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule

from pkg import positive

try:
    import hypothesis
except ImportError:
    hypothesis = None
else:
    @given(st.integers())
    def test_in_else(n):
        assert int(str(n)) == n

    class TestInElse:
        @given(st.text())
        def test_method(self, s):
            assert s == s


class TestPlain:
    @given(st.lists(st.integers()).filter(lambda xs: len(xs) < 50))
    def test_sorted(self, xs):
        assert sorted(sorted(xs)) == sorted(xs)


class TestUnit(unittest.TestCase):
    @given(st.booleans())
    def test_bool(self, b):
        self.assertIn(b, (True, False))


@pytest.mark.parametrize("k", [1, 2])
@given(st.integers().map(abs))
def test_param(k, n):
    assert n * k >= n


@settings(max_examples=20)
@given(positive)
def test_shipped(n):
    assert n > 0


class Counter(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.n = 0

    @rule(k=st.integers(0, 5))
    def add(self, k):
        self.n += k
        assert self.n >= 0


TestCounter = Counter.TestCase
'''
NEW_PROPERTY = '''

@given(st.integers())
def test_new(n):
    assert n == n
'''


def adopt_props(path: str) -> CiRepo:
    return adopt(path, PYPROJECT, {'src/pkg/__init__.py': SRC,
                                   'tests/test_props.py': PROPERTIES})


@pytest_module.fixture(scope='session')
def props_template(tmp_path_factory: pytest_module.TempPathFactory) -> str:
    """The adoption, made once per run (each test copies it)."""
    return shared_template(tmp_path_factory, 'property-lock-at-run-time', adopt_props)


@pytest_module.fixture
def adopted(props_template: str, tmp_path) -> CiRepo:  # type: ignore[no-untyped-def]
    return copy_template(props_template, str(tmp_path / 'r'))


def pytest(repo: CiRepo) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider',
                           '-p', 'no:randomly'], cwd=repo.path, env=repo.env(),
                          capture_output=True, text=True)


def commit(repo: CiRepo, source: str) -> None:
    write(repo.path, {'tests/test_props.py': source})
    git(repo.path, 'commit', '-qam', 'tests changed')


def test_the_lock_init_writes_passes_every_shape_of_property_at_once(adopted: CiRepo) -> None:
    repo = adopted
    ran = pytest(repo)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert '8 passed' in ran.stdout, ran.stdout
    assert 'unlocked' not in ran.stdout and 'tests less than its lock' not in ran.stdout


def test_an_unlocked_property_fails_that_test_and_the_others_run(adopted: CiRepo) -> None:
    repo = adopted
    commit(repo, PROPERTIES + NEW_PROPERTY)
    ran = pytest(repo)
    assert ran.returncode == 1, ran.stdout
    assert '1 failed, 8 passed' in ran.stdout, ran.stdout
    assert ('tests/test_props.py::test_new: unlocked property: test_new has no entry in '
            'tests/domain_lock.json') in ran.stdout, ran.stdout
    assert 'FAILED tests/test_props.py::test_new' in ran.stdout
    assert 'no test was run' not in ran.stdout


def test_a_filter_the_test_adds_to_a_shipped_strategy_fails_that_test(adopted: CiRepo) -> None:
    repo = adopted
    commit(repo, PROPERTIES.replace('@given(positive)', '@given(positive.filter(lambda n: n < 5))'))
    ran = pytest(repo)
    assert ran.returncode == 1, ran.stdout
    assert ('tests/test_props.py::test_shipped: tests less than its lock '
            '(tests/domain_lock.json): filters: locked at 0, live value 1') in ran.stdout, \
        ran.stdout
    assert '1 failed, 7 passed' in ran.stdout, ran.stdout
