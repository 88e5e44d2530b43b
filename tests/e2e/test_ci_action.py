"""action.yml: the composite GitHub Action that runs ``oracle-guard ci``.

GitHub Actions itself cannot run here; the action's own shell step is run with bash, with
the environment the runner would give it, in a real repository.
"""
from __future__ import annotations

import glob
import os
import subprocess
import sys

import pytest
import yaml

from builders.ci_repo import build_template
from builders.ci_repo import CiRepo
from builders.ci_repo import copy_template
from builders.repos import ROOT


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


ENVIRONMENTS = 'Create the gate\'s and the test environment'


def test_action_installs_oracle_guard_from_its_own_checkout_outside_the_checkout() -> None:
    install = step(ENVIRONMENTS)
    assert install['env']['ORACLE_GUARD_SOURCE'] == '${{ github.action_path }}'
    assert install['env']['OG_HOME'] == '${{ runner.temp }}'
    assert '"$ORACLE_GUARD_SOURCE"' in install['run']
    # The gate runs isolated, with the test environment named, and the install step
    # inside it (never a step of its own in the gate's environment).
    script = step('oracle-guard ci')['run']
    assert '"$gate/python" -I -m oracle_guard.cli ci' in script
    assert '--test-python' in script and '--install-command' in script
    # Inputs reach the scripts through the environment, never pasted into the script text.
    for each in action()['runs']['steps']:
        assert '${{' not in each.get('run', ''), each


def run_step(calc: CiRepo, name: str = 'oracle-guard ci', **env: str
             ) -> subprocess.CompletedProcess[str]:
    script = step(name)['run']
    return subprocess.run(['bash', '-e', '-c', script], cwd=calc.path, text=True,
                          capture_output=True, env=calc.env(env))


@pytest.fixture
def calc(tmp_path) -> CiRepo:  # type: ignore[no-untyped-def]
    template = build_template(str(tmp_path / 'template'))
    repo = copy_template(template, str(tmp_path / 'repo'))
    # Both environments are this suite's own (the end-to-end test below creates real ones).
    venv = os.path.dirname(os.path.dirname(sys.executable))
    for env in ('gate', 'tests'):
        os.symlink(venv, str(tmp_path / f'oracle-guard-{env}'))
    repo.home = str(tmp_path)  # type: ignore[attr-defined]
    return repo


def test_action_step_runs_oracle_guard_ci_and_fails_a_cheat(calc: CiRepo) -> None:
    calc.pull_request({'tests/conftest.py': (
        'import pytest\n\n\n@pytest.fixture(autouse=True)\ndef _later(request):\n'
        '    if request.node.name == "test_add":\n        getattr(pytest, "sk" + "ip")("x")\n')})
    proc = run_step(calc, OG_BASE='main', OG_FORMAT='github', OG_REPORT='', OG_INSTALL='',
                    OG_HOME=calc.home,  # type: ignore[attr-defined]
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


# -- end to end: both environments created for real ----------------------------------------
FAKE_GATE = 'print("oracle-guard ci: 0 finding(s); test command exited 0")\n'
# Run by pip while it builds the project in the install step: it rewrites every module of
# the gate it can find so that the gate would find nothing. The gate has loaded them all.
REWRITING_SETUP = """\
import glob, os, sys
from setuptools import setup

home = os.environ.get("OG_HOME", "")
for path in glob.glob(os.path.join(home, "oracle-guard-*", "lib", "python*", "site-packages",
                                   "oracle_guard", "**", "*.py"), recursive=True):
    with open(path, "a") as f:
        f.write("\\nraise SystemExit(0)\\n")
setup()
"""


def test_action_steps_with_two_environments_fail_a_cheat_that_attacks_the_gate(
        calc: CiRepo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    home = str(tmp_path / 'runner-temp')
    os.makedirs(home)
    calc.pull_request({
        'oracle_guard/__init__.py': '',  # a root package named like the gate
        'oracle_guard/cli.py': FAKE_GATE,
        'setup.py': REWRITING_SETUP,
    })
    env = {'OG_HOME': home, 'PIP_DISABLE_PIP_VERSION_CHECK': '1'}
    made = run_step(calc, ENVIRONMENTS, ORACLE_GUARD_SOURCE=ROOT, **env)
    assert made.returncode == 0, made.stdout + made.stderr
    assert os.path.isfile(os.path.join(home, 'oracle-guard-gate', 'pyvenv.cfg'))
    proc = run_step(calc, OG_BASE='main', OG_FORMAT='text', OG_REPORT='',
                    OG_INSTALL='python -m pip install --quiet pytest .',
                    OG_TEST_COMMAND="python -m pytest -q -p 'no:cacheprovider'", **env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert ': OG729 ' in out, out  # the root oracle_guard/ package
    assert 'tests/test_calc.py::test_add' in out or ': OG701 ' in out, out
    assert proc.stdout.rstrip().splitlines()[-1].startswith('oracle-guard ci: '), out
    assert ': OG726 ' in out, out  # the test environment's oracle_guard was rewritten
    # The attack did rewrite the gate's files on disk; the gate had loaded them already.
    gate_cli = glob.glob(os.path.join(home, 'oracle-guard-gate', 'lib', 'python*',
                                      'site-packages', 'oracle_guard', 'cli.py'))
    with open(gate_cli[0], encoding='utf-8') as f:
        assert f.read().rstrip().endswith('raise SystemExit(0)')
