"""History mode: ``--all-files`` with no base judges every commit since adoption.

pre-commit.ci runs ``pre-commit run --all-files`` on a detached checkout with no base;
a cheat committed with ``--no-verify`` must not hide under a trivial commit on top.
Real git repositories; the hooks run in-process through their main().
"""
from __future__ import annotations

import subprocess

import pytest
from builders.repos import PROPERTY_TEST
from builders.repos import Repo

from oracle_guard import cli
from oracle_guard.hooks import check_fixture_manifest
from oracle_guard.hooks import check_freeze_ledger
from oracle_guard.hooks import check_generator_lock
from oracle_guard.hooks import check_properties_present
from oracle_guard.hooks import forbid_mixed_oracle_diff

SRC = 'src/app.py'
LEDGER = 'tests/freeze_ledger.yaml'
PROPERTY = 'tests/properties/test_parse.py'
ACK = 'tests/oracle_acknowledged.yaml'
mixed_main = forbid_mixed_oracle_diff.main


def edit_src(repo: Repo, n: int = 1) -> None:
    repo.write(SRC, f'def parse(b):\n    return b  # {n}\n')


def mixed_commit(repo: Repo, subject: str = 'tidy') -> str:
    """src/ and the human-owned property test in one commit, past the hooks."""
    edit_src(repo)
    repo.write(PROPERTY, PROPERTY_TEST + '\n# tidied\n')
    return repo.commit(subject)


def trivial_commit(repo: Repo, n: int = 1) -> str:
    repo.write('README.md', f'docs {n}\n')
    return repo.commit(f'docs {n}')


def acknowledge(repo: Repo, commit: str, owner: str = 'alice') -> None:
    repo.write(ACK, f'acknowledged:\n  - commit: {commit}\n    owner: {owner}\n'
                    '    reason: merged with admin rights before the guard was strict\n')


# --- the rules, applied to each commit -------------------------------------------------

def test_mixed_commit_hidden_under_a_trivial_commit_fails_all_files(guarded):
    mixed = mixed_commit(guarded)
    trivial_commit(guarded)

    result = guarded.run(mixed_main)

    assert result.rc == 1, result.out
    assert result.codes == ['OG201']
    # path:line:col: CODE first (editors, CI annotations), then the commit and its subject.
    assert result.out.startswith(f'{PROPERTY}:1:1: OG201 {mixed[:7]} "tidy": human-owned '
                                 'property test changed in the same change as production '
                                 'code: src/app.py'), result.out
    assert f'add to {ACK}' in result.out and mixed in result.out  # how to acknowledge


def test_clean_history_passes_all_files(guarded):
    edit_src(guarded)
    guarded.commit('fix parse')
    guarded.write(PROPERTY, PROPERTY_TEST + '\n# reviewed\n')
    guarded.commit('tidy the property test, alone')
    trivial_commit(guarded)

    for main in (mixed_main, check_freeze_ledger.main, check_properties_present.main,
                 check_generator_lock.main, check_fixture_manifest.main):
        result = guarded.run(main)
        assert result.rc == 0, (main, result.out)


def test_loosening_committed_alone_then_a_src_change_passes(guarded):
    guarded.write(LEDGER, 'budget: 2\nfreezes: []\n')
    guarded.commit('raise the freeze budget, alone')
    edit_src(guarded)
    guarded.commit('fix parse')

    assert guarded.run(check_freeze_ledger.main).rc == 0
    assert guarded.run(mixed_main).rc == 0


def test_ledger_loosened_with_a_test_edit_in_an_earlier_commit_fails(guarded):
    guarded.write(LEDGER, 'budget: 2\nfreezes: []\n')
    guarded.write('tests/test_app.py', 'def test_parse():\n    assert True\n')
    loosened = guarded.commit('budget and test')
    trivial_commit(guarded)

    result = guarded.run(check_freeze_ledger.main)

    assert result.codes == ['OG515'], result.out
    assert f'{loosened[:7]} "budget and test": budget raised from 0 to 2' in result.out


def test_baseline_grown_with_a_test_edit_in_an_earlier_commit_fails(guarded):
    from oracle_guard.commands.baseline import main as baseline_main

    guarded.write('tests/test_new.py', 'import pytest\n\n\n@pytest.mark.skip\n'
                                       'def test_n():\n    assert 0\n')
    assert guarded.run(baseline_main).rc == 0
    grown = guarded.commit('a skip and the baseline that accepts it')
    trivial_commit(guarded)

    result = guarded.run(check_freeze_ledger.main)

    assert result.codes == ['OG520'], result.out
    assert f'{grown[:7]} "a skip and the baseline that accepts it": baseline grown' in result.out


def test_ledger_row_removed_while_a_test_named_it_in_an_earlier_commit_fails(guarded):
    import datetime

    expires = (datetime.date.today() + datetime.timedelta(days=30)).isoformat()
    guarded.write(LEDGER, 'budget: 1\nfreezes: []\n')
    guarded.commit('raise the budget, alone')
    guarded.write(LEDGER, f'''\
        budget: 1
        freezes:
          - id: FZ-1
            nodeid: tests/test_app.py::test_parse
            class: order-dependent
            evidence: fails after test_cache_warm
            owner: alice
            expires: {expires}
        ''')
    frozen = ('import pytest\n\n\n@pytest.mark.skip(reason="FZ-1")\n'
              'def test_parse():\n    assert True\n')
    guarded.write('tests/test_app.py', frozen)
    guarded.commit('freeze test_parse')
    guarded.write(LEDGER, 'budget: 1\nfreezes: []\n')
    dropped = guarded.commit('drop the freeze row, keep the skip')
    guarded.write('tests/test_app.py', 'def test_parse():\n    assert True\n')
    guarded.commit('unskip')

    result = guarded.run(check_freeze_ledger.main)

    assert result.codes == ['OG516'], result.out
    assert f'{dropped[:7]} "drop the freeze row, keep the skip": ' in result.out


def test_property_removed_with_src_in_an_earlier_commit_fails(guarded):
    guarded.write('tests/properties/test_more.py', PROPERTY_TEST.replace(
        'test_parse_never_throws', 'test_parse_keeps_bytes'))
    guarded.commit('a second property, alone')
    guarded.rm('tests/properties/test_more.py')
    edit_src(guarded)
    removed = guarded.commit('drop a property with the fix')
    trivial_commit(guarded)

    result = guarded.run(check_properties_present.main)

    assert result.codes == ['OG402'], result.out
    assert f'{removed[:7]} "drop a property with the fix": property test ' \
           'test_parse_keeps_bytes removed' in result.out


def test_lock_loosened_with_a_test_edit_in_an_earlier_commit_fails(guarded):
    guarded.write_json('tests/domain_lock.json', {'version': 1, 'properties': {
        'test_parse_never_throws': {'max_examples': 10},
    }})
    guarded.write(PROPERTY, PROPERTY_TEST.replace('@given', '@settings(max_examples=10)\n@given')
                  .replace('import given', 'import given, settings'))
    guarded.commit('fewer examples, lock and test together')
    trivial_commit(guarded)

    result = guarded.run(check_generator_lock.main)

    assert result.codes == ['OG606'], result.out
    assert '"fewer examples, lock and test together": test_parse_never_throws: lock ' \
           'loosened' in result.out


def test_agent_writable_manifest_row_in_an_earlier_commit_fails(guarded):
    text = guarded.read('tests/fixtures/manifest.json').decode()
    guarded.write('tests/fixtures/manifest.json',
                  text.replace('"source": "human"', '"rewritable_by_agent": true,\n'
                                                    '      "source": "human"'))
    guarded.commit('let the agent rewrite it')
    guarded.write('tests/fixtures/manifest.json', text)
    guarded.commit('and take it back')

    result = guarded.run(check_fixture_manifest.main)

    assert result.codes == ['OG116'], result.out
    assert '"let the agent rewrite it": ' in result.out


def test_oracle_guard_check_judges_the_history_once_for_every_hook(guarded):
    mixed_commit(guarded)
    trivial_commit(guarded)

    result = guarded.run(cli.main, 'check')

    assert result.codes == ['OG201'], result.out


def test_a_staged_commit_is_not_judged_on_the_history(guarded):
    mixed_commit(guarded)
    edit_src(guarded, 2)
    guarded.add()

    assert guarded.run(mixed_main).rc == 0  # commit mode: only what is staged


# --- merges ------------------------------------------------------------------------------

def _merge_side_branch(repo: Repo, side: callable) -> None:  # type: ignore[valid-type]
    repo.git('checkout', '-q', '-b', 'side')
    side(repo)
    repo.git('checkout', '-q', 'main')
    trivial_commit(repo, 2)
    repo.git('merge', '-q', '--no-ff', '--no-edit', 'side')


def test_mixed_commit_brought_in_by_a_merge_fails(guarded):
    _merge_side_branch(guarded, mixed_commit)

    result = guarded.run(mixed_main)

    assert result.codes == ['OG201'], result.out
    assert '"tidy": human-owned property test' in result.out


def _src_then_property(repo: Repo) -> None:
    edit_src(repo)
    repo.commit('fix parse')
    repo.write(PROPERTY, PROPERTY_TEST + '\n# reviewed\n')
    repo.commit('tidy the property test, alone')


def test_merge_of_clean_commits_passes_though_it_brings_src_and_oracle_together(guarded):
    # Against its first parent the merge holds both edits; it is judged through the two
    # commits it brings in, and by its own resolution (none here).
    _merge_side_branch(guarded, _src_then_property)

    assert guarded.run(mixed_main).rc == 0


def test_merge_whose_resolution_changes_the_oracle_with_src_fails(guarded):
    _merge_side_branch(guarded, lambda repo: (edit_src(repo), repo.commit('fix parse')))
    # An "evil merge": the resolution edits the property test and src, which neither
    # parent did; amending the merge keeps both parents.
    edit_src(guarded, 3)
    guarded.write(PROPERTY, PROPERTY_TEST + '\n# slipped into the merge\n')
    guarded.add()
    guarded.git('commit', '-q', '--amend', '--no-edit', '--no-verify')
    trivial_commit(guarded, 4)

    result = guarded.run(mixed_main)

    assert result.codes == ['OG201'], result.out
    assert "Merge branch 'side'" in result.out


# --- since adoption -----------------------------------------------------------------------

def test_commits_before_adoption_are_not_judged(repo):
    repo.write(SRC, 'x = 1\n')
    repo.write(PROPERTY, PROPERTY_TEST)
    repo.commit('before the guard: code and properties together')
    repo.write(SRC, 'x = 2\n')
    repo.write(PROPERTY, PROPERTY_TEST + '\n# old habits\n')
    repo.commit('still before the guard')
    # The adoption commit is the starting point, not a change: here it brings the table
    # in together with more code and properties, as adopting in a busy branch can.
    repo.write('pyproject.toml', '[tool.oracle-guard]\nsrc = ["src/"]\n')
    repo.write(SRC, 'x = 3\n')
    repo.write(PROPERTY, PROPERTY_TEST + '\n# adopted\n')
    repo.commit('adopt oracle-guard')
    trivial_commit(repo)

    assert repo.run(mixed_main).rc == 0


def test_adopted_revision_starts_history_mode_later(guarded):
    mixed_commit(guarded)
    start = trivial_commit(guarded)
    trivial_commit(guarded, 2)
    assert guarded.run(mixed_main).rc == 1

    assert guarded.run(mixed_main, '--adopted', start).rc == 0


def test_adopted_revision_that_does_not_exist_is_a_configuration_error(guarded):
    trivial_commit(guarded)

    result = guarded.run(mixed_main, '--adopted', 'no-such-revision')

    assert result.rc == 2
    assert "adopted = 'no-such-revision' is not a commit" in result.err


def test_adopted_revision_missing_from_a_shallow_clone_still_judges_head(guarded, tmp_path):
    start = trivial_commit(guarded)
    trivial_commit(guarded, 2)
    mixed_commit(guarded)
    shallow = _clone(guarded, tmp_path, 2)

    result = shallow.run(mixed_main, '--adopted', start)

    assert result.codes == ['OG201'], result.out
    assert 'is not in this shallow clone, so only HEAD was judged' in result.out


def test_commit_removing_the_table_with_src_is_still_judged(guarded):
    edit_src(guarded)
    guarded.write(PROPERTY, PROPERTY_TEST + '\n# tidied\n')
    guarded.write('pyproject.toml', '[project]\nname = "app"\n')
    guarded.commit('switch the guard off, with the fix')
    trivial_commit(guarded)

    result = guarded.run(mixed_main)

    assert sorted(result.codes) == ['OG201', 'OG201'], result.out
    assert '"switch the guard off, with the fix": [tool.oracle-guard] table' in result.out


def test_acknowledged_commit_passes(guarded):
    mixed = mixed_commit(guarded)
    acknowledge(guarded, mixed)
    guarded.commit('acknowledge the tidy commit, alone')

    result = guarded.run(mixed_main)

    assert result.rc == 0, result.out


def test_acknowledging_in_the_same_commit_as_src_fails(guarded):
    mixed = mixed_commit(guarded)
    acknowledge(guarded, mixed)
    edit_src(guarded, 2)
    guarded.add()

    result = guarded.run(mixed_main)  # commit mode: the acknowledgement is an oracle file

    assert result.codes == ['OG201'], result.out
    assert ACK in result.out


@pytest.mark.parametrize('row, problem', [
    ('  - commit: {id}\n    owner: alice\n    reason: ok\n    expires: 2030-01-01\n',
     "unknown key 'expires'"),
    ('  - commit: {id}\n    reason: ok\n', 'has no owner'),
    ('  - commit: {id}\n    owner: dependabot[bot]\n    reason: ok\n', 'a bot or an agent'),
    ('  - commit: {id}\n    owner: alice\n', 'has no reason'),
    ('  - commit: {short}\n    owner: alice\n    reason: ok\n', 'not a full commit id'),
    ('  - commit: {id}\n    owner: alice\n    reason: ok\n'
     '  - commit: {id}\n    owner: bob\n    reason: ok\n', 'acknowledged twice'),
])
def test_malformed_acknowledgement_is_a_configuration_error(guarded, row, problem):
    mixed = mixed_commit(guarded)
    guarded.write(ACK, 'acknowledged:\n' + row.format(id=mixed, short=mixed[:7]))
    guarded.commit('acknowledge')

    result = guarded.run(mixed_main)

    assert result.rc == 2, result.out
    assert result.err.startswith(f'{ACK}:'), result.err
    assert problem in result.err


def test_malformed_acknowledgement_is_refused_when_it_is_committed(guarded):
    mixed = mixed_commit(guarded)
    guarded.write(ACK, f'acknowledged:\n  - commit: {mixed}\n    owner: agent\n'
                       '    reason: the agent said so\n')
    guarded.add()

    result = guarded.run(check_freeze_ledger.main)  # commit mode: the list is staged

    assert result.rc == 2, result.out
    assert result.err.startswith(f'{ACK}:3:'), result.err
    assert "owner is 'agent', not a person" in result.err


# --- bounded: the cap and shallow clones --------------------------------------------------

def test_history_limit_caps_the_walk_with_a_note(guarded):
    mixed_commit(guarded)
    for n in range(3):
        trivial_commit(guarded, n)

    capped = guarded.run(mixed_main, '--history-limit', '3')
    required = guarded.run(mixed_main, '--history-limit', '3', '--require-base')
    reaching = guarded.run(mixed_main, '--history-limit', '4')

    assert capped.rc == 0, capped.out
    assert 'history mode: stopped after 3 commits (history-limit)' in capped.out
    assert required.codes == ['OG001'], required.out
    assert reaching.codes == ['OG201'], reaching.out
    assert 'history-limit' not in reaching.out


def test_history_limit_from_the_configuration(guarded):
    mixed_commit(guarded)
    trivial_commit(guarded)
    guarded.write('pyproject.toml', guarded.read('pyproject.toml').decode() +
                  'history-limit = 1\n')
    guarded.commit('judge only the last commit')

    result = guarded.run(mixed_main)

    assert result.rc == 0, result.out
    assert 'history-limit' in result.out


def _clone(repo: Repo, tmp_path, depth: int) -> Repo:  # type: ignore[no-untyped-def]
    path = str(tmp_path / f'depth{depth}')
    subprocess.run(('git', 'clone', '-q', '--depth', str(depth), f'file://{repo.path}', path),
                   check=True)
    return Repo(path, repo._capsys)


def test_shallow_clone_not_reaching_adoption_gives_a_note(guarded, tmp_path):
    mixed_commit(guarded)
    for n in range(3):
        trivial_commit(guarded, n)
    shallow = _clone(guarded, tmp_path, 2)

    noted = shallow.run(mixed_main)
    required = shallow.run(mixed_main, '--require-base')
    full = _clone(guarded, tmp_path, 10)

    assert noted.rc == 0, noted.out
    assert 'history mode: this clone is shallow' in noted.out
    assert required.codes == ['OG001'], required.out
    assert full.run(mixed_main).codes == ['OG201']


def test_depth_one_clone_says_it_is_shallow(guarded, tmp_path):
    mixed_commit(guarded)
    shallow = _clone(guarded, tmp_path, 1)

    noted = shallow.run(mixed_main)

    assert noted.rc == 0
    assert 'this is a shallow clone' in noted.out
    assert shallow.run(mixed_main, '--require-base').codes == ['OG001']


# --- configuration -----------------------------------------------------------------------

@pytest.mark.parametrize('line, problem', [
    ('history-limit = 0', 'at least 1'),
    ('history-limit = "many"', 'whole number'),
    ('adopted = ""', 'non-empty'),
])
def test_bad_history_settings_are_configuration_errors(guarded, line, problem):
    guarded.write('pyproject.toml', guarded.read('pyproject.toml').decode() + line + '\n')

    result = guarded.run(mixed_main)

    assert result.rc == 2
    assert problem in result.err
