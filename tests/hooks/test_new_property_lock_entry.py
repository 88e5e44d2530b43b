"""check-generator-lock and forbid-mixed-oracle-diff on a new ``@given`` unit test outside
the properties folder, added in the same change as ``src/`` (row 51): the unlocked test's
hint says that its new entry may come in this change and names the command that adds it
alone; with that entry the change passes; changing an existing entry with ``src/`` still
fails."""
from __future__ import annotations

import json

from builders.repos import Repo
from oracle_guard.cli import main as cli
from oracle_guard.commands.lock import main as lock

UNIT_TESTS = '''\
from hypothesis import given, strategies as st

from app import parse


def test_parse():
    assert parse(b"x") == b"x"


@given(st.binary(max_size=10))
def test_parse_identity(buf):
    assert parse(buf) == buf
'''
SRC = 'def parse(b):\n    return bytes(b)\n'


def new_unit_property(guarded: Repo) -> Repo:
    guarded.write('tests/test_app.py', UNIT_TESTS)
    guarded.write('src/app.py', SRC)
    guarded.add()
    return guarded


def test_a_new_unlocked_unit_property_is_told_its_entry_may_come_with_it(
        guarded: Repo) -> None:
    result = new_unit_property(guarded).run(cli, 'check')
    assert result.rc == 1
    assert result.codes == ['OG601']
    assert 'tests/test_app.py:11:1: OG601 unlocked property: test_parse_identity has no ' \
        'entry in tests/domain_lock.json, and the test is new in this change' in result.out
    assert 'run `oracle-guard lock test_parse_identity`, which adds this entry alone' \
        in result.out
    assert 'commit the lock in a change of its own' not in result.out


def test_the_new_entry_alone_passes_with_src(guarded: Repo) -> None:
    new_unit_property(guarded)
    wrote = guarded.run(lock, 'test_parse_identity')
    assert wrote.rc == 0, wrote.out + wrote.err
    assert 'it only adds entries' in wrote.out
    entries = json.loads(guarded.read('tests/domain_lock.json'))['properties']
    assert entries['test_parse_never_throws'] == {'max_examples': 100}
    assert entries['test_parse_identity']['max_size'] == 10
    guarded.add()
    result = guarded.run(cli, 'check')
    assert result.rc == 0, result.out


def test_an_existing_entry_changed_with_src_still_fails(guarded: Repo) -> None:
    new_unit_property(guarded)
    wrote = guarded.run(lock)
    assert 'commit it on its own: it changes entries that were there' in wrote.out
    guarded.add()
    result = guarded.run(cli, 'check')
    assert result.rc == 1
    assert 'OG201 existing lock entries: test_parse_never_throws changed in the same change ' \
        'as production code: src/app.py' in result.out


def test_a_property_unlocked_before_the_change_keeps_the_change_of_its_own(
        guarded: Repo) -> None:
    guarded.write('tests/test_app.py', UNIT_TESTS)
    guarded.commit('a unit property committed without the hooks')
    guarded.write('src/app.py', SRC)
    guarded.write('tests/test_app.py', UNIT_TESTS + '\n\ndef test_empty():\n'
                  '    assert parse(b"") == b""\n')
    guarded.add()
    result = guarded.run(cli, 'check')
    assert result.codes == ['OG601']
    assert 'commit the lock in a change of its own' in result.out
    assert 'new in this change' not in result.out
