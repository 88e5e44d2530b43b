"""The plugins the test command switches off (``-p no:NAME``, on its command line or in
``PYTEST_ADDOPTS``) are off in the gate's own runs too: the reference run, the base rerun,
the evidence runs and the base collection meet the plugins the test command's run meets.

The calc project turns every warning into an error (``filterwarnings = ["error"]``); its
test command switches pytest's warnings plugin off. An honest pull request deprecates an
argument of ``add`` (a ``DeprecationWarning`` at each call): its test command passes, and
so must the reference run of the base property against it.
"""
from __future__ import annotations

import pytest

from builders.ci_repo import BASE_FILES
from builders.ci_repo import build_template
from builders.ci_repo import CiRepo
from builders.ci_repo import copy_template
from builders.ci_repo import PYTEST
from builders.ci_repo import shared_template
from oracle_guard.gate.reference_process import switched_off_plugins

pytestmark = pytest.mark.reference_run

STRICT_WARNINGS = BASE_FILES['pyproject.toml'].replace(
    'pythonpath = ["src"]', 'pythonpath = ["src"]\nfilterwarnings = ["error"]')
# The honest change: ``add`` warns that its keyword argument is going away.
DEPRECATING = '''\
import warnings


def add(a, b, *, check=None):
    warnings.warn('check is deprecated', DeprecationWarning, stacklevel=2)
    return a + b


def mul(a, b):
    return a * b
'''


@pytest.fixture(scope='session')
def strict_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    return shared_template(tmp_path_factory, 'calc-strict-warnings', lambda path: build_template(
        path, {'pyproject.toml': STRICT_WARNINGS}))


@pytest.fixture
def strict(strict_template: str, tmp_path) -> CiRepo:  # type: ignore[no-untyped-def]
    return copy_template(strict_template, str(tmp_path / 'repo'))


@pytest.mark.parametrize('where', ['command line', 'PYTEST_ADDOPTS'])
def test_a_plugin_the_test_command_switches_off_is_off_in_the_reference_run(
        strict: CiRepo, where: str) -> None:
    strict.pull_request({'src/calc/__init__.py': DEPRECATING}, bug=False)
    # Without the option the warning is an error: plain pytest fails the change.
    plain = strict.finish(strict.start(PYTEST))
    assert plain.rc == 1 and 'DeprecationWarning' in plain.out, plain.out
    if where == 'command line':
        run = strict.ci((*PYTEST, '-p', 'no:warnings'))
    else:
        run = strict.ci(PYTEST, env={'PYTEST_ADDOPTS': '-p no:warnings'})
    assert run.rc == 0, run.out
    assert run.summary == 'oracle-guard ci: 0 finding(s); test command exited 0', run.out


def test_the_switched_off_plugins_are_read_in_every_spelling_pytest_takes() -> None:
    command = ['python', '-m', 'pytest', '-p', 'no:randomly', '-pno:xdist', '-p', 'myplugin',
               '-p', 'no:oracle_guard', 'tests/']
    assert switched_off_plugins(command, '-p no:cov -p "no:randomly" -q') == (
        'no:randomly', 'no:xdist', 'no:cov')
    # The gate's own plugin stays on; an option pytest would refuse adds nothing.
    assert switched_off_plugins(['pytest', '-p', 'no:oracle_guard']) == ()
    assert switched_off_plugins(['pytest'], '-p "no:cov') == ()
    assert switched_off_plugins(['pytest', '-p']) == ()
