"""check-named-freezes over the whole tree on every core (reading/scan_pool.py): the
workers' scans give exactly what one process gives."""
from __future__ import annotations

import os

import pytest

from oracle_guard.hooks.check_named_freezes import main
from oracle_guard.reading import scan_pool
from oracle_guard.reading import scanner
from oracle_guard.reading.scan_cache import FileScan

LEDGER = (
    'budget: 1\n'
    'freezes:\n'
    '  - id: FZ-1\n'
    '    nodeid: tests/test_0.py::test_a\n'
    '    class: order-dependent\n'
    '    owner: alice\n'
    '    evidence: "fails after test_b"\n'
    '    expires: 2031-01-01\n'
)
# Rule 14: the skip comes from a helper module, so the scan rests on the helper's answers.
HARNESS = 'import pytest\n\nlater = pytest.mark.skip\n'
USES_HARNESS = 'from tests.harness import later\n\n\n@later\ndef test_a():\n    assert 1\n'


@pytest.fixture
def parses(monkeypatch):  # type: ignore[no-untyped-def]
    """The paths this process parses (a forked worker's parses are its own)."""
    seen: list[str] = []
    real = scanner.parse_python

    def counting(source, path='<test>'):  # type: ignore[no-untyped-def]
        seen.append(path)
        return real(source, path)

    monkeypatch.setattr(scanner, 'parse_python', counting)
    return seen


@pytest.fixture
def real_forms(repo):  # type: ignore[no-untyped-def]
    """Every case of tests/test_scanner_real_forms.py and the scan's hostile spellings,
    one file each, half adopted in the baseline, with a ledger, declared dependencies and
    a helper module to judge them by, in one commit."""
    from builders.scan_cases import HOSTILE
    from builders.scan_cases import real_forms_cases

    from oracle_guard.commands.baseline import main as baseline_main

    cases = real_forms_cases() + HOSTILE
    repo.write('pyproject.toml', '[project]\nname = "app"\nrequires-python = ">=3.9"\n'
                                 'dependencies = ["numpy"]\n\n'
                                 '[tool.oracle-guard]\nsrc = ["src/"]\n')
    repo.write('tests/freeze_ledger.yaml', LEDGER)
    repo.write('tests/harness.py', HARNESS)
    for i, case in enumerate(cases[::2]):
        repo.write(f'tests/test_{2 * i}.py', case)
    repo.commit('adopted tests')
    assert repo.run(baseline_main).rc == 0
    for i, case in enumerate(cases[1::2]):
        repo.write(f'tests/test_{2 * i + 1}.py', case)
    repo.write('tests/test_harnessed.py', USES_HARNESS)
    repo.add()
    repo.git('commit', '-q', '--amend', '--no-edit')
    return repo


@pytest.mark.parametrize('cache', ['0', '1'])
def test_two_processes_report_what_one_process_reports_on_every_real_form(
        real_forms, parses, monkeypatch, cache):
    monkeypatch.setenv('ORACLE_GUARD_SCAN_CACHE', cache)
    monkeypatch.setenv(scan_pool.ENV, '1')
    one = real_forms.run(main, '--all-files', '--today', '2030-06-01')
    parsed_alone = len(parses)
    monkeypatch.setenv('XDG_CACHE_HOME', os.environ['XDG_CACHE_HOME'] + '-pool')
    monkeypatch.setenv(scan_pool.ENV, '2')
    del parses[:]
    pooled = real_forms.run(main, '--all-files', '--today', '2030-06-01')

    assert pooled.out == one.out
    assert pooled.rc == one.rc == 1
    assert len(set(one.codes)) >= 6, one.codes  # many rules were judged
    assert 'tests/test_harnessed.py' in pooled.out  # the helper's skip, found by a worker
    # The workers parsed the files; this process read the file the ledger row names
    # (rule 16: does its test still live there?) and scanned the smallest file before
    # starting them (what it imports and learns is then theirs too).
    assert parsed_alone > 20
    assert 'tests/test_0.py' in parses and len(parses) <= 2, parses


def test_what_the_workers_scanned_is_not_parsed_again_by_a_warm_run(real_forms, parses,
                                                                     monkeypatch):
    monkeypatch.setenv('ORACLE_GUARD_SCAN_CACHE', '1')
    monkeypatch.setenv(scan_pool.ENV, '2')
    cold = real_forms.run(main, '--all-files', '--today', '2030-06-01')
    monkeypatch.setenv(scan_pool.ENV, '1')
    del parses[:]
    warm = real_forms.run(main, '--all-files', '--today', '2030-06-01')

    assert warm.out == cold.out
    assert 'tests/test_harnessed.py' in warm.out
    # The ledger's file (rule 16), and the file whose only silence word is in the helper
    # it imports: its scan rests on the helper's bytes, so it is never cached.
    assert sorted(set(parses)) == ['tests/test_0.py', 'tests/test_harnessed.py']


def test_a_worker_that_dies_leaves_the_scan_to_this_process(monkeypatch):
    monkeypatch.setenv(scan_pool.ENV, '2')

    parent = os.getpid()

    def dies(path: str, source: bytes) -> FileScan:
        if os.getpid() != parent:  # a worker (this process scans the smallest file first)
            os._exit(3)
        return FileScan([], [], [])

    assert scan_pool.scan_many([('a.py', b'x = 1\n'), ('b.py', b'y = 2\n'),
                                ('c.py', b'z = 3\n')], dies) is None


def test_the_workers_start_above_the_size_where_they_pay():
    assert scan_pool.processes(scan_pool.MIN_BYTES - 1, {}) == 1
    assert scan_pool.processes(64 * scan_pool.MIN_BYTES, {}) == min(
        64, len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else
        os.cpu_count() or 1)
    assert scan_pool.processes(1, {scan_pool.ENV: '3'}) == 3
    assert scan_pool.processes(1, {scan_pool.ENV: '1'}) == 1
    assert scan_pool.processes(1, {scan_pool.ENV: 'many'}) == 1  # not a number: as unset
