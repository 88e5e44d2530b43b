"""The audit of ``oracle-guard ci`` accepts what adoption accepts, and only that: a
baselined silence (rule 39), an environment skip whose condition held in this run
(rule 40), and the tests the pytest configuration already left out at adoption."""
from __future__ import annotations

import subprocess
import sys

import pytest

from ci_repo import build_template
from ci_repo import CiRepo
from ci_repo import copy_template
from ci_repo import git
from ci_repo import PYTEST
from ci_repo import write

HERE = sys.platform


@pytest.fixture(scope='session')
def template(tmp_path_factory: pytest.TempPathFactory) -> str:
    return build_template(str(tmp_path_factory.mktemp('ci-adoption') / 'repo'))


@pytest.fixture
def calc(template: str, tmp_path) -> CiRepo:  # type: ignore[no-untyped-def]
    return copy_template(template, str(tmp_path / 'repo'))


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
