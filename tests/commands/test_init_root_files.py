"""``oracle-guard init`` on a single-module package whose tests are files at the top of
the repository (``mymod.py`` beside ``test_mymod.py``, no tests folder): the roots it
writes name the files that are there, the adoption commit passes, and the hooks guard
those files from then on."""
from __future__ import annotations

import os

from builders.repos import Repo
from oracle_guard.cli import main as cli
from oracle_guard.commands.init import main as init
from oracle_guard.config import load_config

REV = '0123456789abcdef0123456789abcdef01234567'

MODULE = 'def add(a, b):\n    return a + b\n'
ROOT_TEST = '''\
import sys

import pytest

from mymod import add


def test_add():
    assert add(1, 2) == 3


@pytest.mark.skipif(sys.platform == "win32", reason="posix paths")
def test_posix_only():
    assert add(0, 0) == 0
'''
ROOT_PROPERTY = '''\
from hypothesis import given, strategies as st

from mymod import add


@given(st.integers(), st.integers())
def test_add_commutes(a, b):
    assert add(a, b) == add(b, a)
'''


def single_module(repo: Repo, test_source: str = ROOT_TEST) -> Repo:
    repo.write('pyproject.toml', '[project]\nname = "mymod"\nversion = "1"\n')
    repo.write('mymod.py', MODULE)
    repo.write('setup.py', 'from setuptools import setup\n\nsetup()\n')
    repo.write('test_mymod.py', test_source)
    repo.commit('a single-module package')
    return repo


def adopt(repo: Repo) -> str:
    result = repo.run(init, '--hook-repo', '/somewhere/oracle-guard', '--rev', REV)
    assert result.rc == 0, result.out + result.err
    repo.commit('Adopt oracle-guard')
    checked = repo.run(cli, 'check', '--all-files')
    assert checked.rc == 0, checked.out + checked.err
    return result.out


def test_init_names_the_module_and_the_root_test_file_and_creates_no_folder_for_them(
        repo: Repo) -> None:
    out = adopt(single_module(repo))
    cfg = load_config(repo.path)
    assert cfg.src == ('mymod.py',)
    assert cfg.tests == ('test_*.py',)
    assert 'found tests: test_*.py' in out and 'found src: mymod.py' in out
    for folder in ('src', 'tests'):
        assert not os.path.exists(os.path.join(repo.path, folder))
    assert cfg.is_test_code('test_mymod.py') and cfg.is_src('mymod.py')
    assert not cfg.is_src('setup.py')


def test_a_bare_skip_in_the_root_test_file_after_adoption_fails(repo: Repo) -> None:
    adopt(single_module(repo))
    repo.write('test_mymod.py', ROOT_TEST + '\n\n@pytest.mark.skip\ndef test_sub():\n'
               '    assert add(2, -2) == 0\n')
    repo.add()
    result = repo.run(cli, 'check')
    assert result.rc == 1
    assert 'test_mymod.py:17:2: OG301' in result.out


def test_a_bare_skip_in_a_new_root_test_file_after_adoption_fails(repo: Repo) -> None:
    adopt(single_module(repo))
    repo.write('test_more.py', 'import pytest\n\n\n@pytest.mark.skip\ndef test_more():\n'
               '    assert 1 + 1 == 3\n')
    repo.add()
    result = repo.run(cli, 'check')
    assert result.rc == 1
    assert 'test_more.py:4:2: OG301' in result.out


def test_a_root_test_file_of_properties_is_proposed_by_its_name(repo: Repo) -> None:
    adopt(single_module(repo, ROOT_PROPERTY))
    cfg = load_config(repo.path)
    assert cfg.properties == ('test_mymod.py',)
    assert b'test_add_commutes' in repo.read(cfg.domain_lock)


def test_the_gate_passes_an_honest_change_and_fails_a_bare_skip_in_the_root_test_file(
        repo: Repo) -> None:
    """The gate's inventory is the root test file: its environment skip is honest, an
    honest change passes, a bare skip added there is named."""
    from builders.ci_repo import CiRepo
    from builders.ci_repo import PYTEST

    adopt(single_module(repo))
    gate = CiRepo(repo.path)
    gate.pull_request({'mymod.py': MODULE + '\n\ndef sub(a, b):\n    return a - b\n',
                       'test_mymod.py': ROOT_TEST + '\n\ndef test_sub():\n'
                       '    from mymod import sub\n    assert sub(3, 1) == 2\n'}, bug=False)
    honest = gate.ci(PYTEST)
    assert honest.summary == 'oracle-guard ci: 0 finding(s); test command exited 0', honest.out
    repo.write('test_mymod.py', ROOT_TEST + '\n\n@pytest.mark.skip\ndef test_sub():\n'
               '    from mymod import sub\n    assert sub(3, 1) == 2\n')
    repo.commit('the new test skipped')
    cheat = gate.ci(PYTEST)
    assert cheat.rc == 1
    assert [line.split(': ')[0] for line in cheat.lines('OG301')] == ['test_mymod.py:17:2']
