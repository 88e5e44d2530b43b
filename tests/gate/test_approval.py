"""Rule 47: ``oracle-guard ci`` fails on an oracle change unless a person approved it.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os

import pytest

from builders.ci_repo import BASE_FILES
from builders.ci_repo import BUGGY_ADD
from builders.ci_repo import build_template
from builders.ci_repo import CiRepo
from builders.ci_repo import copy_template
from builders.ci_repo import shared_template
from builders.ci_repo import PYTEST
from builders.ci_repo import Run
from builders.dedupe import dd_cheat_fails_ci
from builders.dedupe import PROPERTY
from builders.dedupe import PROPERTY_ID
from builders.dedupe import UNIT_TESTS_FOR_THE_BUG
from builders.repos import Repo
from oracle_guard.commands.ci import range_context
from oracle_guard.gate.approval import Approval
from oracle_guard.gate.approval import decide
from oracle_guard.gate.review_report import report_sections


def test_property_weakened_and_unit_tests_rewritten_fails_ci(dd: CiRepo) -> None:
    dd_cheat_fails_ci(dd, {
        'tests/properties/test_dd_props.py': PROPERTY.replace(
            'assert dedupe(xs) == sorted(set(xs))', 'assert set(dedupe(xs)) <= set(xs)'),
        'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}, 'OG740')


def test_failing_tests_frozen_with_a_raised_budget_fails_ci(dd: CiRepo) -> None:
    expires = datetime.date.today() + datetime.timedelta(days=30)
    rows = ''.join(
        f'  - id: FZ-{n}\n    nodeid: {nodeid}\n    class: order-dependent\n'
        f'    evidence: "fails after the cache test"\n    owner: alice\n    expires: {expires}\n'
        for n, nodeid in enumerate(('tests/test_dd.py::test_four', 'tests/test_dd.py::test_many',
                                    PROPERTY_ID), 1))
    ci = dd_cheat_fails_ci(dd, {'tests/freeze_ledger.yaml': f'budget: 3\nfreezes:\n{rows}'},
                                  'OG740')
    assert any('budget 0 -> 3' in line for line in ci.lines('OG740')), ci.out


CALC_ADD_PROPERTY = '''\
    from calc import add


    def test_add_matches_sum():
        for a in range(5):
            for b in range(5):
                assert add(a, b) == a + b
    '''


BUG_ON_MAIN = {
    'src/calc/__init__.py': BUGGY_ADD,
    'tests/properties/test_add_props.py': CALC_ADD_PROPERTY,
    'tests/freeze_ledger.yaml': 'budget: 0\nfreezes: []\n',
}


# Issue 17's first pull request: the property weakened (== became <=) and the failing unit
# test rewritten to expect the buggy value. Nothing else.
WEAKENED_PROPERTY = {
    'tests/properties/test_add_props.py': CALC_ADD_PROPERTY.replace('== a + b', '<= a + b + 1'),
    'tests/test_calc.py': BASE_FILES['tests/test_calc.py'].replace(
        'assert add(2, 3) == 5', 'assert add(2, 3) == 6'),
}


def freeze(row_id: int, nodeid: str) -> str:
    return f'''\
  - id: FZ-{row_id}
    nodeid: {nodeid}
    class: time-dependent
    evidence: "fails near midnight"
    owner: alice
    expires: 2099-01-01
'''


# Issue 17's second pull request: the budget raised and the failing tests frozen.
FROZEN_FAILURES = {'tests/freeze_ledger.yaml': 'budget: 3\nfreezes:\n' + ''.join((
    freeze(1, 'tests/test_calc.py::test_add'),
    freeze(2, 'tests/properties/test_add_props.py::test_add_matches_sum'),
    freeze(3, 'tests/test_calc.py::TestMore::test_zero'),
))}


TODAY = ('--today', '2098-12-01')


@pytest.fixture(scope='session')
def template(tmp_path_factory: pytest.TempPathFactory) -> str:
    return shared_template(tmp_path_factory, 'approval', lambda path: build_template(path,
        BUG_ON_MAIN))


@pytest.fixture
def calc(template: str, tmp_path) -> CiRepo:  # type: ignore[no-untyped-def]
    return copy_template(template, str(tmp_path / 'repo'))


def event(tmp_path, labels: list[str], action: str = 'labeled',  # type: ignore[no-untyped-def]
          **extra: object) -> dict[str, str]:
    """A pull_request event payload as the GitHub runner writes it, and the variable."""
    payload = {'action': action, 'number': 7, 'pull_request': {
        'number': 7, 'labels': [{'id': i, 'name': name, 'color': 'ededed'}
                                for i, name in enumerate(labels)], **extra}}
    if action == 'labeled' and labels:  # the label applied last
        payload['label'] = {'id': len(labels) - 1, 'name': labels[-1], 'color': 'ededed'}
    path = tmp_path / 'event.json'
    path.write_text(json.dumps(payload), encoding='utf-8')
    return {'GITHUB_EVENT_PATH': str(path)}


def oracle_only_cheat_fails_without_approval(calc: CiRepo, files: dict[str, str],
                                             *paths: str,
                                             env: dict[str, str] | None = None) -> Run:
    calc.pull_request(files, bug=False)
    plain, ci = calc.both(PYTEST, *TODAY, env=env)
    assert plain.rc == 0, plain.out  # the cheat works: the bug on main is hidden
    assert ci.rc == 1, ci.out
    found = ci.lines('OG740')
    for path in paths:
        assert any(line.startswith(f'{path}:') for line in found), ci.out
    assert 'oracle-approved' in ci.out
    return ci


def test_weakened_property_with_rewritten_unit_test_fails_ci_without_the_label(
        calc: CiRepo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The pull request carries other labels, none of them the approval's: they approve
    # nothing.
    ci = oracle_only_cheat_fails_without_approval(
        calc, WEAKENED_PROPERTY, 'tests/properties/test_add_props.py',
        env=event(tmp_path, ['bug', 'oracle approved']))
    # The rewritten unit test is the agent's to edit: not an oracle change.
    assert not any(line.startswith('tests/test_calc.py:') for line in ci.lines('OG740'))


def test_a_label_applied_before_the_latest_push_approves_nothing(
        calc: CiRepo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A push after the review (``synchronize``) runs with the label still on the pull
    request: what it added was never reviewed, so the label counts only in the run its
    application starts."""
    calc.pull_request(WEAKENED_PROPERTY, bug=False)
    pushed = calc.ci(PYTEST, *TODAY, env=event(tmp_path, ['oracle-approved'],
                                                 action='synchronize'))
    assert pushed.rc == 1, pushed.out
    assert any('was applied before the latest change of the pull request' in line
               for line in pushed.out.splitlines()), pushed.out
    other = calc.ci(PYTEST, *TODAY, env=event(tmp_path, ['oracle-approved', 'bug']))
    assert other.rc == 1 and other.lines('OG740'), other.out  # another label was applied
    relabeled = calc.ci(PYTEST, *TODAY, env=event(tmp_path, ['bug', 'oracle-approved']))
    assert relabeled.rc == 0, relabeled.out


def test_weakened_property_passes_ci_with_the_label_and_the_report_says_so(
        calc: CiRepo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    calc.pull_request(WEAKENED_PROPERTY, bug=False)
    report = str(tmp_path / 'review.md')
    ci = calc.ci(PYTEST, *TODAY, '--report', report,
                 env=event(tmp_path, ['bug', 'oracle-approved']))
    assert ci.rc == 0, ci.out
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 0'
    text = open(report, encoding='utf-8').read()
    assert '**Oracle changes approved** by label `oracle-approved`.' in text
    assert '- `tests/properties/test_add_props.py`: modified' in text


def test_budget_raised_to_freeze_failing_tests_fails_ci_without_the_label(
        calc: CiRepo) -> None:
    ci = oracle_only_cheat_fails_without_approval(calc, FROZEN_FAILURES,
                                                  'tests/freeze_ledger.yaml')
    shown = '\n'.join(ci.lines('OG740'))
    # each at its own line of the ledger
    assert 'tests/freeze_ledger.yaml:3:1: OG740 oracle change not approved (label ' \
        '"oracle-approved"): freeze row FZ-1 added for tests/test_calc.py::test_add' in shown
    assert 'tests/freeze_ledger.yaml:1:1: OG740 oracle change not approved (label ' \
        '"oracle-approved"): budget 0 -> 3' in shown


@pytest.mark.reference_run
def test_budget_raised_to_freeze_failing_tests_is_approved_but_needs_a_measured_flip(
        calc: CiRepo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The approval answers rule 47 (no OG740); rule 48 still reruns each new
    # time-dependent freeze: tests that fail every time are broken, not flaky (OG735),
    # and test_zero, which passes, is no finding.
    calc.pull_request(FROZEN_FAILURES, bug=False)
    report = str(tmp_path / 'review.md')
    ci = calc.ci(PYTEST, *TODAY, '--report', report, '--oracle-approved')
    assert ci.lines('OG740') == [], ci.out
    broken = '\n'.join(ci.lines('OG735'))
    assert 'FZ-1 freezes tests/test_calc.py::test_add' in broken
    assert 'FZ-2 freezes tests/properties/test_add_props.py::test_add_matches_sum' in broken
    assert 'FZ-3' not in broken and ci.rc == 1, ci.out
    text = open(report, encoding='utf-8').read()
    assert '**Oracle changes approved** by --oracle-approved.' in text
    assert 'FZ-3 (tests/test_calc.py::TestMore::test_zero, time-dependent): passed 5 of 5' in text


def test_pull_request_renaming_the_label_to_one_it_carries_still_fails_ci(
        calc: CiRepo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    pyproject = BASE_FILES['pyproject.toml'] + '        approval-label = "bug"\n'
    calc.pull_request({**WEAKENED_PROPERTY, 'pyproject.toml': pyproject}, bug=False)
    report = str(tmp_path / 'review.md')
    ci = calc.ci(PYTEST, *TODAY, '--report', report, env=event(tmp_path, ['bug']))
    assert ci.rc == 1, ci.out
    assert '**Oracle changes not approved**: a maintainer applies the label ' \
        '`oracle-approved`' in open(report, encoding='utf-8').read()
    assert any('label "oracle-approved"' in line for line in ci.lines('OG740')), ci.out
    assert any(line.startswith('pyproject.toml:') for line in ci.lines('OG740')), ci.out


def test_label_named_by_the_base_configuration_approves(tmp_path) -> None:  # type: ignore[no-untyped-def]
    pyproject = BASE_FILES['pyproject.toml'] + '        approval-label = "tests-reviewed"\n'
    template = build_template(str(tmp_path / 'template'),
                              {**BUG_ON_MAIN, 'pyproject.toml': pyproject})
    calc = copy_template(template, str(tmp_path / 'repo'))
    calc.pull_request(WEAKENED_PROPERTY, bug=False)
    refused = calc.ci(PYTEST, *TODAY, env=event(tmp_path, ['oracle-approved']))
    assert refused.rc == 1 and 'label "tests-reviewed"' in refused.out, refused.out
    approved = calc.ci(PYTEST, *TODAY, env=event(tmp_path, ['tests-reviewed']))
    assert approved.rc == 0, approved.out


@pytest.mark.parametrize('payload, says', [
    ('{"pull_request": {"labels": [{"name": "oracle-approved"}]', 'not JSON'),
    ('{"pull_request": {"labels": "oracle-approved"}}', '"pull_request.labels" is not a list'),
    ('{"pull_request": {"labels": [{"id": 3}]}}', 'no "name" string'),
    ('[]', 'not a JSON object'),
])
def test_malformed_event_payload_stops_ci_with_exit_2(
        calc: CiRepo, tmp_path, payload: str, says: str) -> None:  # type: ignore[no-untyped-def]
    calc.pull_request(WEAKENED_PROPERTY, bug=False)
    path = tmp_path / 'event.json'
    path.write_text(payload, encoding='utf-8')
    ci = calc.ci(PYTEST, env={'GITHUB_EVENT_PATH': str(path)})
    assert ci.rc == 2, ci.out
    assert f'{path}:' in ci.out and says in ci.out, ci.out
    assert 'Traceback' not in ci.out


def test_code_only_pull_request_needs_no_approval(calc: CiRepo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    calc.pull_request({'src/calc/__init__.py': BASE_FILES['src/calc/__init__.py']}, bug=False)
    ci = calc.ci(PYTEST, env=event(tmp_path, []))
    assert ci.rc == 0, ci.out
    assert not ci.lines('OG740')


# The decision in-process, on a guarded repository with a lock, a manifest and a ledger.

def decision(repo: Repo, files: dict[str, str | None], **environ: str) -> Approval:
    repo.git('checkout', '-q', '-b', 'pr')
    for path, content in files.items():
        if content is None:
            repo.rm(path)
        else:
            repo.write(path, content, dedent=False)
    repo.commit('pull request')
    cwd = os.getcwd()
    os.chdir(repo.path)
    try:
        ctx = range_context('main')
        return decide(ctx, report_sections(ctx), False, environ)
    finally:
        os.chdir(cwd)


def lock_with(**entries: dict[str, object]) -> str:
    return json.dumps({'version': 1, 'properties': {
        'test_parse_never_throws': {'max_examples': 100}, **entries}}, indent=2) + '\n'


NEW_PROPERTY = 'from hypothesis import given, strategies as st\n\n\n' \
               '@given(st.text())\ndef test_decode_total(s):\n    assert isinstance(s, str)\n'


def test_new_test_with_its_lock_entry_and_manifest_row_needs_no_approval(
        guarded: Repo) -> None:
    manifest = json.loads(guarded.read('tests/fixtures/manifest.json'))
    manifest['fixtures']['headers/empty.bin'] = {
        'sha256': hashlib.sha256(b'').hexdigest(), 'source': 'human', 'purpose': 'no request'}
    approval = decision(guarded, {
        'tests/test_decode.py': NEW_PROPERTY,
        'tests/domain_lock.json': lock_with(test_decode_total={'max_examples': 100}),
        'tests/fixtures/headers/empty.bin': '',
        'tests/fixtures/manifest.json': json.dumps(manifest, indent=2) + '\n',
        'src/app.py': 'def parse(b):\n    return bytes(b)\n',
    })
    assert approval.changes == () and approval.approved and approval.by is None
    assert approval.findings() == []


@pytest.mark.parametrize('path', ['tests/properties/test_decode.py',
                                  'tests/properties/conftest.py',
                                  'tests/properties/_doubles.py',
                                  'tests/properties/data/cases.json'])
def test_any_file_added_under_the_properties_is_an_oracle_change_to_approve(
        guarded: Repo, path: str) -> None:
    # Rule 56: merged, a new conftest or helper there is what the base's properties run
    # with in the next pull request's reference run; a new property is the oracle too.
    approval = decision(guarded, {path: NEW_PROPERTY if path.endswith('.py') else '[1, 2]\n'})
    assert [item.path for item in approval.changes] == [path]
    assert not approval.approved
    assert [f.code for f in approval.findings()] == ['OG740']
    assert f'{path}: added' in approval.findings()[0].message


def test_a_new_properties_conftest_with_doubles_fails_ci_until_approved(calc: CiRepo) -> None:
    # The first of two pull requests: no src change, the suite green, a conftest beside the
    # properties that hands them a double of what they call. Merged unapproved, it would be
    # the base's oracle in the next pull request's reference run, the one that brings a bug.
    calc.pull_request({'tests/properties/conftest.py': (
        'import calc\n\n\ndef _add(a, b):\n    return a + b\n\n\ncalc.add = _add\n')},
        bug=False)
    plain, ci = calc.both(PYTEST)
    assert plain.rc == 0, plain.out
    assert ci.rc == 1, ci.out
    assert any('tests/properties/conftest.py: added' in line for line in ci.lines('OG740')), ci.out
    assert {line.split(': ')[1].split()[0] for line in ci.out.splitlines()
            if ': OG' in line} == {'OG740'}, ci.out  # the approval, nothing else, says no
    approved = calc.ci(PYTEST, '--oracle-approved')
    assert not approved.lines('OG740'), approved.out


def test_tightened_lock_entry_is_an_oracle_change_to_approve(guarded: Repo) -> None:
    approval = decision(guarded, {'tests/domain_lock.json': json.dumps({
        'version': 1, 'properties': {'test_parse_never_throws': {'max_examples': 500}}})})
    assert not approval.approved
    assert [f.code for f in approval.findings()] == ['OG740']
    assert 'test_parse_never_throws: entry edited' in approval.findings()[0].message


def test_workflow_that_runs_the_gate_edited_is_an_oracle_change_to_approve(
        guarded: Repo) -> None:
    guarded.write('.github/workflows/gate.yml', 'on: pull_request\njobs:\n  g:\n'
                  '    steps:\n      - run: oracle-guard ci --base main -- pytest\n')
    guarded.write('.github/workflows/docs.yml', 'on: push\n')
    guarded.commit('workflows')
    approval = decision(guarded, {
        '.github/workflows/gate.yml': 'on: pull_request\njobs: {}\n',
        '.github/workflows/docs.yml': 'on: [push, pull_request]\n',
    })
    assert [item.path for item in approval.changes] == ['.github/workflows/gate.yml']
    assert not approval.approved


def test_root_action_file_edited_is_an_oracle_change_to_approve(guarded: Repo) -> None:
    approval = decision(guarded, {'action.yml': 'runs:\n  using: composite\n  steps: []\n'})
    assert [item.path for item in approval.changes] == ['action.yml']


def test_label_on_the_event_approves_in_process(guarded: Repo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    env = event(tmp_path, ['oracle-approved'])
    approval = decision(guarded, {'tests/freeze_ledger.yaml': 'budget: 2\nfreezes: []\n'},
                        **env)
    assert approval.approved and approval.by == 'label `oracle-approved`'
    assert [item.path for item in approval.changes] == ['tests/freeze_ledger.yaml']


def test_push_event_without_a_pull_request_approves_nothing(guarded: Repo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / 'push.json'
    path.write_text('{"ref": "refs/heads/main", "commits": []}', encoding='utf-8')
    approval = decision(guarded, {'tests/freeze_ledger.yaml': 'budget: 2\nfreezes: []\n'},
                        GITHUB_EVENT_PATH=str(path))
    assert not approval.approved


def test_ledger_added_with_a_budget_is_an_oracle_change_to_approve(guarded: Repo) -> None:
    guarded.rm('tests/freeze_ledger.yaml')
    guarded.commit('no ledger yet')
    approval = decision(guarded, {'tests/freeze_ledger.yaml': 'budget: 3\nfreezes: []\n'})
    assert not approval.approved
    assert [f.message for f in approval.findings()] == [
        'oracle change not approved (label "oracle-approved"): ledger added with budget 3']
