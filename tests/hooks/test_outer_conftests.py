"""check-named-freezes reads a ``conftest.py`` above the tests roots (and in a glob root's
folder) as test code: pytest loads it for every test below it. six's tests root is the glob
``test_*.py``; a root ``conftest.py`` that wraps ``Function.runtest`` passed the hooks.
Real git repositories; the hook's main() runs in them.
"""
from __future__ import annotations

import pytest

from oracle_guard.hooks.check_named_freezes import main

TODAY = '2026-11-29'
SWALLOWING = '''\
import _pytest.python

_runtest = _pytest.python.Function.runtest


def _forgiving(self):
    try:
        _runtest(self)
    except Exception:
        pass


_pytest.python.Function.runtest = _forgiving
'''
# What an honest root conftest holds.
HONEST = '''\
import sys

collect_ignore = ['setup.py']


def pytest_addoption(parser):
    parser.addoption('--slow', action='store_true', help='run the slow tests')


def pytest_configure(config):
    config.addinivalue_line('markers', 'slow: a slow test')
    if sys.platform == 'win32':
        collect_ignore.append('test_posix.py')
'''
LAYOUTS = [pytest.param('["test_*.py"]', 'test_six.py', id='glob-root'),
           pytest.param('["tests/"]', 'tests/test_six.py', id='folder-root')]


def _project(repo, tests: str, test_file: str) -> None:  # type: ignore[no-untyped-def]
    repo.write('pyproject.toml', f'[tool.oracle-guard]\nsrc = ["six.py"]\ntests = {tests}\n')
    repo.write('six.py', 'PY3 = True\n')
    repo.write(test_file, 'import six\n\n\ndef test_py3():\n    assert six.PY3\n')
    repo.commit('project')


@pytest.mark.parametrize(('tests', 'test_file'), LAYOUTS)
def test_a_root_conftest_that_swallows_failures_fails_the_commit(repo, tests, test_file):
    _project(repo, tests, test_file)
    repo.write('conftest.py', SWALLOWING)
    repo.add()
    result = repo.run(main, '--today', TODAY)
    assert result.codes == ['OG308'], result.out
    assert result.out.startswith('conftest.py:'), result.out


@pytest.mark.parametrize(('tests', 'test_file'), LAYOUTS)
def test_a_root_conftest_that_swallows_failures_fails_all_files(repo, tests, test_file):
    _project(repo, tests, test_file)
    repo.write('conftest.py', SWALLOWING)
    repo.commit('the conftest')
    result = repo.run(main, '--today', TODAY, '--all-files')
    assert result.codes == ['OG308'], result.out


@pytest.mark.parametrize(('tests', 'test_file'), LAYOUTS)
def test_an_honest_root_conftest_passes(repo, tests, test_file):
    _project(repo, tests, test_file)
    repo.write('conftest.py', HONEST)
    repo.add()
    staged = repo.run(main, '--today', TODAY)
    assert (staged.rc, staged.out) == (0, '')
    repo.commit('the conftest')
    result = repo.run(main, '--today', TODAY, '--all-files')
    assert (result.rc, result.out) == (0, '')



def test_a_root_conftest_with_a_silence_is_baselined_at_adoption(repo):
    from oracle_guard.commands.baseline import main as baseline

    _project(repo, '["test_*.py"]', 'test_six.py')
    repo.write('conftest.py', 'import sys\n\nimport pytest\n\n\n'
                              'def pytest_collection_modifyitems(items):\n'
                              '    if sys.platform == "win32":\n'
                              '        for item in items:\n'
                              '            item.add_marker(pytest.mark.skip(reason="posix"))\n')
    repo.commit('the conftest')
    assert repo.run(main, '--today', TODAY, '--all-files').codes == ['OG301']
    assert repo.run(baseline).rc == 0
    repo.commit('oracle-guard baseline')
    result = repo.run(main, '--today', TODAY, '--all-files')
    assert (result.rc, result.out) == (0, '')
