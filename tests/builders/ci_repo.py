"""A guarded repository with a real bug to hide, for the tests of ``oracle-guard ci``.

``main`` holds a small package (``src/calc``) and tests that pass; a pull request
branch ``pr`` then breaks ``add`` (a real bug the tests catch) and applies one cheat.
Each test copies a template built once per session, so a scenario costs two pytest runs:
plain ``python -m pytest`` (the cheat must turn it green) and ``oracle-guard ci``.
"""
from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass

# The bug: one sum is off by one. Only test_add (2 + 3) catches it.
BUGGY_ADD = '''\
def add(a, b):
    total = a + b
    return total + 1 if total == 5 else total


def mul(a, b):
    return a * b
'''
BASE_FILES = {
    'pyproject.toml': '''\
        [project]
        name = "calc"
        version = "0.1"

        [tool.pytest.ini_options]
        pythonpath = ["src"]

        [tool.oracle-guard]
        src = ["src/"]
        mutant-budget = 0
        ''',
    'src/calc/__init__.py': 'def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n',
    'tests/test_calc.py': '''\
        import unittest

        import pytest

        from calc import add, mul


        def test_add():
            assert add(2, 3) == 5


        @pytest.mark.parametrize('a', [1, 2])
        def test_mul(a):
            assert mul(a, 1) == a


        class TestMore:
            def test_zero(self):
                assert add(0, 0) == 0


        class AddCase(unittest.TestCase):
            def test_add_unit(self):
                self.assertEqual(add(1, 1), 2)
        ''',
    'tests/properties/test_add_props.py': '''\
        from calc import add


        def test_add_commutes():
            for a in range(5):
                for b in range(5):
                    assert add(a, b) == add(b, a)
        ''',
    'tests/freeze_ledger.yaml': 'budget: 1\nfreezes: []\n',
    '.pre-commit-config.yaml': '''\
        repos:
          - repo: local
            hooks:
              - id: forbid-mixed-oracle-diff
                name: forbid-mixed-oracle-diff
                entry: oracle-guard-forbid-mixed-oracle-diff
                language: system
                pass_filenames: false
                always_run: true
        ''',
}
GIT_IDENTITY = ('-c', 'user.name=Test', '-c', 'user.email=test@example.invalid',
                '-c', 'commit.gpgsign=false', '-c', 'core.autocrlf=false')
# The environment of every run: no record folder or pytest options from an outer run.
DROPPED = ('ORACLE_GUARD_RECORD', 'PYTHONDONTWRITEBYTECODE', 'PYTEST_ADDOPTS', 'PYTEST_XDIST_WORKER',
           'PYTEST_XDIST_WORKER_COUNT', 'PYTEST_CURRENT_TEST', 'GITHUB_STEP_SUMMARY',
           'PYTEST_DISABLE_PLUGIN_AUTOLOAD', 'COV_CORE_SOURCE', 'GITHUB_EVENT_PATH',
           'ORACLE_GUARD_GATE', 'CI')
# The suite needs no Hypothesis: its pytest plugin would only add start-up time.
PYCACHE = os.path.join(tempfile.gettempdir(), 'oracle-guard-test-pycache')
PYTEST = (sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider',
          '-p', 'no:hypothesispytest')
# The reference run doubles what a gate run costs. tests/gate/conftest.py turns it off
# except in the tests of the mechanisms that need it (marked ``reference_run``); outside
# tests/gate it stays on.
REFERENCE_RUN = True


def git(path: str, *args: str) -> str:
    proc = subprocess.run(('git', *GIT_IDENTITY, *args), cwd=path, capture_output=True,
                          text=True)
    if proc.returncode:
        raise AssertionError(f'git {args} failed: {proc.stderr}')
    return proc.stdout


def write(path: str, files: Mapping[str, str | None]) -> None:
    """Write (or, for None, delete) files under ``path``."""
    for rel, content in files.items():
        full = os.path.join(path, rel)
        if content is None:
            os.remove(full)
            continue
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, 'w', encoding='utf-8') as f:
            f.write(textwrap.dedent(content))


def build_template(path: str, extra: Mapping[str, str] | None = None) -> str:
    os.makedirs(path)
    git(path, 'init', '-q', '-b', 'main')
    write(path, {**BASE_FILES, **(extra or {})})
    git(path, 'add', '-A')
    git(path, 'commit', '-q', '-m', 'base')
    return path


@dataclass
class Run:
    rc: int
    out: str

    def lines(self, code: str) -> list[str]:
        return [line for line in self.out.splitlines() if f': {code} ' in line]

    @property
    def summary(self) -> str:
        return self.out.rstrip().splitlines()[-1]


class CiRepo:
    def __init__(self, path: str) -> None:
        self.path = path

    def pull_request(self, files: Mapping[str, str | None], *, bug: bool = True) -> None:
        """Commit a pull request on branch ``pr``: the bug (unless ``bug=False``) and
        the files given."""
        git(self.path, 'checkout', '-q', '-b', 'pr')
        changes = dict(files)
        if bug:
            changes.setdefault('src/calc/__init__.py', BUGGY_ADD)
        write(self.path, changes)
        git(self.path, 'add', '-A')
        git(self.path, 'commit', '-q', '-m', 'pull request')

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in DROPPED}
        # Byte code cached outside the repository: each run starts like an installed copy.
        env['PYTHONPYCACHEPREFIX'] = PYCACHE
        env.update(extra or {})
        return env

    def start(self, args: Sequence[str], env: Mapping[str, str] | None = None
              ) -> subprocess.Popen[str]:
        return subprocess.Popen(list(args), cwd=self.path, env=self.env(env), text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

    @staticmethod
    def finish(proc: subprocess.Popen[str]) -> Run:
        out, _ = proc.communicate(timeout=240)
        return Run(proc.returncode, out)

    def ci_args(self, test_command: Sequence[str] = PYTEST, *options: str) -> list[str]:
        if not REFERENCE_RUN and '--no-reference-run' not in options:
            options = ('--no-reference-run', *options)
        return [sys.executable, '-m', 'oracle_guard.cli', 'ci', '--base', 'main', *options,
                '--', *test_command]

    def both(self, test_command: Sequence[str] = PYTEST, *options: str,
             env: Mapping[str, str] | None = None) -> tuple[Run, Run]:
        """(plain test command, oracle-guard ci around it), run side by side."""
        plain = self.start(test_command, env)
        ci = self.start(self.ci_args(test_command, *options), env)
        return self.finish(plain), self.finish(ci)

    def ci(self, test_command: Sequence[str] = PYTEST, *options: str,
           env: Mapping[str, str] | None = None) -> Run:
        return self.finish(self.start(self.ci_args(test_command, *options), env))


def shared_template(factory: object, name: str, build: Callable[[str], object]) -> str:
    """The template repository ``name``, built by ``build(path)`` once for the whole run:
    pytest-xdist's workers share one copy (the first to ask builds it, under a lock, in
    the folder all the workers' temporary folders sit in); each test copies it."""
    base = factory.getbasetemp()  # type: ignore[attr-defined]
    if os.environ.get('PYTEST_XDIST_WORKER'):
        base = base.parent
    folder = os.path.join(str(base), 'templates')
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name, 'repo')
    done = os.path.join(folder, f'{name}.done')
    with open(os.path.join(folder, f'{name}.lock'), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.exists(done):
            shutil.rmtree(os.path.dirname(path), ignore_errors=True)
            os.makedirs(os.path.dirname(path))
            build(path)
            with open(done, 'w'):
                pass
    return path


def copy_template(template: str, path: str) -> CiRepo:
    shutil.copytree(template, path, symlinks=True)
    return CiRepo(path)


def adopted_with(path: str, files: Mapping[str, str | None]) -> CiRepo:
    """A fresh copy of the template at ``path`` whose main holds ``files`` before adoption,
    then the baseline ``oracle-guard baseline`` writes, in a commit of its own."""
    calc = copy_template(build_template(f'{path}-template'), path)
    write(calc.path, files)
    git(calc.path, 'add', '-A')
    git(calc.path, 'commit', '-q', '-m', 'legacy')
    subprocess.run([sys.executable, '-m', 'oracle_guard.cli', 'baseline'], cwd=calc.path,
                   check=True, capture_output=True, env=calc.env())
    git(calc.path, 'add', '-A')
    git(calc.path, 'commit', '-q', '-m', 'oracle-guard baseline')
    return calc


def mutants_off(path: str) -> None:
    """No mutant runs in the gate's reference run (``mutant-budget = 0``): they would
    double what each scenario that changes src costs; the tests of the mutants turn them
    on (tests/gate/test_oracle_reach.py)."""
    full = os.path.join(path, 'pyproject.toml')
    with open(full, encoding='utf-8') as f:
        text = f.read()
    with open(full, 'w', encoding='utf-8') as f:
        f.write(text.replace('[tool.oracle-guard]\n',
                             '[tool.oracle-guard]\nmutant-budget = 0\n', 1))


def adopt(path: str, pyproject: str, project: Mapping[str, str],
          after: Sequence[Mapping[str, str | None]] = (),
          init_args: Sequence[str] = ()) -> CiRepo:
    """A new repository at ``path``: ``pyproject`` and ``project`` committed on main, the
    guard adopted with the README's commands (``oracle-guard init``, its files committed
    on their own, ``init_args`` added to its command line), then each of ``after``
    committed on main (the last one is the bug)."""
    repo = CiRepo(path)
    subprocess.run(('git', 'init', '-q', '-b', 'main', path), check=True)
    write(path, {'pyproject.toml': pyproject, **project})
    git(path, 'add', '-A')
    git(path, 'commit', '-q', '-m', 'project')
    init = subprocess.run((sys.executable, '-m', 'oracle_guard.cli', 'init', '--hook-repo',
                           path, '--rev', 'HEAD', *init_args), cwd=path, env=repo.env(),
                          capture_output=True, text=True)
    assert init.returncode == 0, init.stdout + init.stderr
    mutants_off(path)
    git(path, 'add', '-A')
    git(path, 'commit', '-q', '-m', 'Adopt oracle-guard')
    for n, files in enumerate(after):
        write(path, files)
        git(path, 'add', '-A')
        git(path, 'commit', '-q', '-m', f'main {n}')
    return repo
