"""The review report of ``oracle-guard ci``: every oracle change in the range, in Markdown.
"""

from __future__ import annotations

import json
import os

from builders.repos import Repo
from oracle_guard.commands.ci import range_context
from oracle_guard.gate.review_report import NO_CHANGE
from oracle_guard.gate.review_report import review_report


LEDGER_ROW = '''\
budget: 1
freezes:
  - id: FZ-7
    nodeid: tests/test_app.py::test_parse
    class: time-dependent
    evidence: "fails across midnight UTC"
    owner: alice
    expires: 2099-01-31
'''


def report(repo: Repo) -> str:
    cwd = os.getcwd()
    os.chdir(repo.path)
    try:
        return review_report(range_context('main'))
    finally:
        os.chdir(cwd)


def pull_request(repo: Repo, files: dict[str, str | None]) -> None:
    repo.git('checkout', '-q', '-b', 'pr')
    for path, content in files.items():
        if content is None:
            repo.rm(path)
        else:
            repo.write(path, content, dedent=False)
    repo.commit('pull request')


def test_code_only_pull_request_reports_no_oracle_change(guarded: Repo) -> None:
    pull_request(guarded, {'src/app.py': 'def parse(b):\n    return bytes(b)\n'})
    text = report(guarded)
    assert NO_CHANGE in text
    assert '###' not in text


def test_loosened_lock_entry_shows_old_and_new_value(guarded: Repo) -> None:
    lock = json.loads(guarded.read('tests/domain_lock.json'))
    lock['properties']['test_parse_never_throws']['max_examples'] = 10
    pull_request(guarded, {'tests/domain_lock.json': json.dumps(lock, indent=2) + '\n'})
    text = report(guarded)
    assert '### Lock entries loosened' in text
    assert '`test_parse_never_throws`: max_examples 100 -> 10' in text


def test_added_freeze_row_shows_owner_class_and_expiry(guarded: Repo) -> None:
    pull_request(guarded, {'tests/freeze_ledger.yaml': LEDGER_ROW})
    text = report(guarded)
    assert '### Freeze rows added' in text
    assert '| FZ-7 | tests/test_app.py::test_parse | time-dependent | alice | 2099-01-31 |' \
        in text
    assert '- budget `0` -> `1`' in text


def test_extended_expiry_is_a_changed_row(guarded: Repo) -> None:
    pull_request(guarded, {'tests/freeze_ledger.yaml': LEDGER_ROW})
    guarded.git('branch', '-f', 'main', 'pr')
    guarded.git('checkout', '-q', '-b', 'pr2')
    guarded.write('tests/freeze_ledger.yaml', LEDGER_ROW.replace('2099-01-31', '2099-06-30'))
    guarded.commit('extend')
    text = report(guarded)
    assert '### Freeze rows changed or removed' in text
    assert '`FZ-7`: expires `2099-01-31` -> `2099-06-30`' in text


def test_fixtures_added_and_rehashed_are_listed(guarded: Repo) -> None:
    manifest = json.loads(guarded.read('tests/fixtures/manifest.json'))
    manifest['fixtures']['headers/ok.bin']['sha256'] = 'f' * 64
    manifest['fixtures']['headers/ok.bin']['purpose'] = 'a request with a body'
    manifest['fixtures']['headers/new.bin'] = {'sha256': 'e' * 64, 'source': 'human',
                                               'purpose': 'an empty request'}
    pull_request(guarded, {'tests/fixtures/manifest.json': json.dumps(manifest, indent=2)})
    text = report(guarded)
    assert '### Fixtures added or rehashed' in text
    assert '`headers/new.bin`: added, source human, purpose "an empty request"' in text
    assert '`headers/ok.bin`: rehashed ' in text and '-> ffffffffffff…' in text
    assert "purpose `a well-formed request` -> `a request with a body`" in text


def test_property_edits_and_removed_tests_are_listed(guarded: Repo) -> None:
    pull_request(guarded, {
        'tests/properties/test_parse.py': 'def test_trivial():\n    assert True\n',
        'tests/test_app.py': None,
    })
    text = report(guarded)
    assert '### Properties edited' in text
    assert '- `tests/properties/test_parse.py`: modified' in text
    assert '### Tests removed' in text
    assert '- `tests/test_app.py::test_parse`' in text
    assert '- `tests/properties/test_parse.py::test_parse_never_throws`' in text


GROUPED = 'from app import parse\n\n\nclass TestParse:\n    def test_parse(self):\n' \
    '        assert parse(b"x") == b"x"\n'


def test_test_moved_into_a_class_with_its_body_unchanged_is_a_move_not_a_removal(
        guarded: Repo) -> None:
    # rule 52: the hooks follow the body; so does the report, and a move needs no approval
    from oracle_guard.gate.approval import needing_approval
    from oracle_guard.gate.review_report import report_sections

    pull_request(guarded, {'tests/test_app.py': GROUPED})
    text = report(guarded)
    assert '### Tests removed' not in text, text
    assert '### Tests moved (name and body unchanged)' in text
    assert ('- `tests/test_app.py::test_parse` -> `tests/test_app.py::TestParse::test_parse`'
            ' (name and body unchanged)') in text
    cwd = os.getcwd()
    os.chdir(guarded.path)
    try:
        assert needing_approval(report_sections(range_context('main'))) == ()
    finally:
        os.chdir(cwd)


def test_test_moved_to_another_module_with_its_body_unchanged_is_a_move(guarded: Repo) -> None:
    pull_request(guarded, {'tests/test_app.py': None, 'tests/test_grouped.py': GROUPED})
    text = report(guarded)
    assert '### Tests removed' not in text, text
    assert '`tests/test_app.py::test_parse` -> `tests/test_grouped.py::TestParse::test_parse`' \
        in text


def test_test_moved_into_a_class_with_its_body_weakened_is_a_removal(guarded: Repo) -> None:
    pull_request(guarded, {'tests/test_app.py': GROUPED.replace('== b"x"', '!= 1')})
    text = report(guarded)
    assert '### Tests moved' not in text, text
    assert '### Tests removed' in text
    assert '- `tests/test_app.py::test_parse`' in text


def test_test_moved_into_a_class_pytest_does_not_collect_is_a_removal(guarded: Repo) -> None:
    # A class not named Test* is not collected: the test stopped running, whatever its body.
    pull_request(guarded, {'tests/test_app.py': GROUPED.replace('TestParse', 'Parse')})
    text = report(guarded)
    assert '### Tests moved' not in text, text
    assert '- `tests/test_app.py::test_parse`' in text


def test_pytest_configuration_and_conftest_control_are_listed(guarded: Repo) -> None:
    pull_request(guarded, {
        'pytest.ini': '[pytest]\naddopts = --deselect tests/test_app.py::test_parse\n',
        'tests/conftest.py': 'def pytest_collection_modifyitems(items):\n    items.clear()\n',
        '.pre-commit-config.yaml': 'repos:\n  - repo: local\n    hooks: []\n',
    })
    text = report(guarded)
    assert '### Test-run control and configuration changed' in text
    assert '- `pytest.ini`:' in text
    assert '- `tests/conftest.py`:' in text
    assert '- `.pre-commit-config.yaml`:' in text
