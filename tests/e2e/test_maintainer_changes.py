"""Rows 51-53 of docs/rules.md: ordinary maintainer changes next to ``src/`` that the hooks
pass. Each is judged through the hooks (every hook, as ``oracle-guard check`` runs them),
once through the real pre-commit, and its nearest cheat still fails."""
from __future__ import annotations

import json

import pytest

from builders.pre_commit import HookRepo
from builders.pre_commit import pre_commit
from builders.pre_commit import run
from oracle_guard.cli import main as cli
from oracle_guard.hooks.forbid_mixed_oracle_diff import main as mixed

LOCK = 'tests/domain_lock.json'
NEW_GIVEN = '''\
from hypothesis import given, settings, strategies as st

from app import parse


@settings(max_examples=100)
@given(st.binary(max_size=10))
def test_parse_keeps_short_inputs(buf):
    assert parse(buf) == bytes(buf)
'''


def fix_src(repo) -> None:  # type: ignore[no-untyped-def]
    repo.write('src/app.py', 'def parse(b):\n    return bytes(b)\n')


def add_lock_entry(repo, identity: str, entry: dict) -> None:  # type: ignore[no-untyped-def]
    lock = json.loads(repo.read(LOCK))
    lock['properties'][identity] = entry
    repo.write_json(LOCK, lock)


# -- rule 51: a new test with its new lock entry, in the same change as src/ -------------

def test_new_given_test_with_its_new_lock_entry_next_to_a_src_fix_passes(guarded):
    fix_src(guarded)
    guarded.write('tests/test_short.py', NEW_GIVEN)
    add_lock_entry(guarded, 'test_parse_keeps_short_inputs', {'max_examples': 100})
    guarded.add()
    result = guarded.run(cli, 'check')
    assert (result.rc, result.codes) == (0, []), result.out + result.err


def test_existing_lock_entry_changed_next_to_a_src_fix_still_fails(guarded):
    fix_src(guarded)
    add_lock_entry(guarded, 'test_parse_never_throws', {'max_examples': 200})  # even raised
    guarded.add()
    result = guarded.run(mixed)
    assert result.codes == ['OG201']
    assert 'existing lock entries: test_parse_never_throws' in result.out


def test_existing_lock_entry_removed_with_a_new_one_next_to_a_src_fix_fails(guarded):
    fix_src(guarded)
    lock = json.loads(guarded.read(LOCK))
    lock['properties'] = {'test_parse_keeps_short_inputs': {'max_examples': 100}}
    guarded.write_json(LOCK, lock)
    guarded.write('tests/test_short.py', NEW_GIVEN)
    guarded.add()
    assert guarded.run(mixed).codes == ['OG201']


def test_lock_version_changed_next_to_a_src_fix_fails(guarded):
    fix_src(guarded)
    lock = json.loads(guarded.read(LOCK))
    lock['version'] = 2
    guarded.write_json(LOCK, lock)
    guarded.add()
    result = guarded.run(mixed)
    assert result.codes == ['OG201'] and '(the whole lock)' in result.out


# -- rule 52: tests moved into a class, out of one, or to another module ------------------

FLAT = '''\
from app import parse


def test_parse():
    assert parse(b"x") == b"x"


def test_empty():
    assert parse(b"") == b""
'''
GROUPED = '''\
from app import parse


class TestParse:
    def test_parse(self):
        assert parse(b"x") == b"x"

    def test_empty(self):
        assert parse(b"") == b""
'''


@pytest.fixture
def flat_tests(guarded):  # type: ignore[no-untyped-def]
    guarded.write('tests/test_app.py', FLAT)
    guarded.commit('flat tests')
    return guarded


def test_tests_moved_into_a_class_with_bodies_unchanged_next_to_a_src_fix_pass(flat_tests):
    fix_src(flat_tests)
    flat_tests.write('tests/test_app.py', GROUPED)
    flat_tests.add()
    result = flat_tests.run(cli, 'check')
    assert (result.rc, result.codes) == (0, []), result.out


def test_tests_moved_out_of_a_class_next_to_a_src_fix_pass(flat_tests):
    flat_tests.write('tests/test_app.py', GROUPED)
    flat_tests.commit('grouped')
    fix_src(flat_tests)
    flat_tests.write('tests/test_app.py', FLAT)
    flat_tests.add()
    assert flat_tests.run(mixed).rc == 0


def test_tests_moved_into_a_class_of_another_module_next_to_a_src_fix_pass(flat_tests):
    fix_src(flat_tests)
    flat_tests.rm('tests/test_app.py')
    flat_tests.write('tests/test_parse.py', GROUPED)
    flat_tests.add()
    assert flat_tests.run(mixed).rc == 0


def test_test_moved_into_a_class_with_its_body_weakened_next_to_a_src_fix_fails(flat_tests):
    fix_src(flat_tests)
    flat_tests.write('tests/test_app.py', GROUPED.replace(
        'assert parse(b"") == b""', 'assert parse(b"") is not None'))
    flat_tests.add()
    result = flat_tests.run(mixed)
    assert result.codes == ['OG202'] and 'test test_empty disappears' in result.out


# -- rule 53: marker registration in a conftest's pytest_configure ------------------------

MARKERS = '''\
def pytest_configure(config):
    """Our markers."""
    config.addinivalue_line("markers", "slow: takes a while")
    config.addinivalue_line("markers", "network: needs the network")
'''


def test_marker_registration_in_pytest_configure_next_to_a_src_fix_passes(guarded):
    fix_src(guarded)
    guarded.write('tests/conftest.py', MARKERS)
    guarded.add()
    result = guarded.run(cli, 'check')
    assert (result.rc, result.codes) == (0, []), result.out


@pytest.mark.parametrize('extra', [
    '    config.option.deselect = ["tests/test_app.py::test_parse"]\n',
    '    config.addinivalue_line("filterwarnings", "ignore")\n',
    '    config.addinivalue_line("markers", compute())\n',
    '    import os; os._exit(0)\n',
])
def test_pytest_configure_doing_more_than_register_markers_next_to_a_src_fix_fails(
        guarded, extra):
    fix_src(guarded)
    guarded.write('tests/conftest.py', MARKERS + extra)
    guarded.add()
    result = guarded.run(mixed)
    assert result.codes == ['OG201'] and 'conftest hooks' in result.out


def test_the_three_maintainer_changes_commit_through_real_pre_commit(
        flat_tests, hook_repo: HookRepo):
    repo = flat_tests
    repo.write('.pre-commit-config.yaml', hook_repo.config())
    repo.commit('the hooks')
    env = hook_repo.env()
    assert pre_commit('install', cwd=repo.path, env=env).rc == 0
    fix_src(repo)
    repo.write('tests/test_app.py', GROUPED)
    repo.write('tests/conftest.py', MARKERS)
    repo.write('tests/test_short.py', NEW_GIVEN)
    add_lock_entry(repo, 'test_parse_keeps_short_inputs', {'max_examples': 100})
    repo.add()
    done = run(('git', 'commit', '-qm', 'fix with grouped tests, markers and a new property'),
               repo.path, env)
    assert done.rc == 0, done.out
