"""check-freeze-ledger: decision-table rows 18 to 21 and 27, in real git repositories."""
from __future__ import annotations

import datetime
import os
import subprocess
import sys

import pytest
import yaml
from builders.repos import ROOT

from oracle_guard.config import load_config
from oracle_guard.hooks.check_freeze_ledger import ledger_findings
from oracle_guard.hooks.check_freeze_ledger import main
from oracle_guard.oracle.ledger import parse_ledger
from oracle_guard.repo.gitrepo import GitError
from oracle_guard.repo.tree_view import TreeView

TODAY = '2026-06-01'
LEDGER = 'tests/freeze_ledger.yaml'
TEST_FILE = 'tests/test_headers.py'
HEADERS = '''\
import pytest


class TestParse:
    @pytest.mark.skip(reason="FZ-1 fails after test_cache_warm")
    def test_crlf_roundtrip(self):
        assert True


def test_clock():
    assert True


@pytest.mark.parametrize("case", ["timeout-1", "timeout-2"])
def test_retry(case):
    assert case
'''

SKIP_LINE = '    @pytest.mark.skip(reason="FZ-1 fails after test_cache_warm")\n'


def row(**fields: object) -> dict[str, object]:
    base: dict[str, object] = {
        'id': 'FZ-1',
        'nodeid': f'{TEST_FILE}::TestParse::test_crlf_roundtrip',
        'class': 'order-dependent',
        'evidence': 'fails when scheduled after test_cache_warm',
        'owner': 'alice',
        'expires': '2026-07-01',
    }
    for key, value in fields.items():
        key = key.rstrip('_')
        if value is None:
            base.pop(key, None)
        else:
            base[key] = value
    return base


def ledger_text(*rows: dict[str, object], budget: int | None = None) -> str:
    data = {'budget': len(rows) if budget is None else budget, 'freezes': list(rows)}
    return yaml.safe_dump(data, sort_keys=False)


@pytest.fixture
def frozen(guarded):  # type: ignore[no-untyped-def]
    """The guarded repository with one live freeze, committed the way a person does it.

    The budget is raised in a change of its own; the skip and its row arrive together.
    """
    guarded.write(LEDGER, ledger_text(budget=1))
    guarded.commit('room for one freeze')
    guarded.write(TEST_FILE, HEADERS)
    guarded.write(LEDGER, ledger_text(row()))
    guarded.commit('freeze FZ-1')
    guarded.write('NOTES.md', 'a later, unrelated commit\n')
    guarded.commit('notes')
    return guarded


def check(repo, *args: str):  # type: ignore[no-untyped-def]
    return repo.run(main, '--today', TODAY, *args)


def test_valid_ledger_with_a_live_freeze_passes(frozen):
    result = check(frozen, '--all-files')
    assert (result.rc, result.out) == (0, '')


def test_this_repositorys_own_ledger_passes_its_own_checks():
    cfg = load_config(ROOT)
    with open(os.path.join(ROOT, cfg.ledger), 'rb') as f:
        ledger = parse_ledger(f.read(), cfg.ledger)
    assert ledger.budget == 0
    assert ledger_findings(ledger, cfg, datetime.date.today()) == []


# -- row 18 ------------------------------------------------------------------------------

def test_ledger_row_past_expires_fails(frozen):
    result = check(frozen, '--all-files', '--today', '2026-07-02')
    assert result.rc == 1
    assert result.codes == ['OG501']
    assert f'{LEDGER}:8:1: OG501 FZ-1 expired on 2026-07-01' in result.out


def test_ledger_row_expiring_today_is_still_live(frozen):
    assert check(frozen, '--all-files', '--today', '2026-07-01').rc == 0


def test_expired_row_fails_a_commit_that_changes_nothing_but_the_date(frozen):
    frozen.write('README.md', 'docs\n')
    frozen.add('README.md')
    result = check(frozen, '--today', '2026-08-01')
    assert result.codes == ['OG501']


def test_expired_row_fails_a_commit_that_changes_only_a_test_file(frozen):
    frozen.write('tests/test_app.py', 'def test_parse():\n    assert 1\n')
    frozen.add('tests/test_app.py')
    assert check(frozen, '--today', '2026-08-01').codes == ['OG501']


def test_expired_row_fails_a_commit_that_changes_only_the_ledger(frozen):
    frozen.write(LEDGER, ledger_text(row(evidence='fails after test_cache_warm, seen twice')))
    frozen.add(LEDGER)
    assert check(frozen, '--today', '2026-08-01').codes == ['OG501']


# -- row 19: one finding per problem, each with its code ---------------------------------

ROW_PROBLEMS = {
    'id not of the form FZ-n': (dict(id='FZ14'), 'OG506'),
    'id not a string': (dict(id=14), 'OG506'),
    'id missing': (dict(id=None), 'OG506'),
    'class network': (dict(class_='network'), 'OG507'),
    'class unseeded-entropy': (dict(class_='unseeded-entropy'), 'OG507'),
    'class resource': (dict(class_='resource'), 'OG507'),
    'class unknown': (dict(class_='flaky'), 'OG508'),
    'class missing': (dict(class_=None), 'OG508'),
    'owner missing': (dict(owner=None), 'OG509'),
    'owner empty': (dict(owner=''), 'OG509'),
    'owner unassigned': (dict(owner='unassigned'), 'OG509'),
    'owner agent': (dict(owner='agent'), 'OG509'),
    'owner a bot': (dict(owner='dependabot[bot]'), 'OG509'),
    'owner a coding agent': (dict(owner='claude-agent'), 'OG509'),
    'evidence empty': (dict(evidence='   '), 'OG510'),
    'evidence missing': (dict(evidence=None), 'OG510'),
    'agent_may_extend true': (dict(agent_may_extend=True), 'OG511'),
    'expires not a date': (dict(expires='someday'), 'OG502'),
    'expires missing': (dict(expires=None), 'OG502'),
    'expires beyond max-freeze-days': (dict(expires='2026-09-01'), 'OG503'),
    'unknown key': (dict(reason='flaky'), 'OG512'),
    'nodeid without a test': (dict(nodeid='tests/test_headers.py'), 'OG513'),
    'mode not skip or run': (dict(mode='xfail'), 'OG513'),
    'fixtures not a list': (dict(fixtures='checkout/ok.json'), 'OG513'),
}


@pytest.mark.parametrize('fields, code', ROW_PROBLEMS.values(), ids=ROW_PROBLEMS.keys())
def test_ledger_row_problem_fails_with_its_code(frozen, fields, code):
    frozen.write(LEDGER, ledger_text(row(**fields)))
    result = check(frozen, '--all-files')
    assert result.rc == 1
    # A row whose id changes leaves the skip naming FZ-1: that is rule 29 (OG516) too.
    assert [c for c in result.codes if c != 'OG516'] == [code]
    assert result.out.startswith(f'{LEDGER}:')


@pytest.mark.parametrize('freeze_class, remedy', [
    ('network', 'isolate the test from the network'),
    ('unseeded-entropy', 'lock the seed'),
    ('resource', 'cap the resource'),
])
def test_non_freezable_class_names_its_remedy(frozen, freeze_class, remedy):
    frozen.write(LEDGER, ledger_text(row(class_=freeze_class)))
    result = check(frozen, '--all-files')
    assert f'To fix: {remedy}' in result.out


def test_row_with_several_problems_gets_one_line_per_problem(frozen):
    frozen.write(LEDGER, ledger_text(row(owner='unassigned', evidence='', agent_may_extend=True)))
    result = check(frozen, '--all-files')
    assert sorted(result.codes) == ['OG509', 'OG510', 'OG511']


def test_valid_optional_fields_pass(frozen):
    frozen.write(LEDGER, ledger_text(row(mode='run', agent_may_extend=False,
                                         fixtures=['headers/ok.bin'])))
    assert check(frozen, '--all-files').rc == 0


def test_ledger_over_budget_fails(frozen):
    second = row(id='FZ-2', nodeid=f'{TEST_FILE}::test_clock', class_='time-dependent')
    frozen.write(LEDGER, ledger_text(row(), second, budget=1))
    result = check(frozen, '--all-files')
    assert result.codes == ['OG504']
    assert f'{LEDGER}:1:1: OG504 2 freezes, over the budget of 1' in result.out


def test_duplicate_freeze_id_fails(frozen):
    second = row(nodeid=f'{TEST_FILE}::test_clock', class_='time-dependent')
    frozen.write(LEDGER, ledger_text(row(), second))
    result = check(frozen, '--all-files')
    assert result.codes == ['OG505']
    assert 'duplicate id FZ-1 (first on line 3)' in result.out


def test_max_freeze_days_comes_from_the_config(frozen):
    frozen.write(LEDGER, ledger_text(row(expires='2026-12-01')))
    assert check(frozen, '--all-files').codes == ['OG503']
    assert check(frozen, '--all-files', '--max-freeze-days', '200').rc == 0


@pytest.mark.parametrize('budget_line, message', [
    ('budget: -1\n', "the ledger \"budget\" is -1"),
    ('budget: three\n', "the ledger \"budget\" is 'three'"),
    ('', 'the ledger has no "budget"'),
])
def test_bad_budget_is_a_configuration_error(frozen, budget_line, message):
    frozen.write(LEDGER, budget_line + 'freezes: []\n')
    result = check(frozen, '--all-files')
    assert result.rc == 2
    assert message in result.err
    assert 'Traceback' not in result.err


def test_ledger_with_a_yaml_alias_is_refused(frozen):
    frozen.write(LEDGER, 'budget: &b 1\nfreezes: []\nx: *b\n')
    result = check(frozen, '--all-files')
    assert result.rc == 2
    assert result.err.startswith(f'{LEDGER}:3: YAML aliases')


def test_ledger_that_is_a_symlink_is_refused(frozen):
    outside = os.path.join(os.path.dirname(frozen.path), 'outside.yaml')
    with open(outside, 'w') as f:
        f.write('budget: 0\nfreezes: []\n')
    os.remove(os.path.join(frozen.path, LEDGER))
    os.symlink(outside, os.path.join(frozen.path, LEDGER))
    frozen.add(LEDGER)
    result = check(frozen)
    assert result.rc == 2
    assert 'is a symlink' in result.err


def test_repository_without_a_ledger_passes(guarded):
    guarded.rm(LEDGER)
    guarded.commit('no ledger')
    assert check(guarded, '--all-files').rc == 0


def test_the_hook_writes_nothing(frozen):
    frozen.write(LEDGER, ledger_text(row(owner='agent', expires='2020-01-01')))
    before = frozen.snapshot()
    assert check(frozen, '--all-files').rc == 1
    assert frozen.snapshot() == before


# -- rows 20 and 21: frozen identities ---------------------------------------------------

def test_frozen_test_renamed_fails_naming_row_and_old_location(frozen):
    frozen.write(TEST_FILE, HEADERS.replace('test_crlf_roundtrip', 'test_crlf_roundtrip_v2'))
    frozen.add(TEST_FILE)
    result = check(frozen)
    assert result.codes == ['OG514']
    assert ('FZ-1: frozen identity TestParse::test_crlf_roundtrip was renamed or deleted'
            in result.out)
    assert f'(it was in {TEST_FILE})' in result.out


def test_frozen_test_deleted_with_its_file_fails(frozen):
    frozen.rm(TEST_FILE)
    assert check(frozen).codes == ['OG514']


def test_frozen_test_moved_to_another_class_fails(frozen):
    frozen.write(TEST_FILE, HEADERS.replace('class TestParse', 'class TestHeaders'))
    frozen.add(TEST_FILE)
    assert check(frozen).codes == ['OG514']


def test_frozen_test_moved_to_another_file_passes(frozen):
    os.makedirs(os.path.join(frozen.path, 'tests/unit'))
    frozen.git('mv', TEST_FILE, 'tests/unit/test_moved_headers.py')
    assert check(frozen).rc == 0
    frozen.commit('move')
    assert check(frozen, '--all-files').rc == 0


def test_frozen_test_that_exists_only_in_an_untracked_file_fails(frozen):
    frozen.rm(TEST_FILE)
    frozen.write('tests/test_untracked.py', HEADERS)  # on disk, never added
    assert check(frozen).codes == ['OG514']


def test_frozen_identity_is_judged_on_what_is_staged(frozen):
    frozen.write(TEST_FILE, HEADERS.replace('test_crlf_roundtrip', 'test_renamed'))
    frozen.add(TEST_FILE)
    frozen.write(TEST_FILE, HEADERS)  # the working tree still has it; the commit would not
    assert check(frozen).codes == ['OG514']


def test_commit_touching_no_test_ledger_or_config_skips_the_identity_check(frozen):
    """Nothing the identities depend on changed, so the commit hook does not grep for
    them: a rename that reached the last commit unchecked is left to CI (--all-files,
    ranges), while the expiry check still runs on the unrelated commit."""
    frozen.write(TEST_FILE, HEADERS.replace('test_crlf_roundtrip', 'test_renamed'))
    frozen.commit('rename, committed with --no-verify')
    frozen.write('README.md', 'docs\n')
    frozen.add('README.md')
    assert check(frozen).rc == 0
    assert check(frozen, '--today', '2026-08-01').codes == ['OG501']
    assert check(frozen, '--all-files').codes == ['OG514']


def test_commit_of_the_ledger_alone_still_checks_identities(frozen):
    frozen.write(LEDGER, ledger_text(row(nodeid=f'{TEST_FILE}::TestParse::test_gone')))
    frozen.add(LEDGER)
    assert check(frozen).codes == ['OG514']


def test_commit_touching_the_config_still_checks_identities(frozen):
    # Narrowing the tests roots so the frozen test's file is no longer test code.
    frozen.write('pyproject.toml', frozen.read('pyproject.toml').decode()
                 .replace('src = ["src/"]', 'src = ["src/"]\ntests = ["tests/properties/"]'))
    frozen.add('pyproject.toml')
    assert check(frozen).codes == ['OG514']


def test_unstaged_rename_is_not_what_the_commit_records(frozen):
    frozen.write('README.md', 'docs\n')
    frozen.add('README.md')
    frozen.write(TEST_FILE, HEADERS.replace('test_crlf_roundtrip', 'test_renamed'))  # unstaged
    assert check(frozen).rc == 0


def test_parametrized_frozen_id_resolves_to_its_function(frozen):
    frozen.write(LEDGER, ledger_text(row(nodeid=f'{TEST_FILE}::test_retry[timeout-2]',
                                         class_='time-dependent')))
    unskipped = HEADERS.replace(SKIP_LINE, '')  # FZ-1 now freezes test_retry only
    frozen.write(TEST_FILE, unskipped)
    assert check(frozen, '--all-files').rc == 0
    frozen.write(TEST_FILE, unskipped.replace('def test_retry', 'def test_retried'))
    assert check(frozen, '--all-files').codes == ['OG514']


def test_name_mentioned_only_outside_a_test_function_does_not_count(frozen):
    frozen.write(TEST_FILE, 'NOTE = "test_crlf_roundtrip was here"\n\n\n'
                            'def test_other():\n    assert True\n')
    frozen.add(TEST_FILE)
    assert check(frozen).codes == ['OG514']


# -- the grep behind rows 20 and 21 ------------------------------------------------------

def test_grep_reads_the_index_git_index_file_names(frozen, monkeypatch):
    """`git commit <path>` judges a temporary index, not .git/index."""
    frozen.write(TEST_FILE, HEADERS.replace('test_crlf_roundtrip', 'test_renamed'))
    frozen.add(TEST_FILE)  # the default index has the rename
    _edit_test(frozen)
    other = os.path.join(frozen.path, '.git', 'commit-index')  # HEAD plus the test edit
    for args in (('read-tree', 'HEAD'), ('add', 'tests/test_app.py')):
        subprocess.run(('git', *args), cwd=frozen.path, check=True,
                       env={**os.environ, 'GIT_INDEX_FILE': other})
    view = TreeView(frozen.path, '')
    assert view.grep(['test_crlf_roundtrip'], [TEST_FILE]) == []
    monkeypatch.setenv('GIT_INDEX_FILE', other)
    assert view.grep(['test_crlf_roundtrip'], [TEST_FILE]) == [TEST_FILE]
    assert check(frozen).rc == 0  # the commit records the test under its old name
    monkeypatch.delenv('GIT_INDEX_FILE')
    assert check(frozen).codes == ['OG514']


def test_grep_pathspecs_are_literal(repo):
    """A tests root named ':t/' is that folder, not the pathspec magic for 't/'."""
    repo.write(':t/test_colon.py', 'def test_word():\n    pass\n')
    repo.write('t/test_plain.py', 'def test_word():\n    pass\n')
    repo.commit('two roots')
    head = repo.git('rev-parse', 'HEAD').strip()
    for rev in (None, '', head):
        assert TreeView(repo.path, rev).grep(['test_word'], [':t/']) == [':t/test_colon.py']


def test_grep_without_a_match_is_empty_but_a_git_failure_is_an_error(frozen):
    assert TreeView(frozen.path, None).grep(['no_such_word'], ['tests/']) == []
    with pytest.raises(GitError, match='`git grep` failed'):
        TreeView(frozen.path, '0' * 40).grep(['test_clock'], ['tests/'])


# -- row 27: loosening is a change of its own --------------------------------------------

def _edit_test(repo) -> None:  # type: ignore[no-untyped-def]
    repo.write('tests/test_app.py', 'from app import parse\n\n\ndef test_parse():\n'
                                    '    assert parse(b"y") == b"y"\n')


def test_budget_raised_together_with_test_edit_fails(frozen):
    frozen.write(LEDGER, ledger_text(row(), budget=3))
    _edit_test(frozen)
    frozen.add()
    result = check(frozen)
    assert result.codes == ['OG515']
    assert 'budget raised from 1 to 3 in the same change as tests/test_app.py' in result.out


def test_budget_raised_together_with_src_edit_fails(frozen):
    frozen.write(LEDGER, ledger_text(row(), budget=3))
    frozen.write('src/app.py', 'def parse(b):\n    return bytes(b)\n')
    frozen.add()
    assert check(frozen).codes == ['OG515']


def test_budget_raised_alone_passes(frozen):
    frozen.write(LEDGER, ledger_text(row(), budget=3))
    frozen.add()
    assert check(frozen).rc == 0


def test_expiry_extended_together_with_test_edit_fails(frozen):
    frozen.write(LEDGER, ledger_text(row(expires='2026-08-01')))
    _edit_test(frozen)
    frozen.add()
    result = check(frozen)
    assert result.codes == ['OG515']
    assert 'FZ-1: expiry moved from 2026-07-01 to 2026-08-01' in result.out


def test_expiry_extended_alone_passes(frozen):
    frozen.write(LEDGER, ledger_text(row(expires='2026-08-01')))
    frozen.add()
    assert check(frozen).rc == 0


def test_expiry_shortened_together_with_test_edit_passes(frozen):
    frozen.write(LEDGER, ledger_text(row(expires='2026-06-15')))
    _edit_test(frozen)
    frozen.add()
    assert check(frozen).rc == 0


def test_row_renumbered_with_a_later_expiry_together_with_test_edit_fails(frozen):
    frozen.write(LEDGER, ledger_text(row(id='FZ-2', expires='2026-08-01')))
    frozen.write(TEST_FILE, HEADERS.replace('FZ-1', 'FZ-2'))
    frozen.add()
    result = check(frozen)
    assert result.codes == ['OG515']
    assert 'FZ-1: expiry moved' in result.out


def test_agent_may_extend_switched_on_together_with_test_edit_fails(frozen):
    frozen.write(LEDGER, ledger_text(row(agent_may_extend=True)))
    _edit_test(frozen)
    frozen.add()
    assert sorted(check(frozen).codes) == ['OG511', 'OG515']


def test_row_deleted_while_its_test_is_still_skipped_together_with_test_edit_fails(frozen):
    frozen.write(LEDGER, ledger_text(budget=1))
    _edit_test(frozen)
    frozen.add()
    result = check(frozen)
    assert result.codes == ['OG516']  # rule 29 names the skip that still uses the id
    assert (f'FZ-1 removed from the ledger (deleted or renumbered) while {TEST_FILE}:5 '
            'still names it') in result.out


def test_row_deleted_together_with_its_skip_passes(frozen):
    frozen.write(LEDGER, ledger_text(budget=1))
    frozen.write(TEST_FILE, HEADERS.replace(SKIP_LINE, ''))
    frozen.add()
    assert check(frozen).rc == 0


def test_row_moved_to_another_test_while_the_old_one_stays_skipped_fails(frozen):
    """One id, two silenced tests: the row now names test_clock, test_crlf_roundtrip keeps
    its skip. Rows are paired by id, so without this the move looked like an edit."""
    frozen.write(LEDGER, ledger_text(row(nodeid=f'{TEST_FILE}::test_clock')))
    frozen.write(TEST_FILE, HEADERS.replace(
        'def test_clock', '@pytest.mark.skip(reason="FZ-1")\ndef test_clock'))
    frozen.add()
    result = check(frozen)
    assert result.codes == ['OG515']
    assert (f'{LEDGER}:4:1: OG515 FZ-1 moved from TestParse::test_crlf_roundtrip to test_clock '
            f'while {TEST_FILE}:5 still silences TestParse::test_crlf_roundtrip') in result.out


def test_row_moved_to_another_test_with_the_old_skip_removed_passes(frozen):
    frozen.write(LEDGER, ledger_text(row(nodeid=f'{TEST_FILE}::test_clock')))
    frozen.write(TEST_FILE, HEADERS.replace(SKIP_LINE, '').replace(
        'def test_clock', '@pytest.mark.skip(reason="FZ-1")\ndef test_clock'))
    frozen.add()
    assert check(frozen).rc == 0


def test_row_moved_to_another_file_with_its_test_is_not_a_move_to_another_test(frozen):
    os.makedirs(os.path.join(frozen.path, 'tests/unit'))
    frozen.git('mv', TEST_FILE, 'tests/unit/test_moved_headers.py')
    frozen.write(LEDGER, ledger_text(
        row(nodeid='tests/unit/test_moved_headers.py::TestParse::test_crlf_roundtrip')))
    _edit_test(frozen)
    frozen.add()
    assert check(frozen).rc == 0


def test_ledger_deleted_while_a_test_is_still_skipped_together_with_test_edit_fails(frozen):
    frozen.rm(LEDGER)
    _edit_test(frozen)
    frozen.add()
    assert check(frozen).codes == ['OG516']


def test_loosening_split_across_commits_of_one_range_fails(frozen):
    frozen.git('checkout', '-q', '-b', 'feature')
    frozen.write(LEDGER, ledger_text(row(), budget=3))
    frozen.commit('raise the budget')
    _edit_test(frozen)
    frozen.commit('edit a test')
    result = check(frozen, '--from-ref', 'main', '--to-ref', 'feature')
    assert result.codes == ['OG515']


def test_loosening_in_range_from_environment_fails(frozen, monkeypatch):
    frozen.git('checkout', '-q', '-b', 'feature')
    frozen.write(LEDGER, ledger_text(row(expires='2026-08-01')))
    _edit_test(frozen)
    frozen.commit('both at once')
    monkeypatch.setenv('PRE_COMMIT_FROM_REF', 'main')
    monkeypatch.setenv('PRE_COMMIT_TO_REF', 'feature')
    assert check(frozen).codes == ['OG515']


def test_without_a_base_the_change_rule_is_reported_not_checked(repo):
    repo.write(TEST_FILE, HEADERS)
    repo.write(LEDGER, ledger_text(row(), budget=3))
    repo.commit('root commit')
    result = check(repo, '--all-files')
    assert result.rc == 0
    assert 'check-freeze-ledger: no base revision' in result.out
    result = check(repo, '--all-files', '--require-base')
    assert result.codes == ['OG001']


def test_whole_ledger_rules_still_run_without_a_base(repo):
    repo.write(TEST_FILE, HEADERS)
    repo.write(LEDGER, ledger_text(row(owner='unassigned')))
    repo.commit('root commit')
    assert check(repo, '--all-files').codes == ['OG509']


# -- with the real pre-commit program ----------------------------------------------------

def _hook_entry() -> dict[str, object]:
    with open(os.path.join(ROOT, '.pre-commit-hooks.yaml')) as f:
        hooks = yaml.safe_load(f)
    return next(h for h in hooks if h['id'] == 'check-freeze-ledger')


def test_hook_entry_runs_without_filenames_on_every_commit():
    entry = _hook_entry()
    assert entry['entry'] == 'oracle-guard-check-freeze-ledger'
    assert (entry['pass_filenames'], entry['always_run'], entry['require_serial']) == \
        (False, True, True)


def test_git_commit_of_an_unrelated_file_is_blocked_by_an_expired_row(frozen, tmp_path):
    """The manifest entry's settings, with the hook run from this checkout (no network)."""
    entry = _hook_entry()
    hook = {key: entry[key] for key in ('id', 'name', 'pass_filenames', 'always_run',
                                        'require_serial', 'stages')}
    hook.update(language='system', entry=f'{sys.executable} -m oracle_guard.hooks.check_freeze_ledger',
                args=['--today', '2026-08-01'])
    frozen.write('.pre-commit-config.yaml',
                 yaml.safe_dump({'repos': [{'repo': 'local', 'hooks': [hook]}]}))
    frozen.commit('use the hook')
    env = {**os.environ, 'PRE_COMMIT_HOME': str(tmp_path / 'pre-commit-home')}
    subprocess.run((sys.executable, '-m', 'pre_commit', 'install'), cwd=frozen.path, env=env, check=True,
                   capture_output=True)
    frozen.write('README.md', 'docs\n')
    frozen.add('README.md')
    proc = subprocess.run(('git', 'commit', '-m', 'docs'), cwd=frozen.path, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert 'OG501 FZ-1 expired on 2026-07-01' in proc.stdout + proc.stderr
    proc = subprocess.run((sys.executable, '-m', 'pre_commit', 'run', '--all-files'), cwd=frozen.path, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert 'OG501' in proc.stdout


def test_decoy_def_in_a_module_pytest_never_collects_does_not_keep_a_freeze_alive(repo):
    from oracle_guard.hooks.check_freeze_ledger import main as hook
    repo.write('tests/test_a.py', 'import pytest\n\n@pytest.mark.skip(reason="FZ-1")\n'
               'def test_frozen():\n    assert 0\n')
    repo.write('tests/freeze_ledger.yaml', 'budget: 1\nfreezes:\n  - id: FZ-1\n'
               '    nodeid: tests/test_a.py::test_frozen\n    class: order-dependent\n'
               '    evidence: x\n    owner: alice\n    expires: 2026-12-20\n')
    repo.commit('frozen')
    repo.write('tests/test_a.py', 'def test_frozen_v2():\n    assert 1\n')
    repo.write('tests/helpers.py', 'def test_frozen():\n    pass\n')
    repo.add()
    assert 'OG514' in repo.run(hook, '--today', '2026-11-29').codes


# -- rule 29: a row removed or renumbered while test code still names its id -------------

def test_row_deleted_alone_while_an_untouched_test_still_names_its_id_fails(frozen):
    """The change touches only the ledger; the test file carrying FZ-1 is not part of it."""
    frozen.write(LEDGER, ledger_text(budget=1))
    frozen.add()
    result = check(frozen)
    assert result.codes == ['OG516']
    assert result.out.startswith(f'{LEDGER}:1:1: OG516 FZ-1 removed from the ledger (deleted '
                                 f'or renumbered) while {TEST_FILE}:5 still names it')


def test_row_renumbered_alone_while_the_test_still_names_the_old_id_fails(frozen):
    frozen.write(LEDGER, ledger_text(row(id='FZ-7')))
    frozen.add()
    result = check(frozen)
    assert result.codes == ['OG516']
    assert f'FZ-1 removed from the ledger (deleted or renumbered) while {TEST_FILE}:5' in result.out


def test_row_renumbered_together_with_its_skip_passes(frozen):
    frozen.write(LEDGER, ledger_text(row(id='FZ-7')))
    frozen.write(TEST_FILE, HEADERS.replace('FZ-1', 'FZ-7'))
    frozen.add()
    assert check(frozen).rc == 0


def test_row_deleted_in_a_range_while_the_test_still_names_its_id_fails(frozen):
    base = frozen.git('rev-parse', 'HEAD').strip()
    frozen.write(LEDGER, ledger_text(budget=1))
    frozen.commit('drop FZ-1')
    frozen.write('NOTES.md', 'more\n')
    frozen.commit('notes')
    assert check(frozen, '--from-ref', base, '--to-ref', 'HEAD').codes == ['OG516']


# -- rule 42: the guard's own settings loosened together with test code or src/ ----------

def _set(repo, line: str) -> None:  # type: ignore[no-untyped-def]
    repo.write('pyproject.toml', repo.read('pyproject.toml').decode() + line + '\n')


@pytest.mark.parametrize('line, what', [
    ('allow-silences = ["skip"]', 'allow-silences widened by skip'),
    ('max-freeze-days = 365', 'max-freeze-days raised from 90 to 365'),
])
@pytest.mark.parametrize('other', ['src', 'test'])
def test_guard_setting_loosened_together_with_code_or_test_edits_fails(frozen, line, what, other):
    """Rule 42: loosening must be its own change."""
    _set(frozen, line)
    if other == 'src':
        frozen.write('src/app.py', 'def parse(b):\n    return bytes(b)\n')
    else:
        _edit_test(frozen)
    frozen.add()
    result = check(frozen)
    assert result.codes == ['OG517']
    assert result.out.startswith('pyproject.toml:6:1: OG517 ' + what + ' in the same change as ')


def test_guard_setting_loosened_alone_passes(frozen):
    _set(frozen, 'allow-silences = ["skip"]\nmax-freeze-days = 365')
    frozen.add()
    assert check(frozen).rc == 0


def test_guard_setting_tightened_together_with_a_src_edit_passes(frozen):
    _set(frozen, 'max-freeze-days = 365')
    frozen.commit('longer freezes')
    text = frozen.read('pyproject.toml').decode().replace('365', '120')
    frozen.write('pyproject.toml', text)
    frozen.write('src/app.py', 'def parse(b):\n    return bytes(b)\n')
    frozen.add()
    assert check(frozen).rc == 0


def test_allow_silences_widened_through_pre_commit_args_with_a_test_edit_fails(frozen):
    config = ('repos:\n  - repo: local\n    hooks:\n      - id: check-named-freezes\n'
              '        name: n\n        entry: oracle-guard-check-named-freezes\n'
              '        language: system\n        args: []\n')
    frozen.write('.pre-commit-config.yaml', config)
    frozen.commit('hooks')
    frozen.write('.pre-commit-config.yaml', config.replace('args: []',
                                                           'args: [--allow-silences, skip]'))
    _edit_test(frozen)
    frozen.add()
    result = check(frozen)
    assert result.codes == ['OG517']
    assert result.out.startswith('.pre-commit-config.yaml:1:1: OG517 allow-silences widened by skip')
