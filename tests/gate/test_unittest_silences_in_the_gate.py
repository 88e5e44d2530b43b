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


@pytest.fixture(scope='session')
def legacy_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    """calc adopted with LEGACY's silences in its baseline, built once per run."""
    return shared_template(tmp_path_factory, 'unittest-legacy', lambda path: adopted_with(
        path, {'tests/test_legacy.py': LEGACY}))


def test_baselined_unittest_silences_give_no_finding_on_an_honest_change(
        legacy_template: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = copy_template(legacy_template, str(tmp_path / 'r'))
    repo.pull_request({'src/calc/__init__.py': HONEST_SRC}, bug=False)
    ci = repo.ci()
    assert ci.rc == 0, ci.out
    assert not [line for line in ci.out.splitlines() if ': OG' in line], ci.out


@pytest.mark.reference_run(False)  # the test command's findings only
def test_an_expected_failure_added_to_a_class_fails_the_gate(
        legacy_template: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = copy_template(legacy_template, str(tmp_path / 'r'))
    repo.pull_request({'tests/test_legacy.py': LEGACY + ADDED_CLASS}, bug=False)
    ci = repo.ci()
    assert ci.rc == 1, ci.out
    assert 'TestNewClass::test_new: @unittest.expectedFailure without a freeze id' in ci.out, \
        ci.out


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


@pytest.fixture(scope='session')
def support_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    """calc adopted with a helper module's silences in its baseline, built once per run."""
    return shared_template(tmp_path_factory, 'unittest-support', lambda path: adopted_with(
        path, {'tests/support.py': SUPPORT, 'tests/test_fetch.py': USES_SUPPORT}))


def test_silences_a_helper_binds_give_no_finding_on_an_honest_change(
        support_template: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = copy_template(support_template, str(tmp_path / 'r'))
    repo.pull_request({'src/calc/__init__.py': HONEST_SRC}, bug=False)
    ci = repo.ci()
    assert ci.rc == 0, ci.out
    assert not [line for line in ci.out.splitlines() if ': OG' in line], ci.out


def test_a_skip_of_its_own_beside_a_helpers_silences_fails_the_gate(
        support_template: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = copy_template(support_template, str(tmp_path / 'r'))
    repo.pull_request({'tests/test_fetch.py': USES_SUPPORT + OWN_SKIP}, bug=False)
    ci = repo.ci()
    assert ci.rc == 1, ci.out
    assert any(line.startswith('tests/test_fetch.py:19:') for line in ci.lines('OG301')), ci.out
    assert not any('TestFetch::test_fetch' in line or 'test_slow' in line
                   for line in ci.out.splitlines() if ': OG' in line), ci.out


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


def test_a_baselined_skip_decorator_on_set_up_gives_no_finding_on_an_honest_change(
        tmp_path) -> None:
    repo = adopted_with(str(tmp_path / 'r'), {'tests/test_terminal.py': SET_UP_SKIP})
    repo.pull_request({'src/calc/__init__.py': HONEST_SRC}, bug=False)
    ci = repo.ci()
    assert ci.rc == 0, ci.out
    assert not [line for line in ci.out.splitlines() if ': OG' in line], ci.out


def test_a_skip_decorator_added_to_another_set_up_fails_the_gate(tmp_path) -> None:
    repo = adopted_with(str(tmp_path / 'r'), {'tests/test_terminal.py': SET_UP_SKIP})
    repo.pull_request({'tests/test_terminal.py': SET_UP_SKIP.replace(
        'class TestPlain(unittest.TestCase):\n',
        'class TestPlain(unittest.TestCase):\n'
        '    @unittest.skipUnless(sys.stdout.isatty(), "sys.stdout is not a tty")\n')},
        bug=False)
    ci = repo.ci()
    assert ci.rc == 1, ci.out
    assert 'TestPlain::test_plain' in ci.out, ci.out
