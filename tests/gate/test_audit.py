"""The audit of the test run: every test of the inventory was collected and ran its own
function, and every skip or xfail is explained by a freeze, the baseline or an environment
condition that held in that run.
"""

from __future__ import annotations

import textwrap

import pytest

from builders.calc import cheat_fails_ci_naming
from builders.calc import FROZEN_ADD
from builders.ci_repo import adopt
from builders.ci_repo import BASE_FILES
from builders.ci_repo import build_template
from builders.ci_repo import CiRepo
from builders.ci_repo import copy_template
from builders.ci_repo import shared_template
from builders.ci_repo import git
from builders.ci_repo import PYTEST
from builders.dedupe import attack
from builders.dedupe import BUG
from builders.dedupe import CALC_PROPERTY
from builders.dedupe import CALC_PROPERTY_LOCK
from builders.dedupe import cheat
from builders.dedupe import dd_cheat_fails_ci
from builders.dedupe import GOOD
from builders.dedupe import IGNORING
from builders.dedupe import property_failed_in_the_reference_run
from builders.dedupe import PROPERTY_ID
from builders.dedupe import PYPROJECT
from builders.dedupe import SORTED_PROPERTY
from builders.dedupe import TWO_UNITS
from builders.dedupe import UNIT_TESTS_FOR_THE_BUG


def test_code_object_swapped_by_a_computed_setattr_in_a_unit_test_module_fails_ci(
        dd: CiRepo) -> None:
    # No `__code__ =` for rule 35 to read: the attribute name is built at run time.
    dd_cheat_fails_ci(dd, {'tests/test_aaa.py': '''\
import dd


def _fixed(xs):
    return sorted(set(xs))


setattr(dd.dedupe, '__co' + 'de__', _fixed.__code__)


def test_import():
    assert dd
'''}, 'OG714')


# -- the oracle changed without approval (rule 47) ----------------------------------------
def test_new_root_pytest_ini_deselecting_the_property_fails_ci(dd: CiRepo) -> None:
    # pytest.ini wins over pyproject.toml: a new file, not an edit of the old configuration.
    ci = dd_cheat_fails_ci(dd, {
        'pytest.ini': f'[pytest]\npythonpath = src\naddopts = --deselect {PROPERTY_ID}\n',
        'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}, 'OG704', 'OG740')
    assert any(PROPERTY_ID in line for line in ci.lines('OG704')), ci.out


# -- pytest 9's own configuration file -------------------------------------------------------
# A root pytest.toml wins over pyproject.toml. It deselects the property; the unit tests
# expect the bug. The hooks judge it as pytest configuration (rule 33, OG740); the
# reference tree takes every pytest configuration file from the base revision (rule 44),
# pytest.toml too, so the property runs there and fails on the bug (OG730).
PYTEST_TOML = '''\
[pytest]
pythonpath = ["src"]
addopts = ["--deselect", "tests/properties/test_dd_props.py::test_dedupe_matches_set"]
'''


@pytest.mark.reference_run
def test_new_root_pytest_toml_deselecting_the_property_fails_ci(dd: CiRepo) -> None:
    _, ci = attack(dd, {'pytest.toml': PYTEST_TOML, 'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG},
                   plain_rc=0)
    assert any('pytest.toml: pytest configuration file' in line
               for line in ci.lines('OG740')), ci.out
    assert property_failed_in_the_reference_run(ci), ci.out
    assert not any(PROPERTY_ID in line and 'deselected' in line for line in ci.lines('OG733')), \
        ci.out


LEGACY = 'from dd import dedupe\n\n\ndef test_old():\n    assert dedupe([]) == []\n'


def test_test_moved_into_a_folder_addopts_ignores_fails_ci(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Rule 52 takes it for a move (name and body unchanged), the record of what
    # adoption left out names the tests that were there, not this one.
    path = adopt(str(tmp_path / 'repo'), IGNORING, {
        'src/dd/__init__.py': GOOD, 'tests/test_dd.py': TWO_UNITS,
        'tests/legacy/test_old.py': LEGACY,
        'tests/properties/test_dd_props.py': SORTED_PROPERTY}, [{'src/dd/__init__.py': BUG}]).path
    ci = cheat(CiRepo(path), {
        'tests/test_dd.py': TWO_UNITS.split('\n\ndef test_four')[0],
        'tests/legacy/test_old.py': LEGACY + '\n\ndef test_four():\n'
                                    '    assert dedupe([4, 3, 2, 1]) == [1, 2, 3, 4]\n'})
    where = [line.split(': ')[0] for line in ci.lines('OG703')]
    assert where == ['tests/legacy/test_old.py:8:1'], ci.out


# == rule 52: a move the review report accepts must still run ===============================
MOVED_BODY = '    assert dedupe([4, 3, 2, 1]) == [1, 2, 3, 4]\n'


HEAD = TWO_UNITS.split('\n\ndef test_four')[0]


MOVES = {
    # into a class pytest does not collect (its name), a nested function, a module pytest
    # does not collect (its name): the identity is gone, no test of the change is it
    'class': ({'tests/test_dd.py': f'{HEAD}\n\nclass Helpers:\n    def test_four(self):\n'
                                   f'    {MOVED_BODY}'}, 'OG740'),
    'nested': ({'tests/test_dd.py': f'{HEAD}\n\ndef _later():\n    def test_four():\n'
                                    f'    {MOVED_BODY}\n    return test_four\n'}, 'OG740'),
    'module': ({'tests/test_dd.py': HEAD,
                'tests/dd_cases.py': f'from dd import dedupe\n\n\ndef test_four():\n{MOVED_BODY}'},
               'OG740'),
    # into a Test class with an __init__: a test of the inventory that pytest cannot collect
    'class_with_init': ({'tests/test_dd.py': f'{HEAD}\n\nclass TestMoved:\n'
                                             '    def __init__(self):\n        pass\n\n'
                                             f'    def test_four(self):\n    {MOVED_BODY}'},
                        'OG703'),
}


@pytest.fixture(scope='session')
def two_units_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    return shared_template(tmp_path_factory, 'audit-moves', lambda path: adopt(path, PYPROJECT, {
        'src/dd/__init__.py': GOOD, 'tests/test_dd.py': TWO_UNITS,
        'tests/properties/test_dd_props.py': SORTED_PROPERTY}, [{'src/dd/__init__.py': BUG}]).path)


@pytest.mark.parametrize('where', sorted(MOVES))
def test_failing_test_moved_where_pytest_does_not_run_it_fails_ci(
        two_units_template: str, tmp_path, where: str) -> None:  # type: ignore[no-untyped-def]
    # The body unchanged, so rule 52 might take it for a move.
    files, code = MOVES[where]
    ci = cheat(copy_template(two_units_template, str(tmp_path / 'repo')), files)
    assert ci.lines(code), ci.out
    assert 'test_four' in ' '.join(ci.lines(code)), ci.out


BASE_TEST_CALC = textwrap.dedent(BASE_FILES['tests/test_calc.py'])


def test_github_format_prints_annotations_and_the_summary_line(calc: CiRepo) -> None:
    calc.pull_request({'tests/conftest.py': '''\
        import pytest


        @pytest.fixture(autouse=True)
        def _later(request):
            if request.node.name == 'test_add':
                pytest.skip('later')
        '''})
    ci = calc.ci(PYTEST, '--format', 'github')
    assert ci.rc == 1
    assert any(line.startswith('::error file=tests/test_calc.py,line=8,col=1,title=OG706::')
               for line in ci.out.splitlines()), ci.out
    assert ci.summary == 'oracle-guard ci: 2 finding(s); test command exited 0', ci.out


def test_github_format_folds_many_findings_of_one_code_into_one_annotation(
        calc: CiRepo) -> None:
    # GitHub shows a few annotations a step: past ten of one code the rest are plain log
    # lines, summed up in one annotation, and the summary still counts every finding.
    calc.pull_request({
        'tests/test_many.py': '''\
            import pytest


            @pytest.mark.parametrize('n', range(15))
            def test_many(n):
                getattr(pytest, ''.join(['s', 'k', 'i', 'p']))('later')
            '''}, bug=False)
    ci = calc.ci(PYTEST, '--format', 'github')
    lines = ci.out.splitlines()
    annotations = [line for line in lines if line.startswith('::error') and 'title=OG706' in line]
    assert len(annotations) == 11, ci.out
    assert '5 more OG706 finding(s), printed in the log above' in annotations[-1]
    assert len([line for line in lines if line.startswith('tests/test_many.py:') and
                ': OG706 ' in line]) == 5, ci.out
    # ... and the hooks' own OG310 for the computed name, one annotation of its own
    assert len([line for line in lines if 'title=OG310' in line]) == 1, ci.out
    assert ci.summary == 'oracle-guard ci: 16 finding(s); test command exited 0', ci.out


def test_pytest_exit_with_returncode_0_in_a_session_fixture_fails_ci(calc: CiRepo) -> None:
    cheat_fails_ci_naming(calc, {'tests/conftest.py': '''\
        import pytest


        @pytest.fixture(scope='session', autouse=True)
        def _stop():
            pytest.exit('done early', returncode=0)
        '''}, 'OG702', 'pytest.exit', 'returncode=0')


def test_os_exit_0_in_a_conftest_fails_ci(calc: CiRepo) -> None:
    cheat_fails_ci_naming(calc, {'tests/conftest.py': 'import os\n\nos._exit(0)\n'},
                             'OG702', 'start-up')


def test_os_exit_0_inside_a_test_fixture_names_the_running_test(calc: CiRepo) -> None:
    cheat_fails_ci_naming(calc, {'tests/conftest.py': '''\
        import os

        import pytest


        @pytest.fixture(autouse=True)
        def _bye(request):
            if request.node.name == 'test_add':
                os._exit(0)
        '''}, 'OG702', 'tests/test_calc.py::test_add was running')


def test_patched_function_runtest_fails_ci(calc: CiRepo) -> None:
    cheat_fails_ci_naming(calc, {'tests/conftest.py': '''\
        import _pytest.python
        import _pytest.unittest

        _pytest.python.Function.runtest = lambda self: None
        _pytest.unittest.TestCaseFunction.runtest = lambda self: None
        '''}, 'OG707', 'tests/test_calc.py::test_add', 'never ran')


def test_pyfunc_call_hook_returning_early_fails_ci(calc: CiRepo) -> None:
    cheat_fails_ci_naming(calc, {'tests/conftest.py': '''\
        def pytest_pyfunc_call(pyfuncitem):
            return True
        '''}, 'OG707', 'tests/test_calc.py::test_add', 'own function never ran')


# An outer hook runs test_add's body itself (its failure swallowed), and pytest's own call
# of it never comes: plain pytest goes green.
OUTER_CALL = '''\
    import pytest


    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(item):
        if item.name == 'test_add':
            try:
                item.obj()
            except AssertionError:
                pass
        yield


    def pytest_pyfunc_call(pyfuncitem):
        return True if pyfuncitem.name == 'test_add' else None
    '''


def test_a_test_entered_only_by_an_outer_hook_before_its_call_fails_ci(calc: CiRepo) -> None:
    """Rule 45 (OG707): the watch of the test's own code starts innermost around the call,
    so the body run by an outer hook, with what that hook chooses, before a call pytest
    never makes (the pyfunc hook returns early) is not the test's call."""
    cheat_fails_ci_naming(calc, {'tests/conftest.py': OUTER_CALL}, 'OG707',
                             'tests/test_calc.py::test_add', 'own function never ran')


def test_a_unittest_case_entered_only_by_its_set_up_fails_ci(calc: CiRepo) -> None:
    """The same for a unittest case (rule 45, OG707): its watch starts where unittest's
    run calls the test method, after setUp, so a setUp that runs the method itself and
    then has the case's own call do nothing leaves the case not entered."""
    unit = BASE_TEST_CALC.replace(
        'class AddCase(unittest.TestCase):\n',
        'class AddCase(unittest.TestCase):\n'
        '    def setUp(self):\n'
        '        type(self).test_add_unit(self)\n'
        '        self._callTestMethod = lambda method: None\n\n')
    assert unit != BASE_TEST_CALC
    cheat_fails_ci_naming(calc, {'tests/test_calc.py': unit, 'tests/conftest.py': OUTER_CALL},
                             'OG707', 'tests/test_calc.py::AddCase::test_add_unit',
                             'own function never ran')


def test_swapped_function_object_fails_ci(calc: CiRepo) -> None:
    cheat_fails_ci_naming(calc, {'tests/conftest.py': '''\
        def pytest_collection_modifyitems(items):
            for item in items:
                if item.name == 'test_add':
                    item.obj = lambda: None
        '''}, 'OG708', 'tests/test_calc.py::test_add', 'swapped')


def test_code_replaced_by_a_fixed_copy_at_import_time_fails_ci(calc: CiRepo) -> None:
    # Same name and first line as the real test: only the compiled code tells them apart.
    cheat_fails_ci_naming(calc, {'tests/test_calc.py': '''\
        from calc import add


        def test_add():
            assert add(2, 3) == 5


        def _fixed():
            assert add(2, 3) == 6


        test_add.__code__ = _fixed.__code__.replace(
            co_name='test_add', co_firstlineno=test_add.__code__.co_firstlineno)
        '''}, 'OG708', 'tests/test_calc.py::test_add', '__code__')


def test_report_rewritten_to_passed_fails_ci(calc: CiRepo) -> None:
    cheat_fails_ci_naming(calc, {'tests/conftest.py': '''\
        import pytest


        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_makereport(item, call):
            outcome = yield
            report = outcome.get_result()
            report.outcome = 'passed'
            report.longrepr = None
        '''}, 'OG709', 'tests/test_calc.py::test_add', 'raised')


# -- what pytest collects ------------------------------------------------------------------
DROP_ADD_TESTS = '''\
        def _drop(items):
            items[:] = [i for i in items if 'add' not in i.name]
'''


def test_collection_hook_hidden_under_if_true_fails_ci(calc: CiRepo) -> None:
    cheat_fails_ci_naming(calc, {'tests/conftest.py': '''\
        if True:
            def pytest_collection_modifyitems(items):
                items[:] = [i for i in items if 'add' not in i.name]
        '''}, 'OG703', 'tests/test_calc.py::test_add', 'AddCase::test_add_unit',
        'tests/properties/test_add_props.py::test_add_commutes')


def test_collection_hook_bound_through_globals_fails_ci(calc: CiRepo) -> None:
    cheat_fails_ci_naming(calc, {'tests/conftest.py': DROP_ADD_TESTS + '''\

        globals()['pytest_' + 'collection_modifyitems'] = _drop
        '''}, 'OG703', 'tests/test_calc.py::test_add')


def test_collection_hook_star_imported_from_a_helper_fails_ci(calc: CiRepo) -> None:
    cheat_fails_ci_naming(calc, {
        'tests/ordering.py': '''\
            def pytest_collection_modifyitems(config, items):
                keep = [i for i in items if 'add' not in i.name]
                config.hook.pytest_deselected(items=[i for i in items if i not in keep])
                items[:] = keep
            ''',
        'tests/conftest.py': 'from ordering import *  # noqa: F403\n',
    }, 'OG704', 'tests/test_calc.py::test_add', 'deselected')


def test_test_file_renamed_to_a_name_pytest_does_not_collect_fails_ci(calc: CiRepo) -> None:
    calc.pull_request({})
    git(calc.path, 'mv', 'tests/test_calc.py', 'tests/check_calc.py')
    git(calc.path, 'commit', '-q', '-m', 'rename')
    plain, ci = calc.both()
    assert plain.rc == 0, plain.out
    assert ci.rc == 1
    assert any('tests/check_calc.py::test_add' in line for line in ci.lines('OG703')), ci.out


def test_collect_ignore_through_globals_setdefault_fails_ci(calc: CiRepo) -> None:
    cheat_fails_ci_naming(calc, {'tests/conftest.py': '''\
        globals().setdefault('collect_' + 'ignore', []).append('test_calc.py')
        '''}, 'OG703', 'tests/test_calc.py::test_add', 'tests/test_calc.py::TestMore::test_zero')


PYTEST_INI = '[pytest]\npythonpath = src\naddopts = {}\n'


@pytest.mark.parametrize(('addopts', 'code'), [
    ('--deselect tests/test_calc.py::test_add --deselect tests/test_calc.py::AddCase '
     '--deselect tests/properties', 'OG704'),
    ('--ignore tests/test_calc.py', 'OG703'),
    ('-k "not add"', 'OG704'),
])
def test_pytest_ini_addopts_leaving_tests_out_fails_ci(calc: CiRepo, addopts: str,
                                                       code: str) -> None:
    cheat_fails_ci_naming(calc, {'pytest.ini': PYTEST_INI.format(addopts)}, code,
                             'tests/test_calc.py::test_add')


def test_narrowed_tests_roots_do_not_narrow_the_inventory(calc: CiRepo) -> None:
    # The pull request points [tool.oracle-guard] tests at a folder without test_add;
    # the base side's wider roots still count.
    cheat_fails_ci_naming(calc, {
        'pyproject.toml': BASE_FILES['pyproject.toml'].replace(
            'src = ["src/"]', 'src = ["src/"]\n        tests = ["tests/properties/"]'),
        'pytest.ini': PYTEST_INI.format('--ignore tests/test_calc.py'),
    }, 'OG703', 'tests/test_calc.py::test_add')


def test_addopts_switching_the_plugin_off_does_not_switch_off_the_audit(calc: CiRepo) -> None:
    ci = cheat_fails_ci_naming(calc, {
        'pytest.ini': PYTEST_INI.format('-p no:oracle_guard'),
        'tests/conftest.py': '''\
            import pytest


            @pytest.fixture(autouse=True)
            def _later(request):
                if 'add' in request.node.name:
                    pytest.skip('later')
            ''',
    }, 'OG713', 'no:oracle_guard')
    assert any('tests/test_calc.py::test_add' in line for line in ci.lines('OG706')), ci.out


def test_plugin_metadata_committed_in_the_repository_fails_ci(calc: CiRepo) -> None:
    # `python -m pytest` puts the working folder on sys.path: importlib.metadata finds the
    # committed .dist-info and pytest loads its pytest11 entry point as a plugin.
    cheat_fails_ci_naming(calc, {
        'helper-0.1.dist-info/METADATA': 'Metadata-Version: 2.1\nName: helper\nVersion: 0.1\n',
        'helper-0.1.dist-info/entry_points.txt': '[pytest11]\nhelper = helperplug\n',
        'helperplug.py': '''\
            import pytest


            @pytest.hookimpl(tryfirst=True)
            def pytest_runtest_setup(item):
                if item.name == 'test_add':
                    pytest.skip('later')
            ''',
    }, 'OG715', 'helper-0.1.dist-info/entry_points.txt')


def test_tests_package_shadowing_the_src_package_fails_ci(calc: CiRepo) -> None:
    cheat_fails_ci_naming(calc, {
        'tests/calc/__init__.py': 'def add(a, b):\n    return a + b\n\n\n'
                                  'def mul(a, b):\n    return a * b\n',
        # pytest puts tests/ first on sys.path when it imports this conftest.
        'tests/conftest.py': 'import calc  # noqa: F401\n',
    }, 'OG712', 'tests/calc/__init__.py', 'src/calc')


@pytest.mark.parametrize('pre_commit_config', [
    'repos: []\n',
    'repos:\n  - repo: local\n    hooks:\n      - id: forbid-mixed-oracle-diff\n'
    '        name: forbid-mixed-oracle-diff\n        entry: oracle-guard-forbid-mixed-oracle-diff\n'
    '        args: [--src, vendor/]\n        language: system\n        pass_filenames: false\n',
], ids=['emptied', 're-pointed'])
def test_pre_commit_config_changed_by_the_pull_request_is_not_obeyed(
        calc: CiRepo, pre_commit_config: str) -> None:
    # A freeze row arrives with the bug; the pull request's own .pre-commit-config.yaml
    # no longer runs (or re-points) the hook that refuses a ledger change next to src/.
    ci = cheat_fails_ci_naming(calc, {
        '.pre-commit-config.yaml': pre_commit_config,
        'tests/freeze_ledger.yaml': FROZEN_ADD,
        'tests/test_calc.py': BASE_TEST_CALC.replace(
            '\ndef test_add():', '\n@pytest.mark.skip(reason="FZ-1")\ndef test_add():'),
    }, 'OG201', 'tests/freeze_ledger.yaml', 'src/calc/__init__.py')
    assert 'test command exited 0' in ci.summary


# -- legitimate pull requests pass ---------------------------------------------------------
SRC_FIX = {'src/calc/__init__.py': 'def add(a, b):\n    return a + b\n\n\n'
                                  'def mul(a, b):\n    return a * b if a and b else 0\n'}


def test_src_fix_with_a_new_unit_test_passes_ci(calc: CiRepo) -> None:
    calc.pull_request({**SRC_FIX,
        'tests/test_mul_zero.py': 'from calc import mul\n\n\ndef test_mul_zero():\n'
                                  '    assert mul(0, 5) == 0\n',
    }, bug=False)
    ci = calc.ci()
    assert ci.rc == 0, ci.out
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 0'


def test_a_test_defined_in_both_branches_of_an_if_passes_ci(calc: CiRepo) -> None:
    """A module that defines a test once per branch of an ``if`` (six's ``if six.PY3:``
    ... ``else:``) runs the first branch's function: that is code compiled from the file,
    not a swapped test (rule 43)."""
    calc.pull_request({**SRC_FIX,
        'tests/test_mul_zero.py': '''\
            import sys

            from calc import mul

            if sys.version_info >= (3,):

                def test_mul_zero():
                    assert mul(0, 5) == 0

            else:

                def test_mul_zero():
                    assert mul(0, 5) == 0 * 5
            ''',
    }, bug=False)
    ci = calc.ci()
    assert ci.rc == 0, ci.out
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 0'


def test_a_test_rebound_to_an_earlier_definition_fails_ci(calc: CiRepo) -> None:
    """Two definitions that are not alternatives of one ``if``: the name bound back to the
    first, weaker one is still a replaced test."""
    cheat_fails_ci_naming(calc, {'tests/test_calc.py': '''\
        from calc import add


        def test_add():
            assert add(2, 3) == add(2, 3)


        _weak = test_add


        def test_add():
            assert add(2, 3) == 6


        test_add = _weak
        '''}, 'OG708', 'tests/test_calc.py::test_add', 'line')


def test_fixture_only_conftest_in_a_new_test_folder_next_to_a_src_fix_passes_ci(
        calc: CiRepo) -> None:
    calc.pull_request({**SRC_FIX,
        'tests/unit/conftest.py': '''\
            import pytest


            @pytest.fixture
            def zero():
                return 0
            ''',
        'tests/unit/test_mul_zero.py': 'from calc import mul\n\n\ndef test_mul_zero(zero):\n'
                                       '    assert mul(zero, 5) == 0\n',
    }, bug=False)
    ci = calc.ci()
    assert ci.rc == 0, ci.out


def test_registered_marker_next_to_a_src_fix_passes_ci(calc: CiRepo) -> None:
    calc.pull_request({**SRC_FIX,
        'pyproject.toml': BASE_FILES['pyproject.toml'].replace(
            'pythonpath = ["src"]', 'pythonpath = ["src"]\n        markers = ["slow: a slow test"]'),
        'tests/test_mul_zero.py': 'import pytest\n\nfrom calc import mul\n\n\n'
                                  '@pytest.mark.slow\ndef test_mul_zero():\n'
                                  '    assert mul(0, 5) == 0\n',
    }, bug=False)
    ci = calc.ci()
    assert ci.rc == 0, ci.out


def test_real_failure_keeps_the_test_commands_exit_code(calc: CiRepo) -> None:
    calc.pull_request({})
    ci = calc.ci()
    assert ci.rc == 1
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 1', ci.out


def test_missing_base_is_a_configuration_error(calc: CiRepo) -> None:
    ci = calc.finish(calc.start(calc.ci_args(PYTEST)[:5] + ['no-such-ref', '--', *PYTEST]))
    assert ci.rc == 2, ci.out
    assert 'no-such-ref' in ci.out and 'Traceback' not in ci.out


# -- pytest-xdist: one record per worker --------------------------------------------------
XDIST = (*PYTEST, '-n', '2')


def test_cheats_under_xdist_fail_ci(calc: CiRepo) -> None:
    ci = cheat_fails_ci_naming(calc, {
        'pytest.ini': PYTEST_INI.format('-p no:oracle_guard'),
        'tests/conftest.py': '''\
            import pytest


            @pytest.fixture(autouse=True)
            def _later(request):
                if 'add' in request.node.name:
                    getattr(pytest, 'sk' + 'ip')('later')
            ''',
    }, 'OG706', 'tests/test_calc.py::test_add', test_command=XDIST)
    assert ci.lines('OG713'), ci.out


def test_clean_pull_request_under_xdist_passes_ci(calc: CiRepo) -> None:
    calc.pull_request({**SRC_FIX, 'tests/test_mul_zero.py': 'from calc import mul\n\n\n'
                       'def test_mul_zero():\n    assert mul(0, 5) == 0\n'}, bug=False)
    ci = calc.ci(XDIST)
    assert ci.rc == 0, ci.out


# With the plugin on, its own call-time checks fail these cheats in plain pytest too; the
# pull request therefore switches it off, which oracle-guard ci undoes.
PLUGIN_OFF = PYTEST_INI.format('-p no:oracle_guard')


# A bug only the property finds (the unit tests never add 7).
SEVEN_BUG = 'def add(a, b):\n    return a + b + (a == 7)\n\n\ndef mul(a, b):\n    return a * b\n'


def test_hypothesis_settings_swapped_after_collection_fail_ci(tmp_path) -> None:  # type: ignore[no-untyped-def]
    template = build_template(str(tmp_path / 'template'), {
        'tests/properties/test_add_props.py': CALC_PROPERTY,
        'tests/domain_lock.json': CALC_PROPERTY_LOCK,
    })
    calc = copy_template(template, str(tmp_path / 'repo'))
    ci = cheat_fails_ci_naming(calc, {
        'src/calc/__init__.py': SEVEN_BUG,
        'pytest.ini': PLUGIN_OFF,
        'tests/conftest.py': '''\
            import pytest
            from hypothesis import settings


            @pytest.fixture(autouse=True)
            def _fast(request):
                test = getattr(request.node, 'obj', None)
                if getattr(test, 'is_hypothesis_test', False):
                    test._hypothesis_internal_use_settings = settings(
                        test._hypothesis_internal_use_settings, max_examples=1)
            ''',
    }, 'OG711', 'tests/properties/test_add_props.py::test_add_matches_sum', 'max_examples')
    assert ci.lines('OG713'), ci.out


HELPER_STRATEGY = 'from hypothesis import strategies as st\n\nNUMBERS = st.sampled_from({})\n'


HELPER_PROPERTY = '''\
from hypothesis import given, settings

from calc import add
from strategies import NUMBERS


@settings(max_examples=200, derandomize=True, database=None)
@given(NUMBERS, NUMBERS)
def test_add_matches_sum(a, b):
    assert add(a, b) == a + b
'''


def test_sampled_from_shrunk_in_a_helper_module_under_a_version_1_lock_fails_ci(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Rows 23-25 against the base revision's source: the version-1 entry has no field for
    the helper's elements, and the plugin has no whole strategy to compare at call time."""
    template = build_template(str(tmp_path / 'template'), {
        'tests/strategies.py': HELPER_STRATEGY.format(list(range(10))),
        'tests/test_add_prop.py': HELPER_PROPERTY,
        'tests/domain_lock.json': CALC_PROPERTY_LOCK,
    })
    calc = copy_template(template, str(tmp_path / 'repo'))
    ci = cheat_fails_ci_naming(calc, {
        'src/calc/__init__.py': SEVEN_BUG,
        'tests/strategies.py': HELPER_STRATEGY.format(list(range(7))),
    }, 'OG611', 'test_add_matches_sum tests less than at the base revision')
    assert any(line.startswith('tests/test_add_prop.py:') for line in ci.lines('OG611')), ci.out


def test_hypothesis_property_that_draws_no_example_fails_ci(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The lock holds derandomize only: nothing in it says how many examples to draw.
    template = build_template(str(tmp_path / 'template'), {
        'tests/properties/test_add_props.py': CALC_PROPERTY,
        'tests/domain_lock.json': CALC_PROPERTY_LOCK.replace('"max_examples": 200, ', ''),
    })
    calc = copy_template(template, str(tmp_path / 'repo'))
    cheat_fails_ci_naming(calc, {
        'src/calc/__init__.py': SEVEN_BUG,
        'pytest.ini': PLUGIN_OFF,
        'tests/conftest.py': '''\
            import pytest
            from hypothesis import Phase, settings


            @pytest.fixture(autouse=True)
            def _explicit_only(request):
                test = getattr(request.node, 'obj', None)
                if getattr(test, 'is_hypothesis_test', False):
                    test._hypothesis_internal_use_settings = settings(
                        test._hypothesis_internal_use_settings, phases=[Phase.explicit])
            ''',
    }, 'OG710', 'tests/properties/test_add_props.py::test_add_matches_sum', 'no example')


def test_module_that_cannot_be_imported_is_one_finding_naming_why(calc: CiRepo) -> None:
    """dateutil without freezegun: one OG703 for the module, with its error, not one for
    each of its tests."""
    broken = ('import not_an_installed_module_of_this_test\n\n\n' +
              ''.join(f'def test_{n}():\n    assert 1\n\n\n' for n in 'abc'))
    calc.pull_request({'tests/test_broken.py': broken}, bug=False)
    ci = calc.ci()
    assert ci.rc == 1, ci.out
    (line,) = ci.lines('OG703')
    assert line.startswith('tests/test_broken.py:1:1: OG703 tests/test_broken.py could not be '
                           'collected, so its 3 test(s) did not run: '), line
    assert 'not_an_installed_module_of_this_test' in line
