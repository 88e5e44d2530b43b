"""`oracle-guard lock` locks every Hypothesis test the plugin judges, wherever the module
defines it: inside ``try: import hypothesis / except ImportError: ... / else:``, under a
module-level ``if``, as a method of a class there. What it writes is what the plugin runs
against, and the plugin then passes those tests.
"""
from __future__ import annotations

import json
import subprocess
import sys

from oracle_guard.commands.lock import main

LOCK = 'tests/domain_lock.json'
GUARDED_IMPORT = '''\
try:
    import hypothesis
except ImportError:
    hypothesis = None
else:
    from hypothesis import given, settings, strategies as st

    @settings(max_examples=30)
    @given(st.integers())
    def test_roundtrip(n):
        assert int(str(n)) == n

    class TestText:
        @given(st.text().filter(bool))
        def test_nonempty(self, s):
            assert s

HAVE_BYTES = True
if HAVE_BYTES:
    from hypothesis import given, strategies as st

    @given(st.binary(max_size=8))
    def test_bytes(b):
        assert len(b) <= 8
'''
IDENTITIES = ['TestText::test_nonempty', 'test_bytes', 'test_roundtrip']


def pytest(repo):  # type: ignore[no-untyped-def]
    return subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider',
                           'tests/properties/test_guarded.py'], cwd=repo.path,
                          capture_output=True, text=True)


def test_lock_writes_an_entry_for_each_property_in_an_if_or_try_block(guarded) -> None:
    guarded.write('tests/properties/test_guarded.py', GUARDED_IMPORT)
    guarded.commit('properties behind a guarded import')
    before = pytest(guarded)
    assert before.returncode == 1, before.stdout
    for identity in IDENTITIES:
        assert f'unlocked property: {identity} has no entry' in before.stdout, before.stdout
    result = guarded.run(main)
    assert result.rc == 0, result.out + result.err
    assert 'up to date' not in result.out, result.out
    entries = json.loads(guarded.read(LOCK))['properties']
    assert sorted(set(entries) - {'test_parse_never_throws'}) == IDENTITIES, entries
    assert entries['test_roundtrip']['max_examples'] == 30
    assert entries['TestText::test_nonempty']['filters'] == 1
    assert entries['test_bytes']['max_size'] == 8
    after = pytest(guarded)
    assert after.returncode == 0, after.stdout
    assert '3 passed' in after.stdout, after.stdout


def test_a_property_in_a_try_block_narrowed_after_locking_fails(guarded) -> None:
    guarded.write('tests/properties/test_guarded.py', GUARDED_IMPORT)
    assert guarded.run(main).rc == 0
    guarded.commit('locked')
    guarded.write('tests/properties/test_guarded.py',
                  GUARDED_IMPORT.replace('max_examples=30', 'max_examples=3'))
    ran = pytest(guarded)
    assert ran.returncode == 1, ran.stdout
    assert ('tests/properties/test_guarded.py::test_roundtrip: tests less than its lock '
            '(tests/domain_lock.json): max_examples: locked at 30, live value 3') in ran.stdout
    assert '1 failed, 2 passed' in ran.stdout, ran.stdout
