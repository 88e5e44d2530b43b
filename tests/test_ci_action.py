"""action.yml: the composite GitHub Action that runs ``oracle-guard ci``.

GitHub Actions itself cannot run here; the action's own shell step is run with bash, with
the environment the runner would give it, in a real repository.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml

from ci_repo import build_template
from ci_repo import CiRepo
from ci_repo import copy_template
from conftest import ROOT


def action() -> dict:  # type: ignore[type-arg]
    with open(os.path.join(ROOT, 'action.yml'), encoding='utf-8') as f:
        return yaml.safe_load(f)


def step(name: str) -> dict:  # type: ignore[type-arg]
    return next(s for s in action()['runs']['steps'] if s.get('name') == name)


def test_action_is_composite_with_the_documented_inputs() -> None:
    data = action()
    assert data['runs']['using'] == 'composite'
    inputs = data['inputs']
    assert 'github.event.pull_request.base.sha' in inputs['base']['default']
    assert 'github.base_ref' in inputs['base']['default']
    assert inputs['test-command']['default'] == 'python -m pytest'
    assert inputs['format']['default'] == 'github'
    assert 'python-version' in inputs


def test_action_installs_oracle_guard_from_its_own_checkout() -> None:
    install = step('Install oracle-guard from this action\'s own checkout')
    assert install['env']['ORACLE_GUARD_SOURCE'] == '${{ github.action_path }}'
    assert '"$ORACLE_GUARD_SOURCE"' in install['run']
    # Inputs reach the scripts through the environment, never pasted into the script text.
    for each in action()['runs']['steps']:
        assert '${{' not in each.get('run', ''), each


def run_step(calc: CiRepo, **env: str) -> subprocess.CompletedProcess[str]:
    script = step('oracle-guard ci')['run']
    path = os.path.dirname(sys.executable) + os.pathsep + os.environ.get('PATH', '')
    return subprocess.run(['bash', '-e', '-c', script], cwd=calc.path, text=True,
                          capture_output=True, env=calc.env({'PATH': path, **env}))


@pytest.fixture
def calc(tmp_path) -> CiRepo:  # type: ignore[no-untyped-def]
    template = build_template(str(tmp_path / 'template'))
    return copy_template(template, str(tmp_path / 'repo'))


def test_action_step_runs_oracle_guard_ci_and_fails_a_cheat(calc: CiRepo) -> None:
    calc.pull_request({'tests/conftest.py': (
        'import pytest\n\n\n@pytest.fixture(autouse=True)\ndef _later(request):\n'
        '    if request.node.name == "test_add":\n        getattr(pytest, "sk" + "ip")("x")\n')})
    proc = run_step(calc, OG_BASE='main', OG_FORMAT='github', OG_REPORT='',
                    OG_TEST_COMMAND="python -m pytest -q -p 'no:cacheprovider' "
                                    '-p no:hypothesispytest')
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert '::error file=tests/test_calc.py,line=8,col=1,title=OG706::' in proc.stdout
    assert proc.stdout.rstrip().endswith('test command exited 0')


def test_action_step_without_a_base_stops_with_a_clear_error(calc: CiRepo) -> None:
    proc = run_step(calc, OG_BASE='origin/', OG_FORMAT='github', OG_REPORT='',
                    OG_TEST_COMMAND='python -m pytest')
    assert proc.returncode == 2
    assert 'no base revision' in proc.stdout
