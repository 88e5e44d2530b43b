"""The gate accepts the ``unittest`` silences the baseline holds, as the hooks and the
plugin do: ``@unittest.skip``/``skipIf``/``skipUnless`` and ``@unittest.expectedFailure``
on methods and on classes, there at adoption, give no finding on an honest pull request;
an ``expectedFailure`` the pull request adds to a class still fails it. Real git
repositories and real ``oracle-guard ci`` runs; nothing is mocked.
"""
from __future__ import annotations

import pytest

from builders.ci_repo import adopted_with
from builders.ci_repo import copy_template
from builders.ci_repo import shared_template

# An honest change here must pass the whole gate, its reference run included.
pytestmark = pytest.mark.reference_run


LEGACY = '''\
import unittest

from calc import add

HAVE_IT = False


class TestMethods(unittest.TestCase):
    @unittest.skip("not yet")
    def test_skip(self):
        pass

    @unittest.skipIf(not HAVE_IT, "needs it")
    def test_skip_if(self):
        pass

    @unittest.expectedFailure
    def test_expected_failure(self):
        self.assertEqual(add(1, 1), 3)


@unittest.skipUnless(HAVE_IT, "needs it")
class TestSkippedClass(unittest.TestCase):
    def test_x(self):
        pass


@unittest.expectedFailure
class TestExpectedFailureClass(unittest.TestCase):
    def test_z(self):
        self.assertEqual(add(1, 1), 3)
'''
HONEST_SRC = ('def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n\n\n'
              'def double(a):\n    return add(a, a)\n')
ADDED_CLASS = '''

@unittest.expectedFailure
class TestNewClass(unittest.TestCase):
    def test_new(self):
        self.assertEqual(add(1, 1), 3)
'''


# A helper module binds the silences the tests apply; the baseline holds them there.
SUPPORT = '''\
import unittest

import pytest

requires_network = unittest.skip("no network here")
slow = pytest.mark.skip(reason="slow")
'''
USES_SUPPORT = '''\
import unittest

from calc import add
from support import requires_network
from support import slow


class TestFetch(unittest.TestCase):
    @requires_network
    def test_fetch(self):
        self.assertEqual(add(1, 1), 2)


@slow
def test_slow():
    assert add(2, 2) == 4
'''
OWN_SKIP = '''

@unittest.skip("flaky")
def test_own():
    assert add(1, 2) == 3
'''


# colorama's layout: a skip decorator on setUp skips every test of the class at set-up.
SET_UP_SKIP = '''\
import sys
import unittest

from calc import add


class TestTerminal(unittest.TestCase):
    @unittest.skipUnless(sys.stdout.isatty(), "sys.stdout is not a tty")
    def setUp(self):
        self.base = 1

    def test_add(self):
        self.assertEqual(add(1, 2), 3)

    def test_add_zero(self):
        self.assertEqual(add(0, 2), 2)


class TestPlain(unittest.TestCase):
    def setUp(self):
        self.base = 1

    def test_plain(self):
        self.assertEqual(add(2, 2), 4)
'''
# The three layouts side by side, each in a test module of its own.
SET_UP_SKIP_ADDED = SET_UP_SKIP.replace(
    'class TestPlain(unittest.TestCase):\n',
    'class TestPlain(unittest.TestCase):\n'
    '    @unittest.skipUnless(sys.stdout.isatty(), "sys.stdout is not a tty")\n')


@pytest.fixture(scope='session')
def silences_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    """calc adopted with LEGACY's silences, a helper module's and a skip on ``setUp`` in
    its baseline, built once per run."""
    return shared_template(tmp_path_factory, 'unittest-silences', lambda path: adopted_with(
        path, {'tests/test_legacy.py': LEGACY, 'tests/support.py': SUPPORT,
               'tests/test_fetch.py': USES_SUPPORT, 'tests/test_terminal.py': SET_UP_SKIP}))


def test_baselined_unittest_silences_give_no_finding_on_an_honest_change(
        silences_template: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """On methods and classes, bound by a helper module, on ``setUp``: none is a finding."""
    repo = copy_template(silences_template, str(tmp_path / 'r'))
    repo.pull_request({'src/calc/__init__.py': HONEST_SRC}, bug=False)
    ci = repo.ci()
    assert ci.rc == 0, ci.out
    assert not [line for line in ci.out.splitlines() if ': OG' in line], ci.out


def test_a_silence_the_pull_request_adds_beside_baselined_ones_fails_the_gate(
        silences_template: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """An ``expectedFailure`` added to a class and a skip of a test's own beside a helper's
    silences: each is found, in its own module, and the baselined silences beside them
    are not."""
    repo = copy_template(silences_template, str(tmp_path / 'r'))
    repo.pull_request({'tests/test_legacy.py': LEGACY + ADDED_CLASS,
                       'tests/test_fetch.py': USES_SUPPORT + OWN_SKIP}, bug=False)
    ci = repo.ci()
    assert ci.rc == 1, ci.out
    assert 'TestNewClass::test_new: @unittest.expectedFailure without a freeze id' in ci.out, \
        ci.out
    assert any(line.startswith('tests/test_fetch.py:19:') for line in ci.lines('OG301')), ci.out
    assert not any('TestFetch::test_fetch' in line or 'test_slow' in line or
                   'TestMethods::' in line for line in ci.out.splitlines() if ': OG' in line), \
        ci.out


def test_a_skip_decorator_added_to_another_set_up_fails_the_gate(
        silences_template: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Alone: it shows when the tests run, and a silence found at collection stops the
    session before that."""
    repo = copy_template(silences_template, str(tmp_path / 'r'))
    repo.pull_request({'tests/test_terminal.py': SET_UP_SKIP_ADDED}, bug=False)
    ci = repo.ci()
    assert ci.rc == 1, ci.out
    assert 'TestPlain::test_plain' in ci.out, ci.out
