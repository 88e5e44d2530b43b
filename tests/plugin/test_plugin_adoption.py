"""The plugin accepts what check-named-freezes accepts: baselined silences and
environment conditions (rules 39, 40), and nothing true everywhere (rule 41)."""
from __future__ import annotations

import pytest

PYPROJECT = '[project]\nname = "app"\nrequires-python = ">=3.9"\n\n[tool.oracle-guard]\nsrc = ["src/"]\n'


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyprojecttoml(PYPROJECT)
    pytester.mkdir('tests')
    pytester.path.joinpath('tests/domain_lock.json').write_text('{"version": 1, "properties": {}}\n')
    pytester.path.joinpath('tests/freeze_ledger.yaml').write_text('budget: 0\nfreezes: []\n')
    return pytester


def write_test(pytester: pytest.Pytester, source: str) -> None:
    pytester.path.joinpath('tests/test_env.py').write_text(
        'import sys\nimport unittest\n\nimport pytest\n\n' + source)


def test_environment_skip_that_holds_here_skips_without_a_freeze(project):
    write_test(project, f'@pytest.mark.skipif(sys.platform == {__import__("sys").platform!r}, '
                        'reason="not here")\ndef test_a():\n    assert 0\n\n'
                        'def test_b():\n    assert 1\n')
    result = project.runpytest_inprocess('-rs')
    result.assert_outcomes(passed=1, skipped=1)


def test_environment_skip_that_does_not_hold_here_runs_the_test(project):
    write_test(project, '@unittest.skipIf(sys.platform == "plan9", "x")\n'
                        'def test_a():\n    assert 1\n')
    project.runpytest_inprocess().assert_outcomes(passed=1)


def test_condition_true_everywhere_still_fails_the_session(project):
    write_test(project, '@pytest.mark.skipif(sys.version_info > (2,), reason="x")\n'
                        'def test_a():\n    assert 0\n')
    result = project.runpytest_inprocess()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes()
    result.stdout.fnmatch_lines(['*skipif without a freeze id*'])


def test_baselined_silence_is_accepted_and_a_new_one_is_not(project, monkeypatch):
    from oracle_guard.commands.baseline import main

    legacy = '@pytest.mark.skip(reason="legacy")\ndef test_a():\n    assert 0\n\n'
    write_test(project, legacy + 'def test_b():\n    assert 1\n')
    project.run('git', 'init', '-q')
    monkeypatch.chdir(project.path)
    assert main([]) == 0
    project.runpytest_inprocess().assert_outcomes(passed=1, skipped=1)
    write_test(project, legacy + '@pytest.mark.skip(reason="legacy")\ndef test_b():\n'
                                 '    assert 1\n')
    result = project.runpytest_inprocess()
    result.assert_outcomes()
    result.stdout.fnmatch_lines(['*test_b: @pytest.mark.skip without a freeze id*'])


def test_plugin_warns_when_the_hooks_are_pinned_to_another_commit(project):
    from oracle_guard.reading.install_origin import installed_origin

    write_test(project, 'def test_a():\n    assert 1\n')
    entry = ('repos:\n  - repo: https://example.invalid/oracle-guard\n    rev: {rev}\n'
             '    hooks:\n      - id: check-named-freezes\n')
    project.path.joinpath('.pre-commit-config.yaml').write_text(entry.format(rev='deadbeef' * 5))
    result = project.runpytest_inprocess()
    result.stdout.fnmatch_lines(['oracle-guard: warning: the oracle-guard plugin here is '
                                 'commit *, but .pre-commit-config.yaml pins the hooks at '
                                 'deadbeefdead*'])
    commit = installed_origin().commit
    project.path.joinpath('.pre-commit-config.yaml').write_text(entry.format(rev=commit))
    assert 'warning' not in project.runpytest_inprocess().stdout.str()
