"""The scan cache of check-named-freezes (reading/scan_cache.py): a developer's second
``--all-files`` run skips the test files whose exact bytes were scanned clean, and the
cache can never hide a silence (rules 14-17) or a rule 35 site."""
from __future__ import annotations

import os

import pytest

from oracle_guard.hooks.check_named_freezes import main
from oracle_guard.reading import scanner
from oracle_guard.reading.scan_cache import ScanCache

# Passes the byte prefilter ("skip" in a comment), so only a parse shows it is clean.
CLEAN = 'import pytest\n\n# this test must never be skipped\ndef test_a():\n    assert 1\n'
BARE_SKIP = 'import pytest\n\n@pytest.mark.skip\ndef test_a():\n    assert 1\n'


@pytest.fixture
def parses(monkeypatch):  # type: ignore[no-untyped-def]
    """The paths check-named-freezes parses, in order."""
    seen: list[str] = []
    real = scanner.parse_python

    def counting(source, path='<test>'):  # type: ignore[no-untyped-def]
        seen.append(path)
        return real(source, path)

    monkeypatch.setattr(scanner, 'parse_python', counting)
    return seen


def cache_files() -> list[str]:
    folder = os.path.join(os.environ['XDG_CACHE_HOME'], 'oracle-guard')
    return sorted(os.listdir(folder)) if os.path.isdir(folder) else []


def committed(repo, source):  # type: ignore[no-untyped-def]
    repo.write('pyproject.toml', '[tool.oracle-guard]\nsrc = ["src/"]\n')
    repo.write('tests/test_a.py', source)
    repo.commit('tests')
    return repo


def test_a_second_all_files_run_does_not_parse_a_file_scanned_clean(repo, parses):
    committed(repo, CLEAN)

    first = repo.run(main, '--all-files')
    second = repo.run(main, '--all-files')

    assert first.rc == second.rc == 0, (first.out, second.out)
    assert parses == ['tests/test_a.py']  # the first run only
    assert ScanCache.for_this_scanner().is_clean(ScanCache.key(CLEAN.encode()))


def test_a_file_scanned_clean_that_gains_a_bare_skip_fails(repo):
    committed(repo, CLEAN)
    assert repo.run(main, '--all-files').rc == 0

    repo.write('tests/test_a.py', BARE_SKIP)
    result = repo.run(main, '--all-files')

    assert result.rc == 1 and result.codes == ['OG301'], result.out


def test_ci_neither_reads_nor_writes_the_cache_unless_asked(repo, parses, monkeypatch):
    committed(repo, CLEAN)
    monkeypatch.setenv('CI', 'true')

    repo.run(main, '--all-files')
    repo.run(main, '--all-files')
    assert cache_files() == [] and len(parses) == 2

    monkeypatch.setenv('ORACLE_GUARD_SCAN_CACHE', '1')
    repo.run(main, '--all-files')
    repo.run(main, '--all-files')
    assert len(cache_files()) == 1 and len(parses) == 3


def test_scan_cache_off_is_off(repo, parses, monkeypatch):
    committed(repo, CLEAN)
    monkeypatch.setenv('ORACLE_GUARD_SCAN_CACHE', '0')

    repo.run(main, '--all-files')
    repo.run(main, '--all-files')

    assert cache_files() == [] and len(parses) == 2


def test_a_commit_neither_reads_nor_writes_the_cache(repo, parses):
    committed(repo, CLEAN)
    repo.write('tests/test_b.py', CLEAN.replace('test_a', 'test_b'))
    repo.add()

    repo.run(main, 'tests/test_b.py')
    repo.run(main, 'tests/test_b.py')

    assert cache_files() == [] and len(parses) == 2


def test_the_cache_lives_outside_the_repository(repo):
    committed(repo, CLEAN)
    before = repo.snapshot()

    repo.run(main, '--all-files')

    assert repo.snapshot() == before
    assert repo.git('status', '--porcelain', '--ignored') == ''
    assert len(cache_files()) == 1


def test_a_torn_or_foreign_line_in_the_cache_file_clears_nothing(repo, parses):
    committed(repo, BARE_SKIP)
    cache = ScanCache.for_this_scanner()
    os.makedirs(os.path.dirname(cache.path))
    digest = ScanCache.key(BARE_SKIP.encode())
    with open(cache.path, 'w') as f:
        f.write(digest[:40] + '\n' + digest.upper() + '\n' + 'x' * 64 + '\n')

    assert repo.run(main, '--all-files').codes == ['OG301']
