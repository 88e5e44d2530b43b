"""The audit of ``oracle-guard ci`` accepts what adoption accepts, and only that: a
baselined silence (rule 39), an environment skip whose condition held in this run
(rule 40), and the tests the pytest configuration already left out at adoption.
"""

from __future__ import annotations

import subprocess
import sys

from builders.ci_repo import CiRepo
from builders.ci_repo import git
from builders.ci_repo import PYTEST
from builders.ci_repo import write


HERE = sys.platform


def on_main(calc: CiRepo, files: dict, *, baseline: bool) -> None:  # type: ignore[type-arg]
    """Commit ``files`` on main (before adoption), then the baseline in a commit of its own."""
    write(calc.path, files)
    git(calc.path, 'add', '-A')
    git(calc.path, 'commit', '-q', '-m', 'legacy')
    if baseline:
        subprocess.run([sys.executable, '-m', 'oracle_guard.cli', 'baseline'], cwd=calc.path,
                       check=True, capture_output=True, env=calc.env())
        git(calc.path, 'add', '-A')
        git(calc.path, 'commit', '-q', '-m', 'oracle-guard baseline')


LEGACY = '''\
    import pytest


    @pytest.mark.skip(reason="legacy, never fixed")
    def test_legacy():
        assert 0
    '''


def test_baselined_skip_passes_ci(calc: CiRepo) -> None:
    on_main(calc, {'tests/test_legacy.py': LEGACY}, baseline=True)
    calc.pull_request({'NOTES.md': 'a pull request\n'}, bug=False)
    ci = calc.ci()
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 0', ci.out


def test_skip_missing_from_the_baseline_fails_ci(calc: CiRepo) -> None:
    on_main(calc, {'tests/test_legacy.py': LEGACY}, baseline=False)
    calc.pull_request({'NOTES.md': 'a pull request\n'}, bug=False)
    ci = calc.ci()
    assert ci.rc == 1
    # the plugin, forced on, fails the session before any test runs
    assert 'tests/test_legacy.py::test_legacy: @pytest.mark.skip without a freeze id' in ci.out


ENV_SKIP = f'''\
    import sys

    import pytest


    @pytest.mark.skipif(sys.platform == {HERE!r}, reason="not on this platform")
    def test_platform_specific():
        assert 0


    @pytest.mark.skipif(sys.platform == "plan9", reason="not on plan9")
    def test_runs_here():
        assert 1
    '''


def test_environment_skip_that_held_in_the_run_passes_ci(calc: CiRepo) -> None:
    calc.pull_request({'tests/test_env.py': ENV_SKIP}, bug=False)
    ci = calc.ci()
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 0', ci.out


def test_skip_of_a_test_whose_environment_condition_did_not_hold_fails_ci(calc: CiRepo) -> None:
    # The condition is honest, but the test is skipped by something else at run time.
    ci = calc.pull_request({'tests/test_env.py': ENV_SKIP, 'tests/conftest.py': '''\
        import pytest


        @pytest.fixture(autouse=True)
        def _later(request):
            if request.node.name == 'test_runs_here':
                getattr(pytest, ''.join(['s', 'k', 'i', 'p']))('flaky')
        '''}, bug=False)
    ci = calc.ci()
    assert ci.rc == 1
    assert any('tests/test_env.py::test_runs_here' in line for line in ci.lines('OG706')), ci.out
    assert not any('test_platform_specific' in line for line in ci.lines('OG706')), ci.out


DESELECTING = '''\
    [project]
    name = "calc"
    version = "0.1"

    [tool.pytest.ini_options]
    pythonpath = ["src"]
    addopts = "--deselect tests/test_calc.py::TestMore::test_zero"

    [tool.oracle-guard]
    src = ["src/"]
    '''


def test_test_deselected_at_adoption_passes_ci(calc: CiRepo) -> None:
    on_main(calc, {'pyproject.toml': DESELECTING}, baseline=True)
    calc.pull_request({'NOTES.md': 'a pull request\n'}, bug=False)
    ci = calc.ci(PYTEST)
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 0', ci.out


def test_test_deselected_without_a_baseline_record_fails_ci(calc: CiRepo) -> None:
    on_main(calc, {'pyproject.toml': DESELECTING}, baseline=False)
    calc.pull_request({'NOTES.md': 'a pull request\n'}, bug=False)
    ci = calc.ci(PYTEST)
    assert ci.rc == 1
    assert any('TestMore::test_zero' in line for line in ci.lines('OG704')), ci.out


# -- rule 39b: what the repository's own test run leaves out at adoption -------------------
# `oracle-guard baseline` collects once with the repository's configuration and records the
# tests that run leaves out; the gate accepts exactly those identities, and nothing that a
# pull request makes the same mechanism leave out on top.

def pyproject(addopts: str = '') -> str:
    return f'''\
    [project]
    name = "calc"
    version = "0.1"

    [tool.pytest.ini_options]
    pythonpath = ["src"]
    markers = ["slow: long-running"]
    {f"addopts = {addopts!r}" if addopts else ""}

    [tool.oracle-guard]
    src = ["src/"]
    '''


# The conftest deselects what the code under test names as slow (a hook reading src).
HOOK_READS_SRC = '''\
    import calc


    def pytest_collection_modifyitems(config, items):
        slow = [i for i in items if i.name in getattr(calc, "SLOW", ())]
        if slow:
            config.hook.pytest_deselected(items=slow)
            items[:] = [i for i in items if i not in slow]
    '''


SRC_SLOW = ('def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n\n\n'
            'SLOW = {names}\n')


def excluded(calc: CiRepo) -> dict[str, str]:
    import json
    import os

    with open(os.path.join(calc.path, 'tests/oracle_baseline.json'), encoding='utf-8') as f:
        return {e['nodeid']: e['by'] for e in json.load(f)['excluded']}


def test_conftest_hook_deselecting_at_adoption_passes_ci(calc: CiRepo) -> None:
    on_main(calc, {'tests/conftest.py': HOOK_READS_SRC,
                   'src/calc/__init__.py': SRC_SLOW.format(names="('test_zero',)")},
            baseline=True)
    assert excluded(calc) == {
        'tests/test_calc.py::TestMore::test_zero':
            'pytest_collection_modifyitems in tests/conftest.py '
            '(pytest --collect-only at adoption)'}
    calc.pull_request({'NOTES.md': 'a pull request\n'}, bug=False)
    ci = calc.ci(PYTEST)
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 0', ci.out


def test_src_change_that_makes_the_same_conftest_deselect_one_more_test_fails_ci(
        calc: CiRepo) -> None:
    on_main(calc, {'tests/conftest.py': HOOK_READS_SRC,
                   'src/calc/__init__.py': SRC_SLOW.format(names="('test_zero',)")},
            baseline=True)
    calc.pull_request({'src/calc/__init__.py': SRC_SLOW.format(names="('test_zero', 'test_add')")},
                      bug=False)
    ci = calc.ci(PYTEST)
    assert ci.rc == 1
    assert [line for line in ci.lines('OG704') if 'test_add' in line], ci.out
    assert not [line for line in ci.lines('OG704') if 'test_zero' in line], ci.out


ENV_HOOK = '''\
    import os


    def pytest_collection_modifyitems(config, items):
        names = os.environ.get("CALC_SKIP_TESTS", "").split(",")
        gone = [i for i in items if i.name in names]
        config.hook.pytest_deselected(items=gone)
        items[:] = [i for i in items if i not in gone]
    '''


def test_environment_variable_set_by_the_workflow_does_not_widen_the_record(
        calc: CiRepo) -> None:
    on_main(calc, {'tests/conftest.py': ENV_HOOK}, baseline=True)
    assert excluded(calc) == {}
    calc.pull_request({'NOTES.md': 'a pull request\n'}, bug=False)
    ci = calc.ci(PYTEST, env={'CALC_SKIP_TESTS': 'test_add'})
    assert ci.rc == 1
    assert [line for line in ci.lines('OG704') if 'test_add' in line], ci.out


def test_shell_pytest_addopts_at_baseline_time_is_not_recorded(calc: CiRepo) -> None:
    # What is recorded is the repository's configuration, not the terminal it ran in.
    subprocess.run([sys.executable, '-m', 'oracle_guard.cli', 'baseline'], cwd=calc.path,
                   check=True, capture_output=True,
                   env=calc.env({'PYTEST_ADDOPTS': '-k "not test_add"'}))
    assert excluded(calc) == {}


def test_marker_deselected_by_addopts_at_adoption_passes_and_a_new_marker_fails(
        calc: CiRepo) -> None:
    marked = 'import pytest\n\nfrom calc import add\n\n\n' \
             '@pytest.mark.slow\ndef test_big():\n    assert add(10**6, 1) == 10**6 + 1\n\n\n' \
             'def test_small():\n    assert add(1, 1) == 2\n'
    on_main(calc, {'pyproject.toml': pyproject('-m "not slow"'),
                   'tests/test_slow.py': marked}, baseline=True)
    assert excluded(calc) == {
        'tests/test_slow.py::test_big': "-m 'not slow' (pytest --collect-only at adoption)"}
    calc.pull_request({'NOTES.md': 'a pull request\n'}, bug=False)
    ci = calc.ci(PYTEST)
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 0', ci.out
    # The pull request marks one more test slow: it stops running, and that is a finding.
    write(calc.path, {'tests/test_slow.py': marked.replace(
        'def test_small', '@pytest.mark.slow\ndef test_small')})
    git(calc.path, 'commit', '-qam', 'mark it slow')
    ci = calc.ci(PYTEST)
    assert ci.rc == 1
    assert [line for line in ci.lines('OG704') if 'test_small' in line], ci.out
    assert not [line for line in ci.lines('OG704') if 'test_big' in line], ci.out


CUT_LIST = '''\
    def pytest_collection_modifyitems(items):
        items[:] = [i for i in items if "zero" not in i.name]
    '''


def test_items_cut_without_pytest_deselected_at_adoption_pass_and_a_wider_cut_fails(
        calc: CiRepo) -> None:
    on_main(calc, {'tests/conftest.py': CUT_LIST}, baseline=True)
    assert excluded(calc) == {
        'tests/test_calc.py::TestMore::test_zero':
            'a pytest_collection_modifyitems hook (pytest --collect-only at adoption)'}
    calc.pull_request({'NOTES.md': 'a pull request\n'}, bug=False)
    assert calc.ci(PYTEST).summary == 'oracle-guard ci: 0 finding(s); test command exited 0'
    write(calc.path, {'tests/conftest.py': CUT_LIST.replace('"zero"', '"zero" not in i.name and "add"')})
    git(calc.path, 'commit', '-qam', 'cut one more')
    ci = calc.ci(PYTEST)
    assert ci.rc == 1
    assert [line for line in ci.lines('OG703') if 'test_add' in line], ci.out


PARAM_HOOK = '''\
    def pytest_collection_modifyitems(config, items):
        gone = [i for i in items if i.name in {NAMES}]
        config.hook.pytest_deselected(items=gone)
        items[:] = [i for i in items if i not in gone]
    '''


def test_one_case_deselected_at_adoption_records_that_case_only(calc: CiRepo) -> None:
    on_main(calc, {'tests/conftest.py': PARAM_HOOK.replace('{NAMES}', "{'test_mul[2]'}")},
            baseline=True)
    assert list(excluded(calc)) == ['tests/test_calc.py::test_mul[2]']
    calc.pull_request({'tests/conftest.py': PARAM_HOOK.replace(
        '{NAMES}', "{'test_mul[1]', 'test_mul[2]'}")}, bug=False)
    ci = calc.ci(PYTEST, '--oracle-approved')  # the conftest edit itself is approved
    assert ci.rc == 1
    assert [line for line in ci.lines('OG704') if 'test_mul[1]' in line], ci.out
    assert not [line for line in ci.lines('OG704') if 'test_mul[2]' in line], ci.out


def test_module_that_fails_to_import_at_baseline_time_is_not_recorded(calc: CiRepo) -> None:
    # An import error is the environment the baseline ran in, not the configuration.
    on_main(calc, {'tests/test_extra.py': 'import not_installed_here\n\n\n'
                                          'def test_extra():\n    assert True\n'},
            baseline=True)
    assert excluded(calc) == {}


def test_many_cases_deselected_are_one_finding_per_test(calc: CiRepo) -> None:
    many = 'import pytest\n\n\n@pytest.mark.slow\n@pytest.mark.parametrize("n", range(50))\n' \
           'def test_many(n):\n    assert n >= 0\n'
    on_main(calc, {'pyproject.toml': pyproject(), 'tests/test_many.py': many}, baseline=True)
    calc.pull_request({'pyproject.toml': pyproject('-m "not slow"')}, bug=False)
    ci = calc.ci(PYTEST, '--oracle-approved')
    assert ci.rc == 1
    lines = ci.lines('OG704')
    assert len(lines) == 1, ci.out
    assert '50 cases of tests/test_many.py::test_many (' in lines[0], lines


IGNORE_HOOK = '''\
    def pytest_ignore_collect(collection_path, config):
        return collection_path.name == "test_legacy_io.py"
    '''


def test_module_a_conftest_hook_ignores_at_adoption_passes_ci_and_a_new_test_there_fails(
        calc: CiRepo) -> None:
    legacy = 'def test_old_io():\n    assert True\n'
    on_main(calc, {'tests/conftest.py': IGNORE_HOOK, 'tests/test_legacy_io.py': legacy},
            baseline=True)
    assert excluded(calc) == {
        'tests/test_legacy_io.py::test_old_io': 'not collected (pytest --collect-only at adoption)'}
    calc.pull_request({'NOTES.md': 'a pull request\n'}, bug=False)
    assert calc.ci(PYTEST).summary == 'oracle-guard ci: 0 finding(s); test command exited 0'
    # A test added where the hook does not look never runs: that is not what was accepted.
    write(calc.path, {'tests/test_legacy_io.py': legacy + '\n\ndef test_new_io():\n    assert 0\n'})
    git(calc.path, 'commit', '-qam', 'a new test nobody runs')
    ci = calc.ci(PYTEST)
    assert ci.rc == 1
    assert [line for line in ci.lines('OG703') if 'test_new_io' in line], ci.out
    assert not [line for line in ci.lines('OG703') if 'test_old_io' in line], ci.out


def test_a_suite_that_overwrites_the_probe_file_gets_a_note_not_a_traceback(
        calc: CiRepo) -> None:
    # The suite's own conftest runs in the collection: what it writes there is not trusted.
    on_main(calc, {'tests/conftest.py': '''\
        import os


        def pytest_sessionfinish(session):
            with open(os.environ["ORACLE_GUARD_COLLECTION_PROBE"], "w") as f:
                f.write('{"items": 3, "removed": [["x"]], "problems": {}, "rootdir": 1}')
        '''}, baseline=False)
    proc = subprocess.run([sys.executable, '-m', 'oracle_guard.cli', 'baseline'],
                          cwd=calc.path, capture_output=True, text=True, env=calc.env())
    assert proc.returncode == 0, proc.stderr
    assert 'Traceback' not in proc.stderr
    assert 'did not collect' in proc.stderr and 'are not recorded' in proc.stderr
    assert excluded(calc) == {}
