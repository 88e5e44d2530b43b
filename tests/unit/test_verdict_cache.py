"""check-properties-present keeps each property module's verdict per content
(reading/verdict_cache.py, rules 22 and 31): a warm commit parses nothing, and what the
cache holds never stands for another content, a corrupted file or a CI run."""
from __future__ import annotations

import glob
import os
import subprocess
import sys

from oracle_guard.hooks.check_properties_present import main
from oracle_guard.reading.verdict_cache import Verdict
from oracle_guard.reading.verdict_cache import VerdictCache

HOLLOW = 'def test_parse_never_throws():\n    pass\n'


def cache_files() -> list[str]:
    folder = os.path.join(os.environ['XDG_CACHE_HOME'], 'oracle-guard')
    return sorted(glob.glob(os.path.join(folder, 'properties-*.txt')))


def blob_id(repo, path: str) -> str:  # type: ignore[no-untyped-def]
    return repo.git('rev-parse', f'HEAD:{path}').strip()


def stage_src_change(repo) -> None:  # type: ignore[no-untyped-def]
    repo.write('src/app.py', 'def parse(b):\n    return bytes(b)\n')
    repo.add('src/app.py')


def test_a_commit_keeps_the_verdict_of_the_property_module_under_its_blob_id(guarded):
    stage_src_change(guarded)
    assert guarded.run(main).rc == 0

    [path] = cache_files()
    with open(path, encoding='utf-8') as f:
        lines = f.read().splitlines()
    key = 'g' + blob_id(guarded, 'tests/properties/test_parse.py')
    assert lines == [f'{key}\ttest_parse_never_throws\t']


def test_a_warm_commit_gives_the_same_verdict_and_parses_nothing(guarded):
    stage_src_change(guarded)
    cold = guarded.run(main)
    code = ('import sys; from oracle_guard.hooks.check_properties_present import main; '
            'rc = main([]); print(rc, "ast" in sys.modules, '
            '"oracle_guard.reading.scanner" in sys.modules)')
    env = {**os.environ, 'PYTHONPATH': os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, '-c', code], cwd=guarded.path, env=env,
                         capture_output=True, text=True, check=True).stdout
    assert (cold.rc, cold.out) == (0, '')
    assert out.split() == ['0', 'False', 'False']


def test_a_changed_property_module_is_judged_again(guarded):
    stage_src_change(guarded)
    assert guarded.run(main).rc == 0  # the real test's verdict is cached
    guarded.write('tests/properties/test_parse.py', HOLLOW)
    guarded.add()

    result = guarded.run(main)

    assert result.rc == 1
    assert result.codes == ['OG401', 'OG403']


def test_an_entry_for_another_content_is_not_used(guarded):
    guarded.write('tests/properties/test_parse.py', HOLLOW)
    guarded.commit('hollowed with --no-verify')
    # A verdict saying "real test" for the content the folder held before.
    before = guarded.git('rev-parse', 'HEAD^:tests/properties/test_parse.py').strip()
    cache = VerdictCache.for_this_code()
    cache.put('g' + before, Verdict(['test_parse_never_throws'], []))
    cache.save()
    stage_src_change(guarded)

    result = guarded.run(main)

    assert result.codes == ['OG401', 'OG403']


def test_a_corrupted_cache_file_is_ignored(guarded):
    stage_src_change(guarded)
    assert guarded.run(main).rc == 0
    [path] = cache_files()
    key = 'g' + blob_id(guarded, 'tests/properties/test_parse.py')
    guarded.git('reset', '-q', '--hard')
    guarded.write('tests/properties/test_parse.py', HOLLOW)
    guarded.commit('hollowed with --no-verify')
    hollow_key = 'g' + blob_id(guarded, 'tests/properties/test_parse.py')
    with open(path, 'wb') as f:  # every way a line can be wrong, for the hollow content
        f.write(b'\x00\xff garbage\n' + f'{hollow_key}\ttest_parse_never_throws\n'.encode() +
                f'{hollow_key}\ttest parse!\t\n'.encode() +
                f'{hollow_key}\ttest_parse_never_throws\tx:y\n'.encode() +
                f'{key[:-1]}\ttest_parse_never_throws\t\n'.encode() +
                f'{hollow_key}\ttest_parse_never_throws\t'.encode())  # torn: no newline
    stage_src_change(guarded)

    result = guarded.run(main)

    assert (result.rc, result.codes, result.err) == (1, ['OG401', 'OG403'], ''), result.out
    with open(path, 'rb') as f:
        assert f.read().endswith(f'\t\n{hollow_key}\t\t1:test_parse_never_throws\n'.encode())


def test_a_cache_that_cannot_be_read_or_written_is_no_error(guarded):
    folder = os.path.join(os.environ['XDG_CACHE_HOME'], 'oracle-guard')
    os.makedirs(os.path.dirname(folder), exist_ok=True)
    with open(folder, 'w') as f:  # a file where the folder should be
        f.write('not a folder\n')
    stage_src_change(guarded)

    result = guarded.run(main)

    assert (result.rc, result.out, result.err) == (0, '', '')


def test_ci_neither_reads_nor_writes_the_cache(guarded, monkeypatch):
    monkeypatch.setenv('CI', 'true')
    stage_src_change(guarded)
    assert guarded.run(main).rc == 0
    assert cache_files() == []
    monkeypatch.setenv('ORACLE_GUARD_SCAN_CACHE', '1')  # asked for: on
    assert guarded.run(main).rc == 0
    assert len(cache_files()) == 1


def test_with_the_cache_off_the_modules_come_with_heads_first_answers(guarded, monkeypatch):
    """Rule 22 in CI: the property modules HEAD's folder lists are read by blob id in the
    git process that lists them (no third process), and a module the commit stages is
    still judged by its staged bytes, not by HEAD's."""
    from builders.repos import git_calls

    monkeypatch.setenv('ORACLE_GUARD_SCAN_CACHE', '0')
    guarded.write('tests/properties/test_more.py',
                  'def test_more():\n    assert len("ab") == 2\n')
    guarded.commit('two property modules')
    stage_src_change(guarded)
    calls = git_calls(monkeypatch)

    assert guarded.run(main).rc == 0
    assert calls == ['cat-file', 'diff']
    guarded.write('tests/properties/test_parse.py', HOLLOW)
    guarded.write('tests/properties/test_more.py', 'def test_more():\n    pass\n')
    guarded.add()
    result = guarded.run(main)
    assert sorted(result.codes) == ['OG401', 'OG403', 'OG403'], result.out
    assert cache_files() == []


def test_the_working_tree_is_keyed_by_the_sha256_of_its_bytes(guarded):
    import hashlib

    assert guarded.run(main, '--all-files').rc == 0

    [path] = cache_files()
    with open(os.path.join(guarded.path, 'tests/properties/test_parse.py'), 'rb') as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    with open(path, encoding='utf-8') as f:
        assert f.read().splitlines() == [f's{digest}\ttest_parse_never_throws\t']


def test_a_verdict_that_cannot_be_read_back_is_not_written(tmp_path):
    cache = VerdictCache(str(tmp_path / 'cache.txt'))
    cache.put('g' + 'a' * 40, Verdict(['test a'], []))  # no identity has a space
    cache.put('g' + 'b' * 40, Verdict(['TestX::runTest'], [(3, 'test_y')]))
    cache.save()

    again = VerdictCache(str(tmp_path / 'cache.txt'))

    assert again.known == {'g' + 'b' * 40: Verdict(['TestX::runTest'], [(3, 'test_y')])}


def test_an_unparsable_module_is_judged_every_time(guarded):
    guarded.write('tests/properties/test_broken.py', 'def test_broken(:\n')
    guarded.commit('an unparsable property module')
    stage_src_change(guarded)

    assert guarded.run(main).rc == 0  # the real test in test_parse.py is enough

    [path] = cache_files()
    broken = 'g' + blob_id(guarded, 'tests/properties/test_broken.py')
    with open(path, encoding='utf-8') as f:
        assert broken not in f.read()  # a failed parse (out of memory?) is not a verdict


def test_the_scan_cache_also_starts_a_new_line_after_a_torn_one(tmp_path):
    from oracle_guard.reading.scan_cache import FileScan
    from oracle_guard.reading.scan_cache import ScanCache

    path = tmp_path / 'scans.txt'
    path.write_text('a' * 30)  # a line torn by a run that stopped
    cache = ScanCache(str(path))
    cache.put('b' * 64, FileScan([], [], []))  # a clean content
    cache.save()

    assert ScanCache(str(path)).known == {'b' * 64: '-'}
