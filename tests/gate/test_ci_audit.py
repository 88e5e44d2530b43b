"""``oracle-guard ci`` against the cheats that turn a broken pull request green at run time.

Each test: a real repository whose pull request breaks ``calc.add`` (test_add catches it),
plus one cheat. Plain ``python -m pytest`` must exit 0 (the cheat works), and
``oracle-guard ci --base main -- python -m pytest`` must exit 1, naming the test and the
mechanism. The legitimate counterparts at the end must pass.
"""
from __future__ import annotations

import os
import textwrap

import pytest

from ci_repo import BASE_FILES
from ci_repo import build_template
from ci_repo import CiRepo
from ci_repo import copy_template
from ci_repo import git
from ci_repo import PYTEST
from ci_repo import Run


BASE_TEST_CALC = textwrap.dedent(BASE_FILES['tests/test_calc.py'])
FROZEN_ADD = '''\
    budget: 1
    freezes:
      - id: FZ-1
        nodeid: tests/test_calc.py::test_add
        class: order-dependent
        evidence: "fails after test_mul when run in reverse order"
        owner: alice
        expires: 2099-01-01
    '''


@pytest.fixture(scope='session')
def template(tmp_path_factory: pytest.TempPathFactory) -> str:
    return build_template(str(tmp_path_factory.mktemp('ci-template') / 'repo'))


@pytest.fixture
def calc(template: str, tmp_path) -> CiRepo:  # type: ignore[no-untyped-def]
    return copy_template(template, str(tmp_path / 'repo'))


def cheat_works_but_ci_fails(calc: CiRepo, files: dict, code: str, *names: str,
                             test_command=PYTEST) -> Run:  # type: ignore[no-untyped-def]
    calc.pull_request(files)
    plain, ci = calc.both(test_command)
    assert plain.rc == 0, f'the cheat should turn plain pytest green:\n{plain.out}'
    assert ci.rc == 1, ci.out
    assert ci.summary.startswith('oracle-guard ci: '), ci.out
    lines = ci.lines(code)
    assert lines, f'no {code} in:\n{ci.out}'
    for name in names:
        assert any(name in line for line in lines), f'{name} not named by {code}:\n{ci.out}'
    return ci


# -- the run itself ------------------------------------------------------------------------
def test_autouse_fixture_skipping_through_a_computed_name_fails_ci(calc: CiRepo) -> None:
    ci = cheat_works_but_ci_fails(calc, {'tests/conftest.py': '''\
        import pytest


        @pytest.fixture(autouse=True)
        def _later(request):
            if 'add' in request.node.name:
                getattr(pytest, ''.join(['s', 'k', 'i', 'p']))('flaky on CI')
        '''}, 'OG706', 'tests/test_calc.py::test_add', 'AddCase::test_add_unit')
    assert 'test command exited 0' in ci.summary


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


def test_skip_exception_re_exported_from_a_helper_outside_tests_fails_ci(calc: CiRepo) -> None:
    cheat_works_but_ci_fails(calc, {
        'tools/__init__.py': '',
        'tools/outcomes.py': 'from _pytest.outcomes import Skipped as Done\n',
        'tests/conftest.py': '''\
            import pytest

            from tools.outcomes import Done


            @pytest.fixture(autouse=True)
            def _done(request):
                if 'add' in request.node.name:
                    raise Done('not today')
            ''',
    }, 'OG706', 'tests/test_calc.py::test_add')


def test_pytest_exit_with_returncode_0_in_a_session_fixture_fails_ci(calc: CiRepo) -> None:
    cheat_works_but_ci_fails(calc, {'tests/conftest.py': '''\
        import pytest


        @pytest.fixture(scope='session', autouse=True)
        def _stop():
            pytest.exit('done early', returncode=0)
        '''}, 'OG702', 'pytest.exit', 'returncode=0')


def test_os_exit_0_in_a_conftest_fails_ci(calc: CiRepo) -> None:
    cheat_works_but_ci_fails(calc, {'tests/conftest.py': 'import os\n\nos._exit(0)\n'},
                             'OG702', 'start-up')


def test_os_exit_0_inside_a_test_fixture_names_the_running_test(calc: CiRepo) -> None:
    cheat_works_but_ci_fails(calc, {'tests/conftest.py': '''\
        import os

        import pytest


        @pytest.fixture(autouse=True)
        def _bye(request):
            if request.node.name == 'test_add':
                os._exit(0)
        '''}, 'OG702', 'tests/test_calc.py::test_add was running')


def test_patched_function_runtest_fails_ci(calc: CiRepo) -> None:
    cheat_works_but_ci_fails(calc, {'tests/conftest.py': '''\
        import _pytest.python
        import _pytest.unittest

        _pytest.python.Function.runtest = lambda self: None
        _pytest.unittest.TestCaseFunction.runtest = lambda self: None
        '''}, 'OG707', 'tests/test_calc.py::test_add', 'never ran')


def test_pyfunc_call_hook_returning_early_fails_ci(calc: CiRepo) -> None:
    cheat_works_but_ci_fails(calc, {'tests/conftest.py': '''\
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
    cheat_works_but_ci_fails(calc, {'tests/conftest.py': OUTER_CALL}, 'OG707',
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
    cheat_works_but_ci_fails(calc, {'tests/test_calc.py': unit, 'tests/conftest.py': OUTER_CALL},
                             'OG707', 'tests/test_calc.py::AddCase::test_add_unit',
                             'own function never ran')


def test_swapped_function_object_fails_ci(calc: CiRepo) -> None:
    cheat_works_but_ci_fails(calc, {'tests/conftest.py': '''\
        def pytest_collection_modifyitems(items):
            for item in items:
                if item.name == 'test_add':
                    item.obj = lambda: None
        '''}, 'OG708', 'tests/test_calc.py::test_add', 'swapped')


def test_code_replaced_by_a_fixed_copy_at_import_time_fails_ci(calc: CiRepo) -> None:
    # Same name and first line as the real test: only the compiled code tells them apart.
    cheat_works_but_ci_fails(calc, {'tests/test_calc.py': '''\
        from calc import add


        def test_add():
            assert add(2, 3) == 5


        def _fixed():
            assert add(2, 3) == 6


        test_add.__code__ = _fixed.__code__.replace(
            co_name='test_add', co_firstlineno=test_add.__code__.co_firstlineno)
        '''}, 'OG708', 'tests/test_calc.py::test_add', '__code__')


def test_report_rewritten_to_passed_fails_ci(calc: CiRepo) -> None:
    cheat_works_but_ci_fails(calc, {'tests/conftest.py': '''\
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
    cheat_works_but_ci_fails(calc, {'tests/conftest.py': '''\
        if True:
            def pytest_collection_modifyitems(items):
                items[:] = [i for i in items if 'add' not in i.name]
        '''}, 'OG703', 'tests/test_calc.py::test_add', 'AddCase::test_add_unit',
        'tests/properties/test_add_props.py::test_add_commutes')


def test_collection_hook_bound_through_globals_fails_ci(calc: CiRepo) -> None:
    cheat_works_but_ci_fails(calc, {'tests/conftest.py': DROP_ADD_TESTS + '''\

        globals()['pytest_' + 'collection_modifyitems'] = _drop
        '''}, 'OG703', 'tests/test_calc.py::test_add')


def test_collection_hook_star_imported_from_a_helper_fails_ci(calc: CiRepo) -> None:
    cheat_works_but_ci_fails(calc, {
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
    cheat_works_but_ci_fails(calc, {'tests/conftest.py': '''\
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
    cheat_works_but_ci_fails(calc, {'pytest.ini': PYTEST_INI.format(addopts)}, code,
                             'tests/test_calc.py::test_add')


def test_narrowed_tests_roots_do_not_narrow_the_inventory(calc: CiRepo) -> None:
    # The pull request points [tool.oracle-guard] tests at a folder without test_add;
    # the base side's wider roots still count.
    cheat_works_but_ci_fails(calc, {
        'pyproject.toml': BASE_FILES['pyproject.toml'].replace(
            'src = ["src/"]', 'src = ["src/"]\n        tests = ["tests/properties/"]'),
        'pytest.ini': PYTEST_INI.format('--ignore tests/test_calc.py'),
    }, 'OG703', 'tests/test_calc.py::test_add')


def test_addopts_switching_the_plugin_off_does_not_switch_off_the_audit(calc: CiRepo) -> None:
    ci = cheat_works_but_ci_fails(calc, {
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
    cheat_works_but_ci_fails(calc, {
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
    cheat_works_but_ci_fails(calc, {
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
    ci = cheat_works_but_ci_fails(calc, {
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


def test_frozen_test_with_a_live_ledger_row_passes_ci(calc: CiRepo) -> None:
    calc.pull_request({'tests/freeze_ledger.yaml': FROZEN_ADD}, bug=False)
    report = os.path.join(calc.path, '..', 'review.md')
    summary = os.path.join(calc.path, '..', 'step-summary.md')
    with open(summary, 'w', encoding='utf-8') as f:
        f.write('# earlier step\n')
    # A freeze row added is an oracle change: a person approves it (rule 47).
    ci = calc.ci(PYTEST, '--today', '2098-12-01', '--report', report, '--oracle-approved',
                 env={'GITHUB_STEP_SUMMARY': summary})
    assert ci.rc == 0, ci.out
    with open(report, encoding='utf-8') as f:
        text = f.read()
    assert '### Freeze rows added' in text
    assert '| FZ-1 | tests/test_calc.py::test_add | order-dependent | alice | 2099-01-01 |' in text
    with open(summary, encoding='utf-8') as f:
        assert f.read() == '# earlier step\n' + text


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
    ci = cheat_works_but_ci_fails(calc, {
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


# -- Hypothesis: the lock at call time, and examples that were really drawn ----------------
PROPERTY = '''\
from hypothesis import example, given, settings, strategies as st

from calc import add


@settings(max_examples=200, derandomize=True, database=None)
@example(0, 0)
@given(st.integers(0, 10), st.integers(0, 10))
def test_add_matches_sum(a, b):
    assert add(a, b) == a + b
'''
PROPERTY_LOCK = '{"version": 1, "properties": {"test_add_matches_sum": ' \
                '{"max_examples": 200, "derandomize": true}}}\n'
# With the plugin on, its own call-time checks fail these cheats in plain pytest too; the
# pull request therefore switches it off, which oracle-guard ci undoes.
PLUGIN_OFF = PYTEST_INI.format('-p no:oracle_guard')
# A bug only the property finds (the unit tests never add 7).
SEVEN_BUG = 'def add(a, b):\n    return a + b + (a == 7)\n\n\ndef mul(a, b):\n    return a * b\n'


def test_hypothesis_settings_swapped_after_collection_fail_ci(tmp_path) -> None:  # type: ignore[no-untyped-def]
    template = build_template(str(tmp_path / 'template'), {
        'tests/properties/test_add_props.py': PROPERTY,
        'tests/domain_lock.json': PROPERTY_LOCK,
    })
    calc = copy_template(template, str(tmp_path / 'repo'))
    ci = cheat_works_but_ci_fails(calc, {
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
        'tests/domain_lock.json': PROPERTY_LOCK,
    })
    calc = copy_template(template, str(tmp_path / 'repo'))
    ci = cheat_works_but_ci_fails(calc, {
        'src/calc/__init__.py': SEVEN_BUG,
        'tests/strategies.py': HELPER_STRATEGY.format(list(range(7))),
    }, 'OG611', 'test_add_matches_sum tests less than at the base revision')
    assert any(line.startswith('tests/test_add_prop.py:') for line in ci.lines('OG611')), ci.out


def test_hypothesis_property_that_draws_no_example_fails_ci(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The lock holds derandomize only: nothing in it says how many examples to draw.
    template = build_template(str(tmp_path / 'template'), {
        'tests/properties/test_add_props.py': PROPERTY,
        'tests/domain_lock.json': PROPERTY_LOCK.replace('"max_examples": 200, ', ''),
    })
    calc = copy_template(template, str(tmp_path / 'repo'))
    cheat_works_but_ci_fails(calc, {
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
