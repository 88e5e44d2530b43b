"""The baseline of adopted silences: rule 39 (a match passes) and rule 42 (it grows alone)."""
from __future__ import annotations

import json
import os

from oracle_guard.commands.baseline import main as baseline_main
from oracle_guard.hooks.check_freeze_ledger import main as ledger_main
from oracle_guard.hooks.check_named_freezes import main as freezes_main
from oracle_guard.hooks.forbid_mixed_oracle_diff import main as mixed_main

LEGACY = '''\
import os

import pytest


@pytest.mark.skipif(os.environ.get("SLOW") is None, reason="slow")
def test_slow():
    assert 1


class TestOld:
    @pytest.mark.xfail(reason="never worked")
    def test_broken(self):
        assert 0

    def test_fine(self):
        pytest.skip("later")


def test_other():
    assert 1
'''


def adopt(guarded):
    """The legacy test file exists, then the baseline is written and committed alone."""
    guarded.write('tests/test_legacy.py', LEGACY)
    guarded.commit('legacy tests')
    result = guarded.run(baseline_main)
    assert result.rc == 0, result.err
    guarded.commit('oracle-guard baseline')
    return result


def entries(repo):
    return json.loads(repo.read('tests/oracle_baseline.json'))['silences']


def test_baseline_records_each_silence_that_needs_a_freeze(guarded):
    result = adopt(guarded)
    assert 'wrote tests/oracle_baseline.json: 3 silence(s)' in result.out
    got = [(e['path'], e['tests'], e['kind']) for e in entries(guarded)]
    assert got == [('tests/test_legacy.py', ['TestOld::test_broken'], 'xfail'),
                   ('tests/test_legacy.py', ['TestOld::test_fine'], 'skip'),
                   ('tests/test_legacy.py', ['test_slow'], 'skipif')]
    data = json.loads(guarded.read('tests/oracle_baseline.json'))
    assert data['version'] == 1 and len(data['silences'][0]['digest']) == 64
    assert guarded.run(baseline_main).out.endswith('is up to date: 3 silence(s), 0 excluded '
                                                   'test(s)\n')


def test_baselined_silence_passes_check_named_freezes(guarded):
    adopt(guarded)
    assert guarded.run(freezes_main, '--all-files').rc == 0
    assert guarded.run(freezes_main, 'tests/test_legacy.py').rc == 0


def test_without_the_baseline_the_same_silences_fail(guarded):
    guarded.write('tests/test_legacy.py', LEGACY)
    guarded.commit('legacy tests')
    assert guarded.run(freezes_main, '--all-files').codes == ['OG301'] * 3


def test_moving_the_file_keeps_the_match(guarded):
    adopt(guarded)
    os.makedirs(os.path.join(guarded.path, 'tests/unit'))
    guarded.git('mv', 'tests/test_legacy.py', 'tests/unit/test_legacy.py')
    assert guarded.run(freezes_main, 'tests/unit/test_legacy.py').rc == 0


def test_reformatting_the_silence_keeps_the_match(guarded):
    adopt(guarded)
    guarded.write('tests/test_legacy.py', LEGACY.replace(
        '@pytest.mark.xfail(reason="never worked")',
        "@pytest.mark.xfail(\n        reason='never worked',\n    )"))
    guarded.add()
    assert guarded.run(freezes_main, 'tests/test_legacy.py').rc == 0


def test_changed_condition_of_a_baselined_silence_fails(guarded):
    adopt(guarded)
    guarded.write('tests/test_legacy.py', LEGACY.replace('"SLOW"', '"FAST"'))
    guarded.add()
    result = guarded.run(freezes_main, 'tests/test_legacy.py')
    assert result.codes == ['OG301']


def test_changed_reason_of_a_baselined_silence_fails(guarded):
    adopt(guarded)
    guarded.write('tests/test_legacy.py', LEGACY.replace('"never worked"', '"still broken"'))
    guarded.add()
    assert guarded.run(freezes_main, 'tests/test_legacy.py').codes == ['OG301']


def test_new_silence_next_to_baselined_ones_fails(guarded):
    adopt(guarded)
    guarded.write('tests/test_legacy.py', LEGACY.replace(
        'def test_other():', '@pytest.mark.skip(reason="later")\ndef test_other():'))
    guarded.add()
    result = guarded.run(freezes_main, 'tests/test_legacy.py')
    assert result.codes == ['OG301']
    assert ':20:2: OG301' in result.out


def test_same_silence_moved_onto_another_test_fails(guarded):
    adopt(guarded)
    moved = LEGACY.replace(
        '@pytest.mark.skipif(os.environ.get("SLOW") is None, reason="slow")\ndef test_slow():',
        'def test_slow():').replace(
        'def test_other():',
        '@pytest.mark.skipif(os.environ.get("SLOW") is None, reason="slow")\ndef test_other():')
    guarded.write('tests/test_legacy.py', moved)
    guarded.add()
    assert guarded.run(freezes_main, 'tests/test_legacy.py').codes == ['OG301']


def test_same_silence_in_a_copy_of_the_file_fails(guarded):
    adopt(guarded)
    guarded.write('tests/test_copy.py', LEGACY)
    guarded.add()
    assert guarded.run(freezes_main, 'tests/test_copy.py').codes == ['OG301'] * 3


def test_stale_entries_are_a_note_and_prune_removes_them(guarded):
    adopt(guarded)
    guarded.write('tests/test_legacy.py', LEGACY.replace('        pytest.skip("later")\n',
                                                         '        assert 1\n'))
    guarded.commit('fixed one')
    result = guarded.run(freezes_main, '--all-files')
    assert result.rc == 0
    assert 'note: 1 entry of tests/oracle_baseline.json match no silence any more' in result.out
    pruned = guarded.run(baseline_main, '--prune')
    assert 'pruned  tests/test_legacy.py: skip on TestOld::test_fine' in pruned.out
    assert len(entries(guarded)) == 2


def test_prune_never_adds_an_entry(guarded):
    adopt(guarded)
    guarded.write('tests/test_new.py', 'import pytest\n\n\n@pytest.mark.skip\ndef test_n():\n'
                                       '    assert 0\n')
    guarded.commit('new skip')
    guarded.run(baseline_main, '--prune')
    assert len(entries(guarded)) == 3


# Rule 42: the baseline grows only in a change of its own.
def test_baseline_grown_together_with_a_test_edit_fails(guarded):
    adopt(guarded)
    guarded.write('tests/test_new.py', 'import pytest\n\n\n@pytest.mark.skip\ndef test_n():\n'
                                       '    assert 0\n')
    guarded.run(baseline_main)
    guarded.add()
    result = guarded.run(ledger_main)
    assert result.codes == ['OG520']
    assert 'baseline grown: accepts skip on test_n in tests/test_new.py' in result.out
    assert guarded.run(freezes_main, 'tests/test_new.py').rc == 0  # the hook alone is fooled


def test_baseline_grown_together_with_a_src_edit_fails(guarded):
    adopt(guarded)
    guarded.write('tests/test_new.py', 'import pytest\n\n\n@pytest.mark.skip\ndef test_n():\n'
                                       '    assert 0\n')
    guarded.commit('new skip, blocked by check-named-freezes locally')
    guarded.run(baseline_main)
    guarded.write('src/app.py', 'def parse(b):\n    return None\n')
    guarded.add()
    assert guarded.run(ledger_main).codes == ['OG520']
    assert 'OG201' in guarded.run(mixed_main).out  # and it is an oracle file next to src/


def test_baseline_grown_alone_passes(guarded):
    adopt(guarded)
    guarded.write('tests/test_new.py', 'import pytest\n\n\n@pytest.mark.skip\ndef test_n():\n'
                                       '    assert 0\n')
    guarded.commit('new skip')
    guarded.run(baseline_main)
    guarded.add()
    assert guarded.run(ledger_main).rc == 0


def test_baseline_shrunk_together_with_a_test_edit_passes(guarded):
    adopt(guarded)
    guarded.write('tests/test_legacy.py', LEGACY.replace('        pytest.skip("later")\n',
                                                         '        assert 1\n'))
    guarded.run(baseline_main, '--prune')
    guarded.add()
    assert guarded.run(ledger_main).rc == 0


def test_baseline_moved_with_its_file_together_with_the_move_passes(guarded):
    adopt(guarded)
    os.makedirs(os.path.join(guarded.path, 'tests/unit'))
    guarded.git('mv', 'tests/test_legacy.py', 'tests/unit/test_legacy.py')
    guarded.run(baseline_main, '--prune')
    guarded.run(baseline_main)
    guarded.add()
    assert guarded.run(ledger_main).rc == 0


# What the existing pytest configuration already leaves out is recorded for the audit.
def test_baseline_records_tests_left_out_by_the_pytest_configuration(guarded):
    guarded.write('pytest.ini', '[pytest]\naddopts = -q --deselect tests/test_app.py::test_parse'
                                ' --ignore=tests/legacy\n')
    guarded.write('tests/legacy/test_old.py', 'def test_one():\n    assert 1\n\n\n'
                                              'class TestTwo:\n    def test_two(self):\n'
                                              '        assert 1\n')
    guarded.write('tests/conftest.py', 'import sys\n\ncollect_ignore = ["test_win.py"]\n'
                                       'if sys.platform != "win32":\n'
                                       '    collect_ignore.append("test_posix_only.py")\n')
    guarded.write('tests/test_win.py', 'def test_w():\n    assert 1\n')
    guarded.commit('pytest configuration')
    guarded.run(baseline_main)
    excluded = json.loads(guarded.read('tests/oracle_baseline.json'))['excluded']
    assert excluded == [
        {'nodeid': 'tests/legacy/test_old.py::TestTwo::test_two',
         'by': 'addopts --ignore in pytest.ini'},
        {'nodeid': 'tests/legacy/test_old.py::test_one', 'by': 'addopts --ignore in pytest.ini'},
        {'nodeid': 'tests/test_app.py::test_parse', 'by': 'addopts --deselect in pytest.ini'},
        {'nodeid': 'tests/test_win.py::test_w', 'by': 'collect_ignore in tests/conftest.py'},
    ]


def test_a_collect_ignore_under_an_if_is_recorded_with_its_condition(guarded):
    # cattrs' conftest leaves its PEP 604 tests out below Python 3.10 only: the record says
    # so, so a reader (and the audit on another interpreter) knows where it applies.
    guarded.write('tests/conftest.py', 'import sys\n\ncollect_ignore = []\n'
                                       'if sys.version_info < (3, 10):\n'
                                       '    collect_ignore.append("test_604.py")\n'
                                       'else:\n'
                                       '    collect_ignore.append("test_old_unions.py")\n')
    guarded.write('tests/test_604.py', 'def test_union():\n    assert int | None\n')
    guarded.write('tests/test_old_unions.py', 'def test_union():\n    assert 1\n')
    guarded.commit('pytest configuration')
    guarded.run(baseline_main)
    excluded = json.loads(guarded.read('tests/oracle_baseline.json'))['excluded']
    assert excluded == [
        {'nodeid': 'tests/test_604.py::test_union',
         'by': 'collect_ignore in tests/conftest.py when sys.version_info < (3, 10)'},
        {'nodeid': 'tests/test_old_unions.py::test_union',
         'by': 'collect_ignore in tests/conftest.py when not (sys.version_info < (3, 10))'},
    ]


def test_malformed_baseline_is_a_configuration_error(guarded):
    guarded.write('tests/test_legacy.py', LEGACY)
    guarded.write('tests/oracle_baseline.json', '{"version": 2, "silences": []}')
    guarded.add()
    result = guarded.run(freezes_main, 'tests/test_legacy.py')
    assert result.rc == 2
    assert 'tests/oracle_baseline.json:1: version 2 is not 1' in result.err


def test_the_adoption_commit_itself_may_hold_the_baseline_and_test_moves(repo):
    """Before adoption nothing was guarded: the commit that adds the table, the baseline
    and moves a test into the properties folder is not a baseline that grew."""
    repo.write('pyproject.toml', '[project]\nname = "app"\n')
    repo.write('tests/test_legacy.py', LEGACY)
    repo.commit('before adoption')
    repo.write('pyproject.toml', '[project]\nname = "app"\n\n[tool.oracle-guard]\n'
                                 'src = ["src/"]\n')
    repo.write('tests/freeze_ledger.yaml', 'budget: 0\nfreezes: []\n')
    assert repo.run(baseline_main).rc == 0
    os.makedirs(os.path.join(repo.path, 'tests/properties'))
    repo.git('mv', 'tests/test_legacy.py', 'tests/properties/test_legacy.py')
    repo.run(baseline_main, '--prune')
    repo.run(baseline_main)
    repo.add()
    result = repo.run(ledger_main)
    assert result.rc == 0, result.out


def test_an_unparsable_test_file_is_kept_by_its_bytes_and_pruned_once_it_changes(guarded):
    """Rule 39 for OG307: the entry holds one content; --prune drops it when the file has
    changed and adds nothing for the new bytes, plain `baseline` adds them."""
    broken = 'import pytest\n\n@pytest.mark.skip\ndef broken(:\n    pass\n'
    guarded.write('tests/test_newer.py', broken)
    guarded.run(baseline_main, '--no-collect')
    first = json.loads(guarded.read('tests/oracle_baseline.json'))['unparsable']
    assert [u['path'] for u in first] == ['tests/test_newer.py']
    guarded.write('tests/test_newer.py', broken + '# more\n')
    pruned = guarded.run(baseline_main, '--no-collect', '--prune')
    assert 'pruned  unparsable tests/test_newer.py' in pruned.out
    assert 'unparsable' not in json.loads(guarded.read('tests/oracle_baseline.json'))
    added = guarded.run(baseline_main, '--no-collect')
    assert 'added   unparsable tests/test_newer.py' in added.out
    again = json.loads(guarded.read('tests/oracle_baseline.json'))['unparsable']
    assert [u['digest'] for u in again] != [u['digest'] for u in first]


def test_a_duplicate_key_in_a_baseline_entry_is_a_configuration_error_naming_its_line(guarded):
    """Rule 39's judge reads the baseline without line numbers (the json module's C
    reader), yet a second ``digest`` in an entry, which plain ``json.loads`` lets win, is
    still refused, at its line."""
    adopt(guarded)
    text = guarded.read('tests/oracle_baseline.json').decode()
    first = entries(guarded)[0]['digest']
    text = text.replace(f'"digest": "{first}"', f'"digest": "{"0" * 64}",\n'
                                                f'      "digest": "{first}"', 1)
    guarded.write('tests/oracle_baseline.json', text)
    guarded.write('tests/test_legacy.py', LEGACY + '\n\ndef test_new():\n    assert 2\n')
    guarded.add()
    line = text.splitlines().index(f'      "digest": "{first}"') + 1
    result = guarded.run(freezes_main)
    assert result.rc == 2
    assert f"tests/oracle_baseline.json:{line}: duplicate key 'digest'" in result.err


DOCUMENTS = [
    b'{"version": 1, "silences": [], "excluded": []}',
    b'\xef\xbb\xbf{"a":\r\n [1, 2.5, -3e4, true, false, null, "\\u00e9\\ud83d\\ude00"]}\r\n',
    b'{"a": {"b": {"c": 1, "c": 2}}}',
    b'{"a": 1, "a": 1}',
    b'[{"x": NaN}]', b'{"x": Infinity}', b'{"x": -Infinity}',
    b'{"a": 1,}', b'{"a" 1}', b'{"a": 1} trailing', b'', b'   ', b'{"a": "\x01"}',
    b'{"a": "\xff"}', b'[' * 100_000 + b']' * 100_000, b'{"a": 1}\n{"b": 2}',
    b'{"a": 123456789012345678901234567890}', b'{"\\ud800": "lone surrogate"}',
    b'{"a": [1, 2, 3, {"b": [], "c": {}}]}', b'"just a string"', b'{"a": \'x\'}',
]


def _read(raw, lines):
    from oracle_guard.findings import ConfigError
    from oracle_guard.oracle.documents import load_json

    try:
        return 'ok', load_json(raw, 'doc.json', lines=lines)
    except ConfigError as exc:
        return 'error', (exc.line, str(exc))


def test_the_reading_without_lines_accepts_and_refuses_what_the_reading_with_lines_does():
    """The fast path of ``load_json`` beside its reference, on valid documents and on
    each way a document is refused (duplicate keys at any depth, NaN, bad UTF-8, nesting,
    control characters, trailing data): the same value, or the same error at the same
    line."""
    for raw in DOCUMENTS:
        assert _read(raw, False) == _read(raw, True), raw[:40]
    verdicts = {_read(raw, False)[0] for raw in DOCUMENTS}
    assert verdicts == {'ok', 'error'}


def test_a_baseline_read_without_lines_is_the_baseline_read_with_them(guarded):
    from oracle_guard.findings import ConfigError
    from oracle_guard.oracle.baseline import parse_baseline

    adopt(guarded)
    raw = guarded.read('tests/oracle_baseline.json')
    assert parse_baseline(raw, 'b.json', lines=False).entries == \
        parse_baseline(raw, 'b.json').entries
    broken = raw.replace(b'"scope": "test"', b'"scope": 7', 1)
    errors = []
    for lines in (False, True):
        try:
            parse_baseline(broken, 'b.json', lines=lines)
        except ConfigError as exc:
            errors.append((exc.line, str(exc)))
    assert len(errors) == 2 and errors[0] == errors[1] and errors[0][0] > 1
