"""The staged diff asked of git once per commit for the hooks after the first
(repo/staged_cache.py): kept for one index content and one HEAD, so a changed index,
another HEAD, a torn file or CI never reuse it. Real repositories, the real git."""
from __future__ import annotations

import glob
import os

from builders.repos import git_calls

from oracle_guard.hooks.check_fixture_manifest import main as fixture_manifest
from oracle_guard.hooks.check_generator_lock import main as generator_lock
from oracle_guard.hooks.check_named_freezes import main as named_freezes
from oracle_guard.hooks.forbid_mixed_oracle_diff import main as forbid_mixed

CLEAN = 'def test_other():\n    assert 1\n'
PATH = 'tests/test_app.py'
LEDGER = 'tests/freeze_ledger.yaml'


def kept_files() -> list[str]:
    return glob.glob(os.path.join(os.environ['XDG_CACHE_HOME'], 'oracle-guard', 'staged-*'))


def silences(guarded):  # type: ignore[no-untyped-def]
    return guarded.run(named_freezes, PATH)


def test_the_hooks_after_the_first_ask_git_for_no_diff(guarded, monkeypatch):
    guarded.write(PATH, CLEAN)
    guarded.add()
    assert guarded.run(generator_lock).rc == 0  # learns its import closure (one time)
    calls = git_calls(monkeypatch)

    assert guarded.run(fixture_manifest).rc == 0
    assert calls == ['cat-file', 'diff']
    calls.clear()
    assert guarded.run(fixture_manifest).rc == 0
    assert silences(guarded).rc == 0
    assert guarded.run(generator_lock).rc == 0
    assert calls == ['cat-file', 'cat-file', 'cat-file']  # HEAD's first answers each


def mixed(guarded):  # type: ignore[no-untyped-def]
    """rule 11: src/ and the ledger in one change (forbid-mixed-oracle-diff, OG201)."""
    return guarded.run(forbid_mixed)


def test_a_file_staged_again_is_judged_as_staged_now(guarded):
    guarded.write('src/app.py', 'def parse(b):\n    return bytes(b)\n')
    guarded.add()
    assert mixed(guarded).rc == 0  # src alone; kept
    # the ledger staged too: the same entries, another content (and checksum)
    guarded.write(LEDGER, guarded.read(LEDGER) + b'\n')
    guarded.add()

    result = mixed(guarded)

    assert result.rc == 1, result.out
    assert result.codes == ['OG201'], result.out


def test_a_diff_kept_for_one_head_is_not_used_with_another(guarded):
    guarded.write('src/app.py', 'def parse(b):\n    return bytes(b)\n')
    guarded.write(LEDGER, guarded.read(LEDGER) + b'\n')
    guarded.commit('mixed, committed without the hooks')
    guarded.write('notes.txt', 'x\n')
    guarded.add()
    assert mixed(guarded).rc == 0  # only notes.txt is staged against this HEAD; kept
    # HEAD moves back and the index keeps its content: the mixed change is staged again
    guarded.git('reset', '-q', '--soft', 'HEAD~1')

    result = mixed(guarded)

    assert result.codes == ['OG201'], result.out
    assert guarded.run(generator_lock).rc == 0


def test_a_torn_cache_file_is_ignored(guarded, monkeypatch):
    guarded.write('src/app.py', 'def parse(b):\n    return bytes(b)\n')
    guarded.write(LEDGER, guarded.read(LEDGER) + b'\n')
    guarded.add()
    assert mixed(guarded).codes == ['OG201']
    (kept,) = kept_files()
    with open(kept, 'r+b') as f:
        data = f.read()
        f.seek(0)
        f.truncate()
        f.write(data[:-40])  # a run that stopped while writing: the ledger's line is lost
    calls = git_calls(monkeypatch)

    assert mixed(guarded).codes == ['OG201']
    assert 'diff' in calls  # asked of git again


def test_in_ci_nothing_is_kept(guarded, monkeypatch):
    monkeypatch.setenv('CI', 'true')
    guarded.write(PATH, CLEAN)
    guarded.add()
    calls = git_calls(monkeypatch)

    assert guarded.run(fixture_manifest).rc == 0
    assert guarded.run(fixture_manifest).rc == 0
    assert calls.count('diff') == 2
    assert kept_files() == []


def test_a_kept_diff_that_is_not_git_output_is_asked_again(guarded, monkeypatch):
    guarded.write('src/app.py', 'def parse(b):\n    return bytes(b)\n')
    guarded.write(LEDGER, guarded.read(LEDGER) + b'\n')
    guarded.add()
    assert mixed(guarded).codes == ['OG201']
    (kept,) = kept_files()
    with open(kept, 'rb') as f:
        first, _, raw = f.read().partition(b'\n')
    with open(kept, 'wb') as f:  # the right key and length, bytes git never wrote
        f.write(first + b'\n' + b':x' * (len(raw) // 2) + b'y' * (len(raw) % 2))
    calls = git_calls(monkeypatch)

    result = mixed(guarded)

    assert result.codes == ['OG201'], result.out + result.err
    assert 'diff' in calls
