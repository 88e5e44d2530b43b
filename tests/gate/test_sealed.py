"""The sealed gate: it runs isolated from the checkout, refuses what it cannot judge
(exit 2), and its own plugin cannot be shadowed.
"""

from __future__ import annotations

import ast
import sys
import textwrap

from builders.calc import EXIT_0_AT_EXIT
from builders.calc import NEW_TEST
from builders.ci_repo import build_template
from builders.ci_repo import CiRepo
from builders.ci_repo import copy_template
from builders.ci_repo import PYTEST


# -- isolation -----------------------------------------------------------------------------
def test_root_oracle_guard_package_shadowing_the_plugin_fails_ci(calc: CiRepo) -> None:
    # python -m pytest puts the checkout first on sys.path: -p oracle_guard imports this.
    calc.pull_request({'oracle_guard/__init__.py': '',
                       'oracle_guard/runtime/__init__.py': '',
                       'oracle_guard/runtime/pytest_plugin.py': EXIT_0_AT_EXIT})
    # The gate itself runs isolated (-I), as the action runs it: the checkout is not on
    # its sys.path. (Without -I, `python -m oracle_guard.cli` would import this package.)
    ci = calc.finish(calc.start([sys.executable, '-I', *calc.ci_args()[1:]]))
    assert ci.rc == 1, ci.out
    assert [line.split(':')[0] for line in ci.lines('OG729')] == ['oracle_guard/__init__.py'], \
        ci.out  # the package; its modules are not findings of their own
    assert ci.lines('OG701'), ci.out  # the shadowing plugin recorded nothing


def test_the_preload_imports_the_gate_and_nothing_of_the_test_machinery() -> None:
    # Every module the gate process runs is imported before the pull request's code runs;
    # the ones that run only inside a pytest process (the plugin, the base collection's
    # probe, the freeze reruns' plugin) are not, and neither is pytest or Hypothesis.
    import subprocess

    code = textwrap.dedent("""\
        import pkgutil, sys
        import oracle_guard
        from oracle_guard.gate import sealed
        sealed.preload()
        names = [i.name for i in pkgutil.walk_packages(oracle_guard.__path__, 'oracle_guard.')
                 if not i.name.endswith('__main__')]
        print(sorted(n for n in names if n not in sys.modules))
        print(sorted(m for m in ('pytest', '_pytest', 'hypothesis') if m in sys.modules))
        """)
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                          check=True)
    missing, machinery = proc.stdout.splitlines()
    # canary_items is imported all the same: the gate reads its plan's variable name there.
    assert ast.literal_eval(missing) == [
        f'oracle_guard.runtime.{name}' for name in (
            'collection_probe', 'lock_runtime', 'property_namespace', 'pytest_plugin',
            'unfrozen')], proc.stdout
    assert machinery == '[]', proc.stdout


def test_a_test_folder_named_pluggy_is_not_a_shadowing_module(calc: CiRepo) -> None:
    # No __init__.py: a namespace folder, which never wins over the installed package.
    calc.pull_request({'tests/pluggy/test_more.py': 'def test_more():\n    pass\n'},
                      bug=False)
    ci = calc.ci(PYTEST)
    assert ci.rc == 0, ci.out


def test_gate_run_from_the_repository_root_leaves_the_checkout_off_its_path(calc: CiRepo) -> None:
    # A root yaml.py would be what the gate imports to read the ledger, after the tests ran.
    calc.pull_request({**NEW_TEST, 'yaml.py': 'import os\n\nos._exit(0)\n'})
    ci = calc.ci(PYTEST)  # python -m oracle_guard.cli from the repository root
    assert ci.summary.startswith('oracle-guard ci: '), ci.out
    assert 'the checkout was on the gate\'s sys.path' in ci.out, ci.out


# -- bad input -----------------------------------------------------------------------------
def test_a_test_command_that_is_not_pytest_is_exit_2(calc: CiRepo) -> None:
    calc.pull_request(NEW_TEST, bug=False)
    ci = calc.ci([sys.executable, '-c', 'pass'])
    assert ci.rc == 2, ci.out
    assert 'must run pytest' in ci.out, ci.out


def test_a_test_environment_that_cannot_be_inspected_is_exit_2(calc: CiRepo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    calc.pull_request(NEW_TEST, bug=False)
    ci = calc.ci(PYTEST, '--test-python', str(tmp_path / 'no-such-python'))
    assert ci.rc == 2, ci.out
    assert 'cannot inspect the test environment' in ci.out, ci.out
    assert 'Traceback' not in ci.out


def test_an_install_step_that_fails_is_exit_2(calc: CiRepo) -> None:
    calc.pull_request(NEW_TEST, bug=False)
    ci = calc.ci(PYTEST, '--install-command', 'exit 3')
    assert ci.rc == 2, ci.out
    assert "'exit 3' exited 3" in ci.out, ci.out


# -- honest counterparts -------------------------------------------------------------------
def test_project_whose_src_is_a_pytest_plugin_passes_ci(tmp_path) -> None:  # type: ignore[no-untyped-def]
    plugin = ('import pytest\n\n\n@pytest.fixture\ndef five():\n    return {}\n\n\n'
              'def pytest_report_header(config):\n    return "calc plugin"\n')
    calc_template = build_template(str(tmp_path / 'template'), {
        'src/calc/plugin.py': plugin.format(5), 'conftest.py': 'pytest_plugins = ["calc.plugin"]\n'})
    calc = copy_template(calc_template, str(tmp_path / 'repo'))
    calc.pull_request({
        'src/calc/plugin.py': plugin.format('2 + 3'),
        'tests/test_plugin.py': 'from calc import add\n\n\ndef test_five(five):\n'
                                '    assert add(2, 3) == five\n',
    }, bug=False)
    ci = calc.ci(PYTEST)
    assert ci.rc == 0, ci.out


def test_project_with_its_own_test_naming_passes_ci(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # python_functions without test_*: the canaries are collected all the same.
    from builders.ci_repo import BASE_FILES

    config = textwrap.dedent(BASE_FILES['pyproject.toml']).replace(
        'pythonpath = ["src"]', 'pythonpath = ["src"]\npython_functions = ["check_*", "test_add*"]')
    calc_template = build_template(str(tmp_path / 'template'), {
        'pyproject.toml': config,
        'tests/test_calc.py': 'from calc import add\n\n\ndef check_add():\n'
                              '    assert add(2, 3) == 5\n'})
    calc = copy_template(calc_template, str(tmp_path / 'repo'))
    calc.pull_request({'tests/test_checks.py': 'from calc import mul\n\n\ndef check_mul():\n'
                       '    assert mul(2, 2) == 4\n'}, bug=False)
    ci = calc.ci(PYTEST)
    assert ci.rc == 0, ci.out
