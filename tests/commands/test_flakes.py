"""``oracle-guard flakes``: real JUnit XML written by pytest, and hand-written XML."""
from __future__ import annotations

import datetime
import os
import sys

import pytest
import yaml

from oracle_guard import cli
from oracle_guard.commands.flakes import main

TODAY = '2026-06-01'
# Fails in the first run and passes afterwards: the counter file remembers the runs.
FLIP = '''\
import pathlib

COUNTER = pathlib.Path(__file__).with_name("runs.txt")


def test_flaky_cache():
    runs = int(COUNTER.read_text()) if COUNTER.exists() else 0
    COUNTER.write_text(str(runs + 1))
    assert runs > 0, "stale entry returned by the cache"


def test_always_broken():
    assert 1 + 1 == 3, "arithmetic is broken"


class TestStable:
    def test_fine(self):
        assert True
'''


def flakes(capsys, *args: str) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    capsys.readouterr()
    rc = main(['--today', TODAY, *args])
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def junit(*cases: str) -> str:
    return ('<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">'
            + ''.join(cases) + '</testsuite></testsuites>')


def case(name: str, outcome: str = '', classname: str = 'tests.test_a', message: str = '') -> str:
    if outcome == 'failure':
        return (f'<testcase classname="{classname}" name="{name}">'
                f'<failure message="{message}">Traceback\n{message}</failure></testcase>')
    if outcome == 'skipped':
        return (f'<testcase classname="{classname}" name="{name}">'
                f'<skipped type="pytest.skip" message="{message}"/></testcase>')
    return f'<testcase classname="{classname}" name="{name}"/>'


def write(folder, name: str, text: str) -> str:  # type: ignore[no-untyped-def]
    path = os.path.join(str(folder), name)
    with open(path, 'w') as f:
        f.write(text)
    return path


def draft_rows(out: str) -> list[dict[str, object]]:
    """The draft rows as YAML, the way a person pastes them under ``freezes:``."""
    return yaml.safe_load(out)['freezes']


@pytest.fixture
def real_runs(pytester: pytest.Pytester) -> tuple[str, str]:
    """Two JUnit files written by pytest itself, a flaky test failing only in the first."""
    pytester.makepyfile(test_flip=FLIP)
    for n in (1, 2):
        pytester.runpytest_inprocess(f'--junitxml=run{n}.xml', '-p', 'no:cacheprovider')
    return str(pytester.path / 'run1.xml'), str(pytester.path / 'run2.xml')


# -- real runs ---------------------------------------------------------------------------

def test_status_differing_between_real_runs_is_a_flake_candidate(capsys, real_runs):
    rc, out, _ = flakes(capsys, *real_runs)
    assert rc == 1
    rows = draft_rows(out)
    assert rows == [{
        'id': 'FZ-???', 'nodeid': 'test_flip.py::test_flaky_cache', 'class': 'unknown',
        'evidence': 'AssertionError: stale entry returned by the cache', 'owner': None,
        'expires': datetime.date(2026, 7, 1),
    }]
    assert '  # runs: failed, passed\n' in out


def test_test_failing_in_every_real_run_is_listed_as_a_failure_not_a_flake(capsys, real_runs):
    _, out, _ = flakes(capsys, *real_runs)
    assert '# failed in every run (1): a bug, not a flake' in out
    assert '#   test_flip.py::test_always_broken: AssertionError: arithmetic is broken' in out
    assert all(row['nodeid'] != 'test_flip.py::test_always_broken' for row in draft_rows(out))


def test_truncated_real_run_is_a_clear_error(capsys, real_runs, tmp_path):
    with open(real_runs[0], 'rb') as f:
        raw = f.read()
    cut = tmp_path / 'cut.xml'
    cut.write_bytes(raw[:len(raw) // 2])
    rc, out, err = flakes(capsys, str(cut), real_runs[1])
    assert rc == 2
    assert out == ''
    assert err.startswith(f'{cut}:')
    assert 'malformed or truncated XML: no element found' in err
    assert 'Traceback' not in err


def test_run_option_runs_the_command_twice_and_compares(capsys, pytester, monkeypatch):
    pytester.makepyfile(test_flip=FLIP)
    monkeypatch.chdir(pytester.path)
    rc, out, _ = flakes(capsys, '--run', '--', sys.executable, '-m', 'pytest', '-q',
                        '-p', 'no:cacheprovider', 'test_flip.py')
    assert rc == 1
    assert out.startswith('# compared 2 runs: run 1, run 2\n')
    assert [row['nodeid'] for row in draft_rows(out)] == ['test_flip.py::test_flaky_cache']
    # The runs' XML went to a temporary folder that is gone again.
    assert [name for name in os.listdir(pytester.path) if name.endswith('.xml')] == []


def test_run_option_with_a_command_that_writes_no_junit_is_a_clear_error(capsys, tmp_path,
                                                                         monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, _, err = flakes(capsys, '--run', '--', sys.executable, '-c', 'print("hello")')
    assert rc == 2
    assert 'run 1 exited with 0 and wrote no JUnit XML' in err
    assert 'hello' in err


def test_run_option_with_a_missing_program_is_a_clear_error(capsys):
    rc, _, err = flakes(capsys, '--run', '--', 'no-such-program-oracle-guard')
    assert (rc, 'cannot run the command' in err) == (2, True)


# -- suggested classes from the failure text ---------------------------------------------

@pytest.mark.parametrize('message, suggested, note', [
    ('TimeoutError: timed out after 2s', 'time-dependent', 'suggested from the failure text'),
    ('AssertionError: clock went backwards', 'time-dependent', 'suggested from the failure text'),
    ('ConnectionRefusedError: [Errno 111] Connection refused', 'network',
     'NOT freezable: isolate the test from the network'),
    ('requests.exceptions.ConnectTimeout: timed out', 'network', 'NOT freezable'),
    ('AssertionError: different result for seed 1234', 'unseeded-entropy',
     'NOT freezable: lock the seed'),
    ('assert 2 == 3', 'unknown', 'could not tell'),
])
def test_suggested_class_comes_from_the_failure_text(capsys, tmp_path, message, suggested, note):
    first = write(tmp_path, 'a.xml', junit(case('test_x', 'failure', message=message)))
    second = write(tmp_path, 'b.xml', junit(case('test_x')))
    rc, out, _ = flakes(capsys, first, second)
    assert rc == 1
    assert draft_rows(out)[0]['class'] == suggested
    assert note in out


def test_order_dependent_is_suggested_only_when_the_runs_ran_in_different_orders(capsys,
                                                                                 tmp_path):
    first = write(tmp_path, 'a.xml', junit(case('test_warm'), case('test_x', 'failure',
                                                                   message='assert 2 == 3')))
    second = write(tmp_path, 'b.xml', junit(case('test_x'), case('test_warm')))
    _, out, _ = flakes(capsys, first, second)
    assert draft_rows(out)[0]['class'] == 'order-dependent'
    assert 'the runs ran the tests in different orders' in out


def test_evidence_is_quoted_from_the_failure_and_kept_short(capsys, tmp_path):
    message = 'AssertionError: "quoted" ' + 'x' * 300
    first = write(tmp_path, 'a.xml', junit(case('test_x', 'failure', message=message.replace(
        '"', '&quot;'))))
    second = write(tmp_path, 'b.xml', junit(case('test_x')))
    _, out, _ = flakes(capsys, first, second)
    evidence = draft_rows(out)[0]['evidence']
    assert evidence.startswith('AssertionError: "quoted" xxx') and evidence.endswith('...')
    assert len(evidence) == 160


# -- matching and statuses ---------------------------------------------------------------

def test_any_run_failing_among_several_makes_a_candidate(capsys, tmp_path):
    runs = [write(tmp_path, f'{n}.xml', junit(case('test_x'))) for n in 'ab']
    runs.append(write(tmp_path, 'c.xml', junit(case('test_x', 'failure', message='boom'))))
    rc, out, _ = flakes(capsys, *runs)
    assert rc == 1
    assert '# runs: passed, passed, failed' in out


def test_identical_runs_have_no_candidates(capsys, tmp_path):
    runs = [write(tmp_path, f'{n}.xml', junit(case('test_x'), case('test_y', 'skipped')))
            for n in 'ab']
    rc, out, _ = flakes(capsys, *runs)
    assert rc == 0
    assert '# no flake candidates' in out


def test_skipped_versus_passed_is_not_a_flake(capsys, tmp_path):
    first = write(tmp_path, 'a.xml', junit(case('test_x', 'skipped')))
    second = write(tmp_path, 'b.xml', junit(case('test_x')))
    assert flakes(capsys, first, second)[0] == 0


def test_tests_are_matched_by_identity_when_a_file_moved_between_runs(capsys, tmp_path):
    first = write(tmp_path, 'a.xml', junit(case('test_x', 'failure', 'tests.test_a.TestK', 'boom')))
    second = write(tmp_path, 'b.xml', junit(case('test_x', '', 'tests.unit.test_b.TestK')))
    _, out, _ = flakes(capsys, first, second)
    assert draft_rows(out)[0]['nodeid'] == 'tests/test_a.py::TestK::test_x'


def test_same_identity_in_two_files_is_not_mixed_up(capsys, tmp_path):
    first = write(tmp_path, 'a.xml', junit(case('test_x', 'failure', 'tests.test_a', 'boom'),
                                           case('test_x', '', 'tests.test_b')))
    second = write(tmp_path, 'b.xml', junit(case('test_x', 'failure', 'tests.test_a', 'boom'),
                                            case('test_x', '', 'tests.test_b')))
    rc, out, _ = flakes(capsys, first, second)
    assert rc == 0
    assert '#   tests/test_a.py::test_x: boom' in out


def test_teardown_error_recorded_as_a_second_testcase_counts_as_failed(capsys, tmp_path):
    error = ('<testcase classname="tests.test_a" name="test_x">'
             '<error message="failed on teardown with &quot;OSError: socket closed&quot;">'
             'x</error></testcase>')
    first = write(tmp_path, 'a.xml', junit(case('test_x'), error))
    second = write(tmp_path, 'b.xml', junit(case('test_x')))
    rc, out, _ = flakes(capsys, first, second)
    assert rc == 1
    assert draft_rows(out)[0]['class'] == 'network'


def test_failure_wins_over_a_later_skipped_record_of_the_same_test(capsys, tmp_path):
    first = write(tmp_path, 'a.xml', junit(case('test_x', 'failure', message='boom'),
                                           case('test_x', 'skipped', message='teardown')))
    second = write(tmp_path, 'b.xml', junit(case('test_x')))
    rc, out, _ = flakes(capsys, first, second)
    assert rc == 1
    assert '# runs: failed, passed' in out


def test_xunit1_file_attribute_gives_the_node_id(capsys, tmp_path):
    failing = ('<testcase classname="tests.my.pkg.test_a.TestX" name="test_y" '
               'file="tests/my.pkg/test_a.py" line="3"><failure message="boom"/></testcase>')
    first = write(tmp_path, 'a.xml', junit(failing))
    second = write(tmp_path, 'b.xml', junit(
        '<testcase classname="tests.my.pkg.test_a.TestX" name="test_y" '
        'file="tests/my.pkg/test_a.py"/>'))
    _, out, _ = flakes(capsys, first, second)
    assert draft_rows(out)[0]['nodeid'] == 'tests/my.pkg/test_a.py::TestX::test_y'


# -- bad input ---------------------------------------------------------------------------

@pytest.mark.parametrize('text, message', [
    ('<testsuites><testsuite><testcase name="t">', ':1: malformed or truncated XML'),
    ('not xml at all', ':1: malformed or truncated XML'),
    ('\n\n<testsuites><oops></testsuites>', ':3: malformed or truncated XML'),
    ('<html><body/></html>', ':1: not JUnit XML: the root element is <html>'),
    ('<!DOCTYPE x [<!ENTITY a "b">]><testsuites/>', ':1: JUnit XML with a DOCTYPE'),
    ('<testsuites><testcase classname="x"/></testsuites>', 'a <testcase> has no name'),
])
def test_malformed_xml_is_a_clear_error(capsys, tmp_path, text, message):
    bad = write(tmp_path, 'bad.xml', text)
    good = write(tmp_path, 'good.xml', junit(case('test_x')))
    rc, out, err = flakes(capsys, good, bad)
    assert rc == 2
    assert out == ''
    assert message in err
    assert err.startswith(bad)


def test_missing_file_is_a_clear_error(capsys, tmp_path):
    good = write(tmp_path, 'good.xml', junit(case('test_x')))
    rc, _, err = flakes(capsys, good, str(tmp_path / 'nope.xml'))
    assert rc == 2
    assert 'nope.xml: cannot read: No such file or directory' in err


@pytest.mark.parametrize('args', [['one.xml'], [], ['--run'], ['--run', 'a.xml', '--', 'pytest'],
                                  ['--run', '--runs', '1', '--', 'pytest']])
def test_wrong_arguments_exit_2(capsys, args):
    with pytest.raises(SystemExit) as exc:
        main(args)
    assert exc.value.code == 2


def test_flakes_writes_nothing(capsys, tmp_path):
    first = write(tmp_path, 'a.xml', junit(case('test_x', 'failure', message='boom')))
    second = write(tmp_path, 'b.xml', junit(case('test_x')))
    before = sorted(os.listdir(tmp_path))
    flakes(capsys, first, second)
    assert sorted(os.listdir(tmp_path)) == before


def test_flakes_is_an_oracle_guard_command(capsys, tmp_path):
    first = write(tmp_path, 'a.xml', junit(case('test_x', 'failure', message='boom')))
    second = write(tmp_path, 'b.xml', junit(case('test_x')))
    assert cli.main(['flakes', first, second, '--today', TODAY]) == 1
    assert 'nodeid: tests/test_a.py::test_x' in capsys.readouterr().out
