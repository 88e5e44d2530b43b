"""The plugin honours the baseline for ``unittest`` decorators, as the hooks do (rule 39).

A repository adopted with the README's commands (``oracle-guard init``) whose tests carry
``@unittest.skip``, ``skipIf``, ``skipUnless`` and ``@unittest.expectedFailure`` on methods
and on classes: ``init`` baselines each, and the plain test run that follows fails none of
them. An ``expectedFailure`` added after adoption, on a method or on a class, still fails
the session: the baseline holds the past, not what comes next. The same holds for
silences a helper module binds (``requires_network = unittest.skip(...)`` in
``tests/support.py``): the baseline holds them where they are bound, and the tests that
apply them run as the hooks judge them.
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
LEGACY = '''\
import unittest
from unittest import expectedFailure
from unittest import skip

HAVE_IT = False


class TestMethods(unittest.TestCase):
    @unittest.skip("not yet")
    def test_skip(self):
        pass

    @skip("later")
    def test_skip_imported(self):
        pass

    @unittest.skipIf(not HAVE_IT, "needs it")
    def test_skip_if(self):
        pass

    @unittest.skipUnless(HAVE_IT, "needs it")
    def test_skip_unless(self):
        pass

    @unittest.expectedFailure
    def test_expected_failure(self):
        self.assertEqual(1, 2)

    @expectedFailure
    def test_expected_failure_imported(self):
        self.assertEqual(1, 2)


@unittest.skip("whole class")
class TestSkippedClass(unittest.TestCase):
    def test_x(self):
        pass


@unittest.skipUnless(HAVE_IT, "needs it")
class TestSkippedUnlessClass(unittest.TestCase):
    def test_y(self):
        pass


@unittest.expectedFailure
class TestExpectedFailureClass(unittest.TestCase):
    def test_z(self):
        self.assertEqual(1, 2)
'''
NEW_METHOD = '''

class TestNew(unittest.TestCase):
    @unittest.expectedFailure
    def test_new(self):
        self.assertEqual(1, 2)
'''
NEW_CLASS = '''

@unittest.expectedFailure
class TestNewClass(unittest.TestCase):
    def test_new(self):
        self.assertEqual(1, 2)
'''


def adopt_legacy(path: str) -> CiRepo:
    return adopt(path, PYPROJECT, {'src/pkg/__init__.py': 'VALUE = 1\n',
                                   'tests/test_legacy.py': LEGACY})


@pytest_module.fixture(scope='session')
def legacy_template(tmp_path_factory: pytest_module.TempPathFactory) -> str:
    """The adoption, made once per run (each test copies it)."""
    return shared_template(tmp_path_factory, 'unittest-silences-baselined', adopt_legacy)


def pytest(repo: CiRepo) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider'],
                          cwd=repo.path, env=repo.env(), capture_output=True, text=True)


def test_unittest_silences_baselined_at_adoption_pass_the_plain_run(
        legacy_template: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = copy_template(legacy_template, str(tmp_path / 'r'))
    proc = pytest(repo)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert 'without a freeze id' not in out and 'the session was failed' not in out, out
    assert '6 skipped, 3 xfailed' in out, out


def test_an_expected_failure_added_after_adoption_still_fails_the_session(
        legacy_template: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    for name, added in (('method', NEW_METHOD), ('class', NEW_CLASS)):
        repo = copy_template(legacy_template, str(tmp_path / name))
        write(repo.path, {'tests/test_legacy.py': LEGACY + added})
        git(repo.path, 'commit', '-qam', 'new silence')
        proc = pytest(repo)
        out = proc.stdout + proc.stderr
        assert proc.returncode == 1, out
        assert ('tests/test_legacy.py::' + ('TestNew::test_new' if name == 'method' else
                                            'TestNewClass::test_new') +
                ': @unittest.expectedFailure without a freeze id (FZ-<n>)') in out, out
        assert out.count('without a freeze id') == 1, out


# Silences a helper module binds for the tests to apply (``tests/support.py``): the
# scanner judges each where it is bound, so the baseline holds it there.
SUPPORT = '''\
import unittest

import pytest

requires_network = unittest.skip("no network here")
slow = pytest.mark.skip(reason="slow")
'''
USES_SUPPORT = '''\
import unittest

from support import requires_network
from support import slow


class TestFetch(unittest.TestCase):
    @requires_network
    def test_fetch(self):
        pass


@requires_network
class TestWholeClass(unittest.TestCase):
    def test_b(self):
        pass


@slow
def test_slow():
    pass


def test_plain():
    assert 1 + 1 == 2
'''
INLINE_SKIP = '''

@unittest.skip("later")
def test_added():
    pass
'''


def adopt_support(path: str) -> CiRepo:
    return adopt(path, PYPROJECT, {'src/pkg/__init__.py': 'VALUE = 1\n',
                                   'tests/support.py': SUPPORT,
                                   'tests/test_fetch.py': USES_SUPPORT})


@pytest_module.fixture(scope='session')
def support_template(tmp_path_factory: pytest_module.TempPathFactory) -> str:
    return shared_template(tmp_path_factory, 'unittest-silences-support', adopt_support)


def test_silences_a_helper_binds_and_the_baseline_holds_pass_the_plain_run(
        support_template: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = copy_template(support_template, str(tmp_path / 'r'))
    proc = pytest(repo)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert '1 passed, 3 skipped' in out, out


def test_a_skip_written_in_the_test_file_is_not_taken_for_the_helpers(
        support_template: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = copy_template(support_template, str(tmp_path / 'r'))
    write(repo.path, {'tests/test_fetch.py': USES_SUPPORT + INLINE_SKIP})
    git(repo.path, 'commit', '-qam', 'new silence')
    proc = pytest(repo)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert 'tests/test_fetch.py::test_added: @unittest.skip without a freeze id' in out, out
    assert out.count('without a freeze id') == 1, out
