"""Upstream content that predates adoption is accepted by the hooks and the gate alike
(rule 39 and section 8 of docs/adoption.md): an ``importorskip`` the baseline took that
sits in a fixture, a set-up method or a conftest, and test files upstream ships as
symlinks to other test files of the repository."""
from __future__ import annotations

import os
import sys

from builders.repos import Repo
from oracle_guard.cli import main as cli
from oracle_guard.commands.baseline import main as baseline
from oracle_guard.commands.ci import main as ci

CONFTEST = '''\
import pytest


@pytest.fixture
def fancy():
    return pytest.importorskip("not_installed_anywhere")


@pytest.fixture(params=["json", "not_installed_either"])
def implementation(request):
    return pytest.importorskip(request.param)  # pyrsistent's form: a computed name
'''
TESTS = '''\
import pytest


class TestSetUp:
    def setup_method(self):
        pytest.importorskip("also_not_installed")

    def test_one(self):
        assert 1 + 1 == 2


def test_uses_fancy(fancy):
    assert fancy


def test_runs():
    assert [1] * 2 == [1, 1]


def test_each_implementation(implementation):
    assert implementation.__name__
'''


def adopted(repo: Repo) -> str:
    repo.write('pyproject.toml', '[project]\nname = "app"\nversion = "1"\n\n'
               '[tool.oracle-guard]\nsrc = ["src/"]\nproperties = []\n')
    repo.write('src/app.py', 'def add(a, b):\n    return a + b\n')
    repo.write('tests/conftest.py', CONFTEST)
    repo.write('tests/test_app.py', TESTS)
    repo.write('tests/freeze_ledger.yaml', 'budget: 0\nfreezes: []\n')
    repo.write_json('tests/domain_lock.json', {'version': 1, 'properties': {}})
    repo.write('.pre-commit-config.yaml', 'repos: []\n')
    assert repo.run(baseline).rc == 0
    repo.commit('adopted, with the baseline')
    return repo.git('rev-parse', 'HEAD').strip()


def gate(repo: Repo, base: str):  # type: ignore[no-untyped-def]
    return repo.run(ci, '--base', base, '--', sys.executable, '-m', 'pytest', '-q',
                    '-p', 'no:randomly', '-p', 'no:cacheprovider')


def test_baselined_importorskip_in_a_fixture_or_set_up_passes_hooks_and_gate(repo: Repo) -> None:
    base = adopted(repo)
    assert repo.run(cli, 'check', '--all-files').rc == 0
    repo.write('src/app.py', 'def add(a, b):\n    return b + a\n')
    repo.commit('a fix')
    result = gate(repo, base)
    assert result.rc == 0, result.out
    assert 'oracle-guard ci: 0 finding(s); test command exited 0' in result.out


def test_a_new_skip_in_a_fixture_the_baseline_never_took_fails_the_gate(repo: Repo) -> None:
    base = adopted(repo)
    repo.write('tests/conftest.py', CONFTEST + '\n\n@pytest.fixture\ndef later():\n'
               '    getattr(pytest, "sk" + "ip")("later")\n')
    repo.write('tests/test_app.py', TESTS + '\n\ndef test_later(later):\n    assert later\n')
    repo.commit('a skip through a fixture')
    result = gate(repo, base)
    assert result.rc == 1 and result.codes.count('OG706') == 1, result.out
    assert 'test_later' in result.out


def test_symlinked_test_file_naming_a_test_file_of_the_repository_passes(repo: Repo) -> None:
    adopted(repo)
    os.symlink('test_app.py', os.path.join(repo.path, 'tests', 'test_app_again.py'))
    repo.commit('upstream ships a symlinked copy')
    result = repo.run(cli, 'check', '--all-files')
    assert result.rc == 0, result.out


def test_symlinked_test_file_naming_a_file_outside_the_tests_fails_once(repo: Repo) -> None:
    adopted(repo)
    repo.write('docs/snippet.py', 'import pytest\n\n\n@pytest.mark.skip\ndef test_x():\n'
               '    assert True\n')
    os.symlink('../docs/snippet.py', os.path.join(repo.path, 'tests', 'test_snippet.py'))
    repo.commit('a symlink to something no hook reads as test code')
    result = repo.run(cli, 'check', '--all-files')
    assert result.rc == 1 and result.codes == ['OG307'], result.out


HELPERS = '''\
import os
import unittest


def needs_speedups(func):
    def wrapper(*args, **kwargs):
        if not os.environ.get("SPEEDUPS"):
            raise unittest.SkipTest("C extension not available")
        return func(*args, **kwargs)
    return wrapper
'''
SPEEDUP_TESTS = '''\
from unittest import TestCase

from tests._helpers import needs_speedups


class TestSpeedups(TestCase):
    @needs_speedups
    def test_fast(self):
        self.assertEqual(1 + 1, 2)

    @needs_speedups
    def test_faster(self):
        self.assertEqual(2 * 2, 4)
'''


def test_baselined_skip_raised_in_a_shared_helper_decorator_passes_the_gate(repo: Repo) -> None:
    """simplejson's layout: the SkipTest is raised in tests/_helpers.py, the skip is
    reported at that line, and the baseline holds that very silence."""
    repo.write('tests/__init__.py', '')
    repo.write('tests/_helpers.py', HELPERS)
    repo.write('tests/test_speedups.py', SPEEDUP_TESTS)
    base = adopted(repo)
    result = gate(repo, base)
    assert result.rc == 0, result.out
    assert 'oracle-guard ci: 0 finding(s)' in result.out


def test_computed_skip_in_a_test_that_carries_a_baselined_skipif_fails_the_gate(
        repo: Repo) -> None:
    """attrs' layout: a class-level skipif the baseline holds (its condition is imported,
    not evaluable) does not explain a skip the test body raises through a computed name."""
    repo.write('tests/_compat.py', 'import sys\n\nOLD = sys.version_info < (3, 0)\n')
    repo.write('tests/test_marked.py', '''\
import pytest

from tests._compat import OLD


@pytest.mark.skipif(OLD, reason="needs a new Python")
class TestNew:
    def test_runs(self):
        assert 2 + 2 == 4
''')
    repo.write('tests/__init__.py', '')
    base = adopted(repo)
    assert gate(repo, base).rc == 0
    repo.write('tests/test_marked.py', repo.read('tests/test_marked.py').decode().replace(
        '        assert 2 + 2 == 4', '        getattr(pytest, "sk" + "ip")("later")\n'
        '        assert 2 + 2 == 4'))
    repo.commit('a skip through a computed name')
    result = gate(repo, base)
    assert result.rc == 1 and 'OG706' in result.codes, result.out
