"""The pytest plugin, run by pytester against real test files (SPEC §5b, issue 3 §2)."""
from __future__ import annotations

import sys
import types

import pytest

TODAY = '2026-06-01'
PYPROJECT = '[tool.oracle-guard]\nsrc = ["src/"]\n'
HEADERS = '''\
class TestParse:
    def test_crlf_roundtrip(self):
        assert True

    def test_lf(self):
        assert True


def test_clock_fails():
    assert False, "clock skew"
'''


def ledger(*rows: str, budget: int = 3) -> str:
    return f'budget: {budget}\nfreezes:\n' + ''.join(rows)


def row(freeze_id: str = 'FZ-14', nodeid: str = 'tests/test_headers.py::TestParse::test_crlf_roundtrip',
        owner: str = 'alice', expires: str = '2026-12-31', freeze_class: str = 'order-dependent',
        extra: str = '') -> str:
    return (f'  - id: {freeze_id}\n    nodeid: {nodeid}\n    class: {freeze_class}\n'
            f'    evidence: "fails after test_cache_warm"\n    owner: {owner}\n'
            f'    expires: {expires}\n{extra}')


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A guarded project: the config table, an empty domain lock, a test file."""
    pytester.makepyprojecttoml(PYPROJECT)
    pytester.mkdir('tests')
    pytester.path.joinpath('tests/domain_lock.json').write_text('{"version": 1, "properties": {}}\n')
    pytester.path.joinpath('tests/test_headers.py').write_text(HEADERS)
    return pytester


def write(pytester: pytest.Pytester, rel: str, text: str) -> None:
    path = pytester.path.joinpath(rel)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess('--oracle-guard-today', TODAY, '-rsxX', *args)


def failed_before_any_test(result: pytest.RunResult) -> None:
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes()  # nothing passed, failed, skipped or xfailed: nothing ran
    result.stdout.fnmatch_lines(['*oracle-guard: the session was failed*'])


# -- inert outside a guarded repository --------------------------------------------------

def test_plugin_is_inert_without_a_ledger_or_config_table(pytester):
    pytester.makepyprojecttoml('[tool.pytest.ini_options]\naddopts = ""\n')
    pytester.makepyfile(test_a='import pytest\n\n@pytest.mark.skip\ndef test_a():\n    pass\n')
    result = run(pytester)
    assert result.ret == 0
    result.assert_outcomes(skipped=1)
    assert 'oracle-guard:' not in result.stdout.str()


def test_plugin_is_active_with_only_a_ledger(pytester):
    write(pytester, 'pyproject.toml', '[project]\nname = "x"\n')
    write(pytester, 'tests/freeze_ledger.yaml', ledger())
    write(pytester, 'tests/test_a.py', 'import pytest\n\n@pytest.mark.skip\ndef test_a():\n    pass\n')
    failed_before_any_test(run(pytester))


# -- live, run-mode and expired freezes --------------------------------------------------

def test_live_freeze_skips_the_test_with_its_id_expiry_and_owner(project):
    write(project, 'tests/freeze_ledger.yaml', ledger(row()))
    result = run(project, 'tests/test_headers.py::TestParse')
    assert result.ret == 0
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(['SKIPPED*FZ-14 frozen until 2026-12-31 (owner alice)'])


def test_live_freeze_in_run_mode_runs_as_non_strict_xfail(project):
    write(project, 'tests/freeze_ledger.yaml', ledger(
        row(), row('FZ-15', 'tests/test_headers.py::test_clock_fails', extra='    mode: run\n')))
    result = run(project)
    assert result.ret == 0
    result.assert_outcomes(passed=1, skipped=1, xfailed=1)
    result.stdout.fnmatch_lines(['XFAIL*test_clock_fails*FZ-15 frozen until 2026-12-31*'])


def test_run_mode_freeze_of_a_passing_test_reports_xpass(project):
    write(project, 'tests/freeze_ledger.yaml', ledger(row(extra='    mode: run\n')))
    result = run(project, 'tests/test_headers.py::TestParse')
    assert result.ret == 0
    result.assert_outcomes(passed=1, xpassed=1)


def test_expired_freeze_of_a_passing_test_fails(project):
    write(project, 'tests/freeze_ledger.yaml', ledger(row(expires='2026-05-31')))
    result = run(project, 'tests/test_headers.py::TestParse')
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(['*XPASS(strict)*FZ-14 expired on 2026-05-31 (owner alice)*'])


def test_expired_freeze_of_a_failing_test_fails_too(project):
    write(project, 'tests/freeze_ledger.yaml', ledger(
        row('FZ-15', 'tests/test_headers.py::test_clock_fails', expires='2026-05-31')))
    result = run(project, 'tests/test_headers.py::test_clock_fails')
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(['*FZ-15 expired on 2026-05-31*', '*clock skew*'])


def test_freeze_of_a_never_freezable_class_is_not_applied(project):
    write(project, 'tests/freeze_ledger.yaml', ledger(
        row('FZ-15', 'tests/test_headers.py::test_clock_fails', freeze_class='network')))
    result = run(project, 'tests/test_headers.py::test_clock_fails')
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*FZ-15*not applied, class 'network' cannot be frozen*"])


def test_freeze_of_one_parametrized_case_leaves_the_others_running(project):
    write(project, 'tests/test_params.py',
          'import pytest\n\n@pytest.mark.parametrize("n", [1, 2])\ndef test_p(n):\n    assert n\n')
    write(project, 'tests/freeze_ledger.yaml', ledger(
        row('FZ-15', 'tests/test_params.py::test_p[2]', freeze_class='time-dependent')))
    result = run(project, 'tests/test_params.py')
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(['SKIPPED*test_params.py*FZ-15 frozen*'])


def test_freeze_follows_the_test_into_another_file(project):
    write(project, 'tests/test_headers.py', 'def test_other():\n    assert True\n')
    write(project, 'tests/unit/test_moved.py', HEADERS)
    write(project, 'tests/freeze_ledger.yaml', ledger(row()))
    result = run(project, 'tests/unit/test_moved.py::TestParse', 'tests/test_headers.py')
    assert result.ret == 0
    result.assert_outcomes(passed=2, skipped=1)


CLOCK_ROW = row('FZ-15', 'tests/test_headers.py::test_clock_fails', freeze_class='time-dependent')
NEW_CLOCK_TEST = 'def test_clock_fails():\n    assert False, "a new test, failing"\n'


def test_freeze_does_not_reach_a_new_test_of_the_same_name_in_another_file(project):
    write(project, 'tests/sub/test_other.py', NEW_CLOCK_TEST)
    write(project, 'tests/freeze_ledger.yaml', ledger(CLOCK_ROW))
    result = run(project)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=2, skipped=1, failed=1)
    result.stdout.fnmatch_lines(['tests/sub/test_other.py F*', '*a new test, failing*'])
    result = run(project, 'tests/sub/test_other.py')  # its named file not even collected
    result.assert_outcomes(failed=1)


def test_freeze_of_a_moved_test_shared_by_two_files_applies_to_neither(project):
    write(project, 'tests/test_headers.py', 'def test_other():\n    assert True\n')
    write(project, 'tests/unit/test_moved.py', HEADERS)
    write(project, 'tests/sub/test_new.py', NEW_CLOCK_TEST)
    write(project, 'tests/freeze_ledger.yaml', ledger(CLOCK_ROW))
    result = run(project)
    failed_before_any_test(result)
    result.stdout.fnmatch_lines([(
        'tests/freeze_ledger.yaml:4: FZ-15 names tests/test_headers.py::test_clock_fails, which '
        'no longer defines it, and 2 collected tests have the identity test_clock_fails '
        '(tests/sub/test_new.py, tests/unit/test_moved.py); write the node id of the frozen one'
    )])


def test_session_summary_lists_active_freezes_one_line_each(project):
    write(project, 'tests/freeze_ledger.yaml', ledger(
        row(), row('FZ-15', 'tests/test_headers.py::test_clock_fails', owner='bob',
                   expires='2026-05-01')))
    result = run(project)
    result.stdout.fnmatch_lines([
        '*oracle-guard: active freezes*',
        'FZ-14 tests/test_headers.py::TestParse::test_crlf_roundtrip: skipped until 2026-12-31 '
        '(owner alice)',
        'FZ-15 tests/test_headers.py::test_clock_fails: EXPIRED 2026-05-01 (owner bob)',
    ])


# -- problems that fail the session before any test runs ---------------------------------

@pytest.mark.parametrize('owner', ['unassigned', 'agent', '""'])
def test_row_whose_owner_is_not_a_person_fails_the_session(project, owner):
    write(project, 'tests/freeze_ledger.yaml', ledger(row(owner=owner)))
    result = run(project)
    failed_before_any_test(result)
    result.stdout.fnmatch_lines(['tests/freeze_ledger.yaml:7: FZ-14 *a freeze needs a person*'])
    assert 'active freezes' not in result.stdout.str()  # nothing ran, nothing was frozen


def test_row_whose_identity_matches_no_collected_test_fails_the_session(project):
    write(project, 'tests/test_headers.py', HEADERS.replace('test_crlf_roundtrip', 'test_crlf'))
    write(project, 'tests/freeze_ledger.yaml', ledger(row()))
    result = run(project)
    failed_before_any_test(result)
    result.stdout.fnmatch_lines([
        'tests/freeze_ledger.yaml:4: FZ-14 names tests/test_headers.py::TestParse::'
        'test_crlf_roundtrip, but no collected test has the identity TestParse::test_crlf_roundtrip',
    ])


def test_running_another_file_does_not_alarm_about_rows_outside_it(project):
    write(project, 'tests/test_other.py', 'def test_other():\n    assert True\n')
    write(project, 'tests/freeze_ledger.yaml', ledger(row(nodeid='tests/test_headers.py::TestGone::test_x')))
    result = run(project, 'tests/test_other.py')
    assert result.ret == 0
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize('selection', [
    ['tests/test_headers.py::TestParse::test_lf'],
    ['tests/test_headers.py', '-k', 'test_lf'],
])
def test_selecting_one_test_of_a_file_does_not_alarm_about_its_siblings(project, selection):
    write(project, 'tests/freeze_ledger.yaml', ledger(row()))
    result = run(project, *selection)
    assert result.ret == 0
    result.assert_outcomes(passed=1)


UNNAMED = {
    'bare skip marker': 'import pytest\n\n@pytest.mark.skip\ndef test_a():\n    pass\n',
    'xfail marker': 'import pytest\n\n@pytest.mark.xfail(reason="later")\ndef test_a():\n    pass\n',
    'skipif marker': 'import pytest\n\n@pytest.mark.skipif(True, reason="no")\ndef test_a():\n    pass\n',
    'marker built by getattr': 'import pytest\n\n@getattr(pytest.mark, "sk" + "ip")\ndef test_a():\n    pass\n',
    'param marks': 'import pytest\n\n@pytest.mark.parametrize("x", [pytest.param(1, marks=pytest.mark.xfail)])\ndef test_a(x):\n    pass\n',
    'unittest skip': 'import unittest\n\nclass T(unittest.TestCase):\n    @unittest.skip("x")\n    def test_a(self):\n        pass\n',
    'unittest skip on the class': 'import unittest\n\n@unittest.skip("x")\nclass T(unittest.TestCase):\n    def test_a(self):\n        pass\n',
    'expectedFailure': 'import unittest\n\nclass T(unittest.TestCase):\n    @unittest.expectedFailure\n    def test_a(self):\n        pass\n',
}


@pytest.mark.parametrize('source', UNNAMED.values(), ids=UNNAMED.keys())
def test_silence_without_a_freeze_id_fails_the_session(project, source):
    write(project, 'tests/test_silenced.py', source)
    result = run(project, 'tests/test_silenced.py')
    failed_before_any_test(result)
    result.stdout.fnmatch_lines(['tests/test_silenced.py::*without a freeze id (FZ-<n>)'])


def test_marker_added_by_a_conftest_hook_is_seen(project):
    write(project, 'tests/conftest.py', (
        'import pytest\n\n'
        'def pytest_collection_modifyitems(items):\n'
        '    for item in items:\n'
        '        item.add_marker(pytest.mark.skip(reason="quiet"))\n'))
    result = run(project)
    failed_before_any_test(result)
    result.stdout.fnmatch_lines(['*test_lf: @pytest.mark.skip without a freeze id*'])


def test_skip_marker_naming_a_live_freeze_of_that_test_passes(project):
    write(project, 'tests/test_headers.py', 'import pytest\n\n\nclass TestParse:\n'
          '    @pytest.mark.skip(reason="FZ-14 fails after test_cache_warm")\n'
          '    def test_crlf_roundtrip(self):\n        assert True\n')
    write(project, 'tests/freeze_ledger.yaml', ledger(row()))
    result = run(project)
    assert result.ret == 0
    result.assert_outcomes(skipped=1)


@pytest.mark.parametrize('ledger_text, why', [
    (ledger(), 'which is not a row of tests/freeze_ledger.yaml'),
    (ledger(row(expires='2026-01-01')), 'which is not live'),
    (ledger(row(nodeid='tests/test_headers.py::TestParse::test_lf')), 'which belongs to tests/test_headers.py::TestParse::test_lf'),
])
def test_skip_marker_naming_an_unusable_freeze_fails_the_session(project, ledger_text, why):
    write(project, 'tests/test_silenced.py', 'import pytest\n\n\nclass TestParse:\n'
          '    @pytest.mark.skip(reason="FZ-14")\n'
          '    def test_crlf_roundtrip(self):\n        assert True\n')
    write(project, 'tests/freeze_ledger.yaml', ledger_text)
    result = run(project, 'tests/test_silenced.py')
    failed_before_any_test(result)
    result.stdout.fnmatch_lines([f'*@pytest.mark.skip names FZ-14, {why}*'])


def test_allowed_silence_kind_is_not_reported(project):
    project.makepyprojecttoml(PYPROJECT + 'allow-silences = ["skipif"]\n')
    write(project, 'tests/test_silenced.py', UNNAMED['skipif marker'])
    result = run(project, 'tests/test_silenced.py')
    assert result.ret == 0
    result.assert_outcomes(skipped=1)


def test_malformed_ledger_fails_the_session_naming_file_and_line(project):
    write(project, 'tests/freeze_ledger.yaml', 'budget: 1\nbudget: 2\nfreezes: []\n')
    result = run(project)
    failed_before_any_test(result)
    result.stdout.fnmatch_lines(["tests/freeze_ledger.yaml:2: duplicate key 'budget'*"])


def test_ledger_without_a_budget_fails_the_session_as_the_hooks_refuse_it(project):
    write(project, 'tests/freeze_ledger.yaml', 'freezes:\n' + row())
    result = run(project)
    failed_before_any_test(result)
    result.stdout.fnmatch_lines(['tests/freeze_ledger.yaml:1: the ledger has no "budget"*'])


def test_ledger_that_is_a_symlink_fails_the_session_as_the_hooks_refuse_it(project):
    write(project, 'elsewhere/ledger.yaml', ledger(row()))
    project.path.joinpath('tests/freeze_ledger.yaml').symlink_to(
        project.path / 'elsewhere/ledger.yaml')
    result = run(project)
    failed_before_any_test(result)
    result.stdout.fnmatch_lines(['tests/freeze_ledger.yaml:1: is a symlink*'])


def test_broken_config_table_fails_the_session(project):
    project.makepyprojecttoml(PYPROJECT + 'no-such-key = 1\n')
    result = run(project)
    failed_before_any_test(result)
    result.stdout.fnmatch_lines(["pyproject.toml:3: unknown key 'no-such-key'*"])


def test_collect_only_is_failed_too(project):
    write(project, 'tests/freeze_ledger.yaml', ledger(row(owner='unassigned')))
    result = run(project, '--collect-only')
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_bad_today_option_is_a_usage_error(project):
    result = project.runpytest_inprocess('--oracle-guard-today', 'tomorrow')
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "not a date (YYYY-MM-DD): 'tomorrow'" in result.stderr.str()


def test_options_are_documented_in_help(project):
    result = project.runpytest_inprocess('--help')
    result.stdout.fnmatch_lines(['*oracle-guard*', '*--oracle-guard-today=YYYY-MM-DD*',
                                 '*--oracle-guard-root=DIR*'])


def test_root_option_points_at_a_guarded_folder(pytester):
    write(pytester, 'repo/pyproject.toml', PYPROJECT)
    write(pytester, 'repo/tests/freeze_ledger.yaml', ledger(row(owner='unassigned')))
    write(pytester, 'repo/tests/test_headers.py', HEADERS)
    result = run(pytester, '--oracle-guard-root', str(pytester.path / 'repo'), 'repo/tests')
    failed_before_any_test(result)


# -- the runtime domain-lock check -------------------------------------------------------

@pytest.fixture
def lock_check(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """A stand-in for oracle_guard.runtime.lock_runtime recording what it was given.

    The plugin's contract with that module is one function, check_collected(cfg,
    items) -> problems; this proves the plugin calls it at collection and fails the
    session on what it returns, whether or not the real module is installed.
    """
    calls: list[list[str]] = []
    answers: list[str] = []
    module = types.ModuleType('oracle_guard.runtime.lock_runtime')

    def check_collected(cfg, items):  # type: ignore[no-untyped-def]
        calls.append([item.nodeid for item in items])
        return list(answers)

    module.check_collected = check_collected  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, 'oracle_guard.runtime.lock_runtime', module)
    import oracle_guard.runtime
    monkeypatch.setattr(oracle_guard.runtime, 'lock_runtime', module, raising=False)
    calls.append(answers)  # calls[0] is where a test puts the problems to report
    return calls


def test_domain_lock_problems_fail_the_session_before_any_test(project, lock_check):
    lock_check[0].append('tests/test_props.py::test_p: max_examples 10 < locked 200')
    result = run(project)
    failed_before_any_test(result)
    result.stdout.fnmatch_lines(['tests/test_props.py::test_p: max_examples 10 < locked 200'])
    assert lock_check[1] == [
        'tests/test_headers.py::TestParse::test_crlf_roundtrip',
        'tests/test_headers.py::TestParse::test_lf',
        'tests/test_headers.py::test_clock_fails',
    ]


def test_domain_lock_without_problems_lets_the_tests_run(project, lock_check):
    result = run(project, 'tests/test_headers.py::TestParse')
    assert result.ret == 0
    result.assert_outcomes(passed=2)
    assert len(lock_check) == 2


def test_unlocked_property_fails_that_test_through_the_real_lock_check(project):
    write(project, 'tests/test_props.py', (
        'from hypothesis import given, strategies as st\n\n\n'
        '@given(st.integers())\n'
        'def test_int_roundtrip(n):\n'
        '    assert int(str(n)) == n\n'))
    result = run(project, 'tests/test_props.py')
    result.assert_outcomes(failed=1)  # that test fails; the session is not stopped
    result.stdout.fnmatch_lines(['tests/test_props.py::test_int_roundtrip: unlocked property*'])


def test_skip_naming_a_freeze_of_a_same_named_test_in_another_file_fails(project):
    # FZ-15 freezes tests/test_headers.py::test_clock_fails, which still exists there; a
    # skip carrying FZ-15 on a test of the same name elsewhere silences another test.
    write(project, 'tests/sub/test_other.py',
          'import pytest\n\n@pytest.mark.skip(reason="FZ-15")\n' + NEW_CLOCK_TEST)
    write(project, 'tests/freeze_ledger.yaml', ledger(CLOCK_ROW))
    result = run(project)
    failed_before_any_test(result)
    result.stdout.fnmatch_lines([
        '*tests/sub/test_other.py::test_clock_fails: @pytest.mark.skip names FZ-15, which '
        'belongs to tests/test_headers.py::test_clock_fails*',
    ])


def test_expected_failure_named_in_its_comment_is_accepted_at_run_time(project):
    # expectedFailure takes no reason: its id lives in a comment, as the hook reads it.
    write(project, 'tests/test_u.py', 'import unittest\n\n\nclass T(unittest.TestCase):\n'
          '    @unittest.expectedFailure  # FZ-14\n    def test_a(self):\n'
          '        self.assertEqual(1, 2)\n')
    write(project, 'tests/freeze_ledger.yaml', ledger(row(nodeid='tests/test_u.py::T::test_a')))
    result = run(project, 'tests/test_u.py')
    assert 'without a freeze id' not in result.stdout.str()
    result.assert_outcomes(skipped=1)  # the live freeze applies; the session runs
    write(project, 'tests/test_u.py', 'import unittest\n\n\nclass T(unittest.TestCase):\n'
          '    @unittest.expectedFailure\n    def test_a(self):\n'
          '        self.assertEqual(1, 2)\n')
    result = run(project, 'tests/test_u.py')
    result.stdout.fnmatch_lines(['*@unittest.expectedFailure without a freeze id*'])


PARAM_TESTS = 'import pytest\n\n@pytest.mark.parametrize("n", [1, 2, 3])\ndef test_p(n):\n    assert n\n'
PARAM_ROW = row('FZ-15', 'tests/test_param.py::test_p[2]', freeze_class='time-dependent')


def test_frozen_parametrized_case_removed_fails_the_session(project):
    write(project, 'tests/test_param.py', PARAM_TESTS)
    write(project, 'tests/freeze_ledger.yaml', ledger(PARAM_ROW))
    run(project, 'tests/test_param.py').assert_outcomes(passed=2, skipped=1)
    write(project, 'tests/test_param.py', PARAM_TESTS.replace('[1, 2, 3]', '[1, 3]'))
    result = run(project, 'tests/test_param.py')
    failed_before_any_test(result)
    result.stdout.fnmatch_lines(['*FZ-15 names tests/test_param.py::test_p[[]2[]], but no '
                                 'collected case of test_p has the id test_p[[]2[]]*'])


def test_selecting_other_cases_of_a_frozen_function_stays_quiet(project):
    write(project, 'tests/test_param.py', PARAM_TESTS)
    write(project, 'tests/freeze_ledger.yaml', ledger(PARAM_ROW))
    run(project, 'tests/test_param.py::test_p[1]').assert_outcomes(passed=1)
    run(project, 'tests/test_param.py', '-k', 'not 2').assert_outcomes(passed=2)
