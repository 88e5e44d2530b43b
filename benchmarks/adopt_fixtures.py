"""What adopting a project with thousands of existing fixture files costs.

    python benchmarks/adopt_fixtures.py [--files 5000] [--runs 3]

Builds a repository with a small package, a test module and ``--files`` data files in
``tests/data/`` (spread over 50 folders, 40-200 bytes each), committed. Then, from a copy
of it each run:

* ``init``: ``oracle-guard init`` (it names ``tests/data/`` in ``fixtures`` and writes a
  manifest row per file, reading the index blobs with ``git cat-file --batch``);
* ``adoption commit``: ``check-fixture-manifest`` on what init wrote, staged (the hook of
  the adoption commit judges every new row: one ``git cat-file --batch`` per 200 blobs);
* ``check --all-files``: ``oracle-guard check --all-files`` on the adopted repository;
* ``one process per file``: the hashing init did before (``git diff --quiet``, ``git
  ls-files --error-unmatch`` and ``git cat-file blob`` for each file), for comparison.

Printed: the median wall and CPU seconds (git and every child included) of each and how
many rows the manifest holds. Nothing is asserted.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

GIT = ('git', '-c', 'user.name=Bench', '-c', 'user.email=bench@example.invalid',
       '-c', 'commit.gpgsign=false')
TEST = ('import json\nfrom pathlib import Path\n\n\ndef test_data():\n'
        '    assert (Path(__file__).parent / "data").is_dir()\n')


def build(path: str, files: int) -> None:
    os.makedirs(os.path.join(path, 'src', 'pkg'))
    os.makedirs(os.path.join(path, 'tests'))
    subprocess.run((*GIT, 'init', '-q', path), check=True)
    with open(os.path.join(path, 'pyproject.toml'), 'w') as f:
        f.write('[project]\nname = "pkg"\nversion = "1"\n')
    with open(os.path.join(path, 'src', 'pkg', '__init__.py'), 'w') as f:
        f.write('def add(a, b):\n    return a + b\n')
    with open(os.path.join(path, 'tests', 'test_data.py'), 'w') as f:
        f.write(TEST)
    for n in range(files):
        folder = os.path.join(path, 'tests', 'data', f'group_{n % 50:02}')
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f'case_{n:05}.json'), 'w') as f:
            f.write(json.dumps({'case': n, 'input': 'x' * (n % 160)}) + '\n')
    subprocess.run((*GIT, 'add', '-A'), cwd=path, check=True)
    subprocess.run((*GIT, 'commit', '-q', '-m', 'project'), cwd=path, check=True)


def timed(command: list[str], cwd: str) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


PER_FILE = '''
import sys
from oracle_guard.commands.fixtures import Workspace
from oracle_guard.config import load_config
from oracle_guard.repo.gitrepo import git, split_z
ws = Workspace(load_config('.'))
for path in split_z(git('ls-files', '-z', '--', 'tests/data/', cwd='.')):
    ws.hash(path)
'''


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--files', type=int, default=5000)
    parser.add_argument('--runs', type=int, default=3)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix='og-adopt-fixtures-')
    try:
        template = os.path.join(work, 'template')
        build(template, args.files)
        figures: dict[str, list[tuple[float, float]]] = {}
        rows = 0
        for run in range(args.runs):
            repo = os.path.join(work, f'run{run}')
            shutil.copytree(template, repo, symlinks=True)
            cli = [sys.executable, '-m', 'oracle_guard.cli']
            figures.setdefault('init', []).append(
                timed([*cli, 'init', '--hook-repo', repo, '--rev', 'HEAD'], repo))
            rows = len(json.load(open(os.path.join(repo, 'tests/fixtures/manifest.json')))
                       ['fixtures'])
            subprocess.run((*GIT, 'add', '-A'), cwd=repo, check=True)
            figures.setdefault('adoption commit', []).append(
                timed([*cli, 'check', '--hook', 'check-fixture-manifest'], repo))
            subprocess.run((*GIT, 'commit', '-q', '-m', 'Adopt oracle-guard'), cwd=repo,
                           check=True)
            figures.setdefault('check --all-files', []).append(
                timed([*cli, 'check', '--all-files'], repo))
            figures.setdefault('one process per file', []).append(
                timed([sys.executable, '-c', PER_FILE], repo))
            shutil.rmtree(repo)
        print(f'{args.files} data files, {rows} manifest rows, median of {args.runs} runs')
        for name, values in figures.items():
            wall = statistics.median(v[0] for v in values)
            cpu = statistics.median(v[1] for v in values)
            print(f'{name:24} wall {wall:6.2f} s   cpu {cpu:6.2f} s')
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
