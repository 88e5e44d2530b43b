"""Hypothesis state machines are properties (section 8 of docs/adoption.md; rules 22-24):
``oracle-guard lock`` locks them by their settings and what their rules draw, the hooks
judge them, the plugin runs them without stopping the session, and when the plugin does
stop a session the gate names the guard's reason, never an early exit of the code."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from builders.repos import Repo
from oracle_guard.cli import main as cli
from oracle_guard.commands.ci import main as ci
from oracle_guard.commands.lock import main as lock
from oracle_guard.hooks.check_generator_lock import main as generator_lock

MACHINE = '''\
from hypothesis import settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule


class Counter(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.total = 0

    @rule(n=st.integers(min_value=0, max_value=9))
    def add(self, n):
        self.total += n

    @invariant()
    def never_negative(self):
        assert self.total >= 0


TestCounter = Counter.TestCase
TestCounter.settings = settings(max_examples=20, stateful_step_count=5, deadline=None)


@settings(max_examples=15, deadline=None)
class Stack(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.items = []

    @rule(x=st.text(max_size=4))
    def push(self, x):
        self.items.append(x)
        assert self.items[-1] == x


class TestStack(Stack.TestCase):
    pass
'''
LOCK = 'tests/domain_lock.json'


def project(repo: Repo) -> Repo:
    repo.write('pyproject.toml', '[project]\nname = "app"\nversion = "1"\n\n'
               '[tool.oracle-guard]\nsrc = ["src/"]\nproperties = ["tests/test_stateful.py"]\n')
    repo.write('src/app.py', 'def add(a, b):\n    return a + b\n')
    repo.write('tests/test_stateful.py', MACHINE)
    repo.write('tests/freeze_ledger.yaml', 'budget: 0\nfreezes: []\n')
    repo.write_json(LOCK, {'version': 1, 'properties': {}})
    repo.write('.pre-commit-config.yaml', 'repos: []\n')
    return repo


def pytest_run(repo: Repo, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:randomly',
                           '-p', 'no:cacheprovider', *args], cwd=repo.path, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def test_lock_locks_state_machines_by_their_settings_and_rules(repo: Repo) -> None:
    project(repo)
    assert repo.run(lock).rc == 0
    entries = json.loads(repo.read(LOCK))['properties']
    assert entries['TestCounter::runTest'] == {
        'deadline_ms': None, 'max_examples': 20, 'max_value': 9, 'min_value': 0}
    assert entries['TestStack::runTest'] == {'deadline_ms': None, 'max_examples': 15,
                                             'max_size': 4}


def test_unlocked_state_machine_fails_the_generator_lock(repo: Repo) -> None:
    project(repo)
    repo.commit('machines, no entries')
    result = repo.run(generator_lock, '--all-files')
    assert result.rc == 1 and result.codes.count('OG601') == 2, result.out


def test_state_machine_settings_or_rule_shrunk_below_its_lock_fails(repo: Repo) -> None:
    project(repo)
    repo.run(lock)
    repo.commit('locked')
    repo.write('tests/test_stateful.py', MACHINE.replace('max_value=9', 'max_value=1')
               .replace('max_examples=15', 'max_examples=2'))
    repo.add()
    result = repo.run(generator_lock)
    assert result.codes.count('OG602') == 2, result.out  # (and OG611 against the base)
    assert 'max_value: locked at 9, live value 1' in result.out
    assert 'max_examples: locked at 15, live value 2' in result.out


def test_locked_state_machines_run_under_the_plugin_and_count_as_property_tests(
        repo: Repo) -> None:
    project(repo)
    repo.run(lock)
    repo.commit('locked')
    ran = pytest_run(repo)
    assert ran.returncode == 0 and '2 passed' in ran.stdout, ran.stdout
    checked = repo.run(cli, 'check', '--all-files')
    assert checked.rc == 0, checked.out  # no OG401: the machines are real property tests


def test_plugin_fails_a_state_machine_whose_live_settings_are_below_its_lock(repo: Repo) -> None:
    project(repo)
    repo.run(lock)
    # Settings changed where no static reader looks: an environment variable.
    repo.write('tests/test_stateful.py', MACHINE.replace(
        'max_examples=20,', 'max_examples=int(__import__("os").environ.get("N", 20)),'))
    env_run = subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:randomly'],
                             cwd=repo.path, text=True, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, env={**os.environ, 'N': '3'})
    assert env_run.returncode != 0
    assert 'TestCounter::runTest: tests less than its lock' in env_run.stdout
    assert 'max_examples: locked at 20, live value 3' in env_run.stdout


def test_the_gate_names_unlocked_machines_under_xdist_once_not_an_early_exit(repo: Repo) -> None:
    project(repo)
    repo.commit('machines without lock entries')
    base = repo.git('rev-parse', 'HEAD').strip()
    repo.write('src/app.py', 'def add(a, b):\n    return b + a\n')
    repo.commit('a fix')
    result = repo.run(ci, '--base', base, '--', sys.executable, '-m', 'pytest', '-n', '2',
                      '-p', 'no:randomly')
    assert result.rc == 1
    # each machine's test fails, named once (OG711): no stop, no early exit, no canary
    assert sorted(result.codes) == ['OG711', 'OG711'], result.out
    assert 'unlocked property: TestCounter::runTest' in result.out
