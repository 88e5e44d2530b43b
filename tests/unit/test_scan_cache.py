"""The scan cache of check-named-freezes (reading/scan_cache.py): a developer's second
``--all-files`` run parses no test file whose exact bytes it scanned before, and judges
each again (rules 14-17 and 39-41: the ledger, the baseline, the declared dependencies,
the date); the cache can never hide a silence or a rule 35, 35b or 36 site."""
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
    """The scan cache's files (the folder also holds the other per-user caches)."""
    folder = os.path.join(os.environ['XDG_CACHE_HOME'], 'oracle-guard')
    return sorted(n for n in os.listdir(folder) if n.startswith('scans-')) \
        if os.path.isdir(folder) else []


def amend(repo):  # type: ignore[no-untyped-def]
    repo.add()
    repo.git('commit', '-q', '--amend', '--no-edit')


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


def test_a_file_with_a_silence_is_judged_every_run_but_parsed_once(repo, parses):
    committed(repo, BARE_SKIP)

    first = repo.run(main, '--all-files')
    second = repo.run(main, '--all-files')

    assert first.codes == second.codes == ['OG301']
    assert first.out == second.out
    assert parses == ['tests/test_a.py']
    assert not ScanCache.for_this_scanner().is_clean(ScanCache.key(BARE_SKIP.encode()))


LEDGER_ROW = (
    'budget: 1\n'
    'freezes:\n'
    '  - id: FZ-1\n'
    '    nodeid: tests/test_a.py::test_a\n'
    '    class: order-dependent\n'
    '    owner: alice\n'
    '    evidence: "fails after test_b"\n'
    '    expires: 2031-01-01\n'
)
NAMED_SKIP = BARE_SKIP.replace('@pytest.mark.skip', '@pytest.mark.skip(reason="FZ-1")')


def test_a_freeze_that_expires_fails_the_warm_run_without_a_parse(repo, parses):
    """Rule 17: the date is read anew every run, whatever the cache knows."""
    repo.write('tests/freeze_ledger.yaml', LEDGER_ROW)
    committed(repo, NAMED_SKIP)

    before = repo.run(main, '--all-files', '--today', '2030-06-01')
    after = repo.run(main, '--all-files', '--today', '2031-06-01')

    assert (before.rc, before.codes) == (0, []), before.out
    assert after.codes == ['OG303'], after.out
    assert parses == ['tests/test_a.py']


def test_a_ledger_row_removed_fails_the_warm_run_without_a_parse(repo, parses):
    """Rule 15: the ledger is read anew every run."""
    repo.write('tests/freeze_ledger.yaml', LEDGER_ROW)
    committed(repo, NAMED_SKIP)
    assert repo.run(main, '--all-files', '--today', '2030-06-01').rc == 0

    # edited in the working tree, as --all-files reads it (no second commit: history
    # mode would scan each commit of its own)
    repo.write('tests/freeze_ledger.yaml', 'budget: 1\nfreezes: []\n')
    result = repo.run(main, '--all-files', '--today', '2030-06-01')

    assert result.codes == ['OG302'], result.out
    assert parses == ['tests/test_a.py']


def test_a_baseline_removed_fails_the_warm_run_without_a_parse(repo, parses):
    """Rule 39: the baseline is read anew every run."""
    from oracle_guard.commands.baseline import main as baseline_main

    committed(repo, BARE_SKIP)
    assert repo.run(baseline_main).rc == 0
    amend(repo)
    accepted = repo.run(main, '--all-files')
    assert (accepted.rc, accepted.codes) == (0, []), accepted.out
    scanned = len(parses)

    repo.git('rm', '-q', 'tests/oracle_baseline.json')
    amend(repo)
    result = repo.run(main, '--all-files')

    assert result.codes == ['OG301'], result.out
    assert len(parses) == scanned  # judged again, not parsed again


VERSION_SKIP = ('import sys\n\nimport pytest\n\n\n'
                '@pytest.mark.skipif(sys.version_info >= (3, 9), reason="old Pythons only")\n'
                'def test_a():\n    assert 1\n')


def test_an_environment_condition_is_judged_again_when_requires_python_changes(repo, parses):
    """Rules 40-41: a verdict is kept with the Python versions it was judged on."""
    repo.write('pyproject.toml', '[project]\nname = "app"\nrequires-python = ">=3.8"\n\n'
                                 '[tool.oracle-guard]\nsrc = ["src/"]\n')
    repo.write('tests/test_a.py', VERSION_SKIP)
    repo.commit('tests')
    honest = repo.run(main, '--all-files')  # false on 3.8: an environment skip
    again = repo.run(main, '--all-files')
    assert (honest.rc, again.rc) == (0, 0), (honest.out, again.out)
    assert parses == ['tests/test_a.py']

    repo.write('pyproject.toml', repo.read('pyproject.toml').replace(b'>=3.8', b'>=3.9'))
    result = repo.run(main, '--all-files')  # now true everywhere: a silence in disguise

    assert result.codes == ['OG320'], result.out
    assert parses == ['tests/test_a.py', 'tests/test_a.py']


def test_a_rule_35_site_is_found_again_from_the_cache(repo, parses):
    source = 'import pytest\n\ndef test_a():\n    pytest.helpers = None\n'
    committed(repo, source)

    assert repo.run(main, '--all-files').codes == ['OG308']
    assert repo.run(main, '--all-files').codes == ['OG308']
    assert len(parses) == 1
    assert not ScanCache.for_this_scanner().is_clean(ScanCache.key(source.encode()))


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


def test_a_rule_35b_site_is_found_again_from_the_cache(repo, parses):
    committed(repo, 'import pytest\n\ndef test_a(name):\n    getattr(pytest.mark, name)\n')

    first = repo.run(main, '--all-files')
    second = repo.run(main, '--all-files')

    assert 'OG310' in first.codes and first.out == second.out, first.out
    assert len(parses) == 1


def test_an_entry_that_does_not_read_back_is_scanned_again(repo, parses):
    """A cache line with a foreign field, a wrong type or torn JSON is no scan."""
    committed(repo, BARE_SKIP)
    assert repo.run(main, '--all-files').codes == ['OG301']
    cache = ScanCache.for_this_scanner()
    digest = ScanCache.key(BARE_SKIP.encode())
    good = cache.known[digest]
    bad_lines = (good.replace('"skip"', '7'), good[:-5], good.replace('"m"', '"x"'),
                 good.replace('"f":[]', '"f":[[1,1,"OG307"]]'), '[]', '{}', 'null')
    for bad in bad_lines:
        with open(cache.path, 'a') as f:
            f.write(f'{digest} {bad}\n')  # the last line of a key wins
        assert repo.run(main, '--all-files').codes == ['OG301'], bad
        with open(cache.path, 'a') as f:
            f.write(f'{digest} -\n')  # "clean": read back exactly, so trusted
        assert repo.run(main, '--all-files').codes == [], bad
    assert len(parses) == 1 + len(bad_lines)


# -- the warm run judges as the cold run does ------------------------------------------------

def test_a_warm_run_reports_what_a_cold_run_reports_on_every_real_form(repo, parses,
                                                                      monkeypatch):
    """Every case of tests/test_scanner_real_forms.py and the scan's hostile spellings
    (tests/test_scan_fast_path.py), one file each, with a ledger, a baseline and declared
    dependencies to judge them by: a warm run prints what a run without the cache prints,
    and parses nothing."""
    from builders.scan_cases import HOSTILE
    from builders.scan_cases import real_forms_cases

    from oracle_guard.commands.baseline import main as baseline_main

    cases = real_forms_cases() + HOSTILE
    repo.write('pyproject.toml', '[project]\nname = "app"\nrequires-python = ">=3.9"\n'
                                 'dependencies = ["numpy"]\n\n'
                                 '[tool.oracle-guard]\nsrc = ["src/"]\n')
    repo.write('tests/freeze_ledger.yaml', LEDGER_ROW.replace('tests/test_a.py',
                                                              'tests/test_0.py'))
    for i, case in enumerate(cases[::2]):  # half the files are adopted in the baseline
        repo.write(f'tests/test_{2 * i}.py', case)
    repo.commit('adopted tests')
    assert repo.run(baseline_main).rc == 0
    for i, case in enumerate(cases[1::2]):
        repo.write(f'tests/test_{2 * i + 1}.py', case)
    amend(repo)  # one commit: history mode would scan each commit of its own

    monkeypatch.setenv('ORACLE_GUARD_SCAN_CACHE', '0')
    reference = repo.run(main, '--all-files', '--today', '2030-06-01')
    monkeypatch.setenv('ORACLE_GUARD_SCAN_CACHE', '1')
    cold = repo.run(main, '--all-files', '--today', '2030-06-01')
    del parses[:]
    warm = repo.run(main, '--all-files', '--today', '2030-06-01')

    assert warm.out == cold.out == reference.out
    assert warm.rc == cold.rc == reference.rc == 1
    # Only the file a ledger row names is read, for the tests it defines (rule 16: does
    # the row's test still live there?), once per run like every judged document.
    assert parses == ['tests/test_0.py']
    assert len(set(reference.codes)) >= 6, reference.codes  # many rules were judged


def test_a_file_using_a_helpers_name_is_judged_with_the_helper_as_it_is_now(repo):
    # Rule 14: the skip comes from tests/harness.py, so the test file's bytes alone do not
    # decide its scan; a warm run must see the helper change although the file did not.
    repo.write('pyproject.toml', '[tool.oracle-guard]\nsrc = ["src/"]\n')
    repo.write('tests/harness.py', 'def skip(reason):\n    return lambda f: f\n')
    repo.write('tests/test_a.py', 'from harness import skip\n\n\n@skip("later")\n'
                                  'def test_a():\n    assert 1\n')
    repo.commit('tests')
    first = repo.run(main, '--all-files')
    assert first.rc == 0, first.out

    repo.write('tests/harness.py', 'from unittest import skip  # noqa: F401\n')
    second = repo.run(main, '--all-files')

    assert second.rc == 1 and 'tests/test_a.py:4' in second.out, second.out


def test_a_file_using_a_helpers_name_is_not_parsed_again_while_the_helper_answers_the_same(
        repo, parses):
    # Rule 14: the scan keeps the questions it asked of tests/harness.py and their answers;
    # a warm run asks them again and, while the answers hold, parses the file no more.
    repo.write('pyproject.toml', '[tool.oracle-guard]\nsrc = ["src/"]\n')
    repo.write('tests/harness.py', 'def skip(reason):\n    return lambda f: f\n')
    repo.write('tests/test_a.py', 'from harness import skip\n\n\n@skip("later")\n'
                                  'def test_a():\n    assert 1\n')
    repo.commit('tests')

    first = repo.run(main, '--all-files')
    second = repo.run(main, '--all-files')

    assert first.rc == second.rc == 0, (first.out, second.out)
    assert parses.count('tests/test_a.py') == 1, parses


def test_a_helper_that_appears_after_the_scan_is_asked_about_again(repo, parses):
    # The first scan asked where `harness` is and got no answer (no such helper yet); the
    # helper then appears, passing unittest's skip on: the same bytes of test_a.py are
    # judged anew, and the skip has no freeze id (rule 14).
    repo.write('pyproject.toml', '[tool.oracle-guard]\nsrc = ["src/"]\n')
    repo.write('tests/test_a.py', 'from harness import skip\n\n\n@skip("later")\n'
                                  'def test_a():\n    assert 1\n')
    repo.commit('tests')
    first = repo.run(main, '--all-files')
    assert first.rc == 0, first.out

    repo.write('tests/harness.py', 'from unittest import skip  # noqa: F401\n')
    second = repo.run(main, '--all-files')

    assert second.rc == 1 and 'tests/test_a.py:4' in second.out, second.out
    assert parses.count('tests/test_a.py') == 2, parses  # the answers changed: parsed again


def test_a_file_with_no_silence_word_is_asked_about_its_helpers_again(repo):
    # tests/test_a.py spells no silence word and imports `later` from a module that is
    # not there yet: clean. The helper then appears, passing unittest's skip on, and the
    # same bytes of test_a.py are judged anew (rule 14).
    repo.write('pyproject.toml', '[tool.oracle-guard]\nsrc = ["src/"]\n')
    repo.write('tests/test_a.py', 'from harness import later\n\n\n@later("soon")\n'
                                  'def test_a():\n    assert 1\n')
    repo.commit('tests')
    first = repo.run(main, '--all-files')
    assert first.rc == 0, first.out

    repo.write('tests/harness.py', 'import unittest\n\nlater = unittest.skip\n')
    second = repo.run(main, '--all-files')

    assert second.rc == 1 and 'tests/test_a.py:4' in second.out, second.out


def test_a_file_whose_imports_reach_only_quiet_helpers_answers_from_the_cache(
        repo, monkeypatch):
    # tests/test_a.py spells no silence word and imports a helper that spells none either:
    # its scan (nothing) is cached with the prefilter's answer about the helper, so a warm
    # run scans it no more and says the same; once the helper passes unittest's skip on,
    # the same bytes of test_a.py are judged anew (rule 14).
    from oracle_guard.hooks import check_named_freezes

    scanned: list[str] = []
    real = check_named_freezes.scan_file

    def counting(path, source, *args, **kwargs):  # type: ignore[no-untyped-def]
        scanned.append(path)
        return real(path, source, *args, **kwargs)

    monkeypatch.setattr(check_named_freezes, 'scan_file', counting)
    monkeypatch.setenv('ORACLE_GUARD_SCAN_PROCESSES', '1')  # scanned in this process
    test_a = 'from harness import later\n\n\n@later("soon")\ndef test_a():\n    assert 1\n'
    repo.write('pyproject.toml', '[tool.oracle-guard]\nsrc = ["src/"]\n')
    repo.write('tests/harness.py', 'def later(reason):\n    return lambda f: f\n')
    repo.write('tests/test_a.py', test_a)
    repo.commit('tests')

    cold = repo.run(main, '--all-files')
    assert ScanCache.key(test_a.encode()) in ScanCache.for_this_scanner().known
    warm = repo.run(main, '--all-files')

    assert cold.rc == warm.rc == 0 and cold.out == warm.out, (cold.out, warm.out)
    assert scanned.count('tests/test_a.py') == 1, scanned  # the cold run only

    repo.write('tests/harness.py', 'import unittest\n\nlater = unittest.skip\n')
    changed = repo.run(main, '--all-files')

    assert changed.rc == 1 and 'tests/test_a.py:4' in changed.out, changed.out
    assert scanned.count('tests/test_a.py') == 2, scanned
