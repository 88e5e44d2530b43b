"""The baseline ``oracle-guard init`` writes covers the upstream test code check-named-freezes
would otherwise fail at adoption and that no freeze can name: a pytest plugin's own suite
that assigns attributes of pytest objects (OG308), and test files shipped as symlinks to
code outside the tests (OG307). The adoption commit passes, an honest change to those files
passes the hooks and the gate, and the same moves made after adoption are still judged."""
from __future__ import annotations

import json
import os

from builders.ci_repo import CiRepo
from builders.ci_repo import PYTEST
from builders.repos import Repo
from oracle_guard.cli import main as cli
from oracle_guard.commands.baseline import main as baseline
from oracle_guard.commands.init import main as init

REV = '0123456789abcdef0123456789abcdef01234567'

PLUGIN_SUITE = '''\
import pytest
from _pytest import terminal

from pkg import add


def test_reporter_width():
    terminal.TerminalReporter._pkg_width = 80
    assert add(1, 1) == 2


def test_item_marker():
    setattr(pytest.Item, "_pkg_marker", True)
    assert pytest.Item._pkg_marker
'''
SHARED_CHECKS = 'from pkg import add\n\n\ndef test_shared():\n    assert add(2, 2) == 4\n'
NEW_TEST = '\n\ndef test_three():\n    assert add(1, 2) == 3\n'


def plugin_project(repo: Repo) -> Repo:
    repo.write('pyproject.toml', '[project]\nname = "pkg"\nversion = "1"\n')
    repo.write('pkg/__init__.py', 'def add(a, b):\n    return a + b\n')
    repo.write('tests/test_plugin.py', PLUGIN_SUITE)
    repo.write('shared/checks.py', SHARED_CHECKS)
    os.symlink('../shared/checks.py', os.path.join(repo.path, 'tests/test_shared.py'))
    repo.commit('a pytest plugin, as upstream ships it')
    result = repo.run(init, '--hook-repo', '/somewhere/oracle-guard', '--rev', REV)
    assert result.rc == 0, result.out + result.err
    repo.commit('Adopt oracle-guard')
    return repo


def test_the_adoption_baselines_pytest_patches_and_symlinked_tests(repo: Repo) -> None:
    plugin_project(repo)
    written = json.loads(repo.read('tests/oracle_baseline.json'))
    assert [(p['path'], p['code'], p['source']) for p in written['patches']] == [
        ('tests/test_plugin.py', 'OG308', 'setattr(pytest.Item, "_pkg_marker", True)'),
        ('tests/test_plugin.py', 'OG308', 'terminal.TerminalReporter._pkg_width = 80'),
    ]
    assert written['symlinks'] == [{'path': 'tests/test_shared.py',
                                    'target': '../shared/checks.py'}]
    checked = repo.run(cli, 'check', '--all-files')
    assert checked.rc == 0, checked.out
    assert 'OG307' not in checked.out and 'OG308' not in checked.out


def test_an_honest_change_to_a_suite_that_patches_pytest_passes(repo: Repo) -> None:
    plugin_project(repo)
    repo.write('tests/test_plugin.py', PLUGIN_SUITE + NEW_TEST)
    repo.write('pkg/__init__.py', 'def add(a, b):\n    return b + a\n')
    repo.add()
    result = repo.run(cli, 'check')
    assert result.rc == 0, result.out


def test_a_new_patch_of_pytest_after_adoption_fails_even_as_a_copy_of_an_old_line(
        repo: Repo) -> None:
    plugin_project(repo)
    repo.write('tests/test_plugin.py', PLUGIN_SUITE + '\n\ndef test_quiet():\n'
               '    terminal.TerminalReporter._pkg_width = 80\n'
               '    pytest.Function.runtest = lambda self: None\n')
    repo.add()
    result = repo.run(cli, 'check')
    assert result.rc == 1
    assert result.codes == ['OG308', 'OG308']
    assert 'tests/test_plugin.py:18:5: OG308' in result.out
    assert 'tests/test_plugin.py:19:5: OG308' in result.out


def test_a_new_symlinked_test_or_a_new_target_after_adoption_fails(repo: Repo) -> None:
    plugin_project(repo)
    os.symlink('../shared/checks.py', os.path.join(repo.path, 'tests/test_again.py'))
    repo.write('shared/other.py', SHARED_CHECKS)
    os.remove(os.path.join(repo.path, 'tests/test_shared.py'))
    os.symlink('../shared/other.py', os.path.join(repo.path, 'tests/test_shared.py'))
    repo.add()
    result = repo.run(cli, 'check')
    assert result.rc == 1
    assert sorted(line.split(': ')[0] for line in result.out.splitlines()
                  if ': OG307 ' in line) == ['tests/test_again.py:1:1', 'tests/test_shared.py:1:1']


def test_the_baseline_grown_with_a_new_patch_in_the_same_change_fails(repo: Repo) -> None:
    plugin_project(repo)
    repo.write('tests/test_plugin.py', PLUGIN_SUITE + '\n\ndef test_quiet():\n'
               '    pytest.Function.runtest = lambda self: None\n')
    assert repo.run(baseline, '--no-collect').rc == 0
    repo.add()
    result = repo.run(cli, 'check')
    assert result.rc == 1
    assert 'OG520 baseline grown: accepts tests/test_plugin.py: test code assigns ' \
        'pytest.Function.runtest' in result.out


def test_the_gate_passes_an_honest_change_and_fails_a_new_patch(repo: Repo) -> None:
    plugin_project(repo)
    gate = CiRepo(repo.path)
    gate.pull_request({'tests/test_plugin.py': PLUGIN_SUITE + NEW_TEST,
                       'pkg/__init__.py': 'def add(a, b):\n    return b + a\n'}, bug=False)
    honest = gate.ci(PYTEST)
    assert honest.rc == 0, honest.out
    assert honest.summary == 'oracle-guard ci: 0 finding(s); test command exited 0'
    repo.write('tests/test_plugin.py', PLUGIN_SUITE + NEW_TEST +
               '\n\ndef test_quiet():\n    terminal.TerminalReporter._pkg_width = 80\n'
               '    assert add(0, 0) == 0\n')
    repo.commit('one more patch of pytest')
    cheat = gate.ci(PYTEST)
    assert cheat.rc == 1
    assert [line.split(': ')[0] for line in cheat.lines('OG308')] == ['tests/test_plugin.py:22:5']


def test_a_moved_suite_keeps_its_patches_accepted_and_a_copy_beside_it_does_not(
        repo: Repo) -> None:
    plugin_project(repo)
    repo.git('mv', 'tests/test_plugin.py', 'tests/test_terminal.py')
    repo.add()
    moved = repo.run(cli, 'check')
    assert moved.rc == 0, moved.out
    repo.git('reset', '-q', '--hard')
    repo.write('tests/test_terminal.py', PLUGIN_SUITE)
    repo.add()
    copied = repo.run(cli, 'check')
    assert copied.rc == 1
    assert copied.codes == ['OG308', 'OG308']
    assert 'tests/test_terminal.py:8:5: OG308' in copied.out
    assert 'tests/test_terminal.py:13:5: OG308' in copied.out
