"""What a one-file commit costs before any hook's own work: the floor, in CPU time.

    python benchmarks/commit_floor.py --venv DIR [--runs 31]

In the synthetic repositories of ``bench.py`` (2 000 and 50 000 tracked files, one test
file staged), with the interpreter of a clean virtual environment (``bench.CleanVenv``),
median CPU time (user + system, git included) of:

* ``python -c pass`` and ``python -c "import re"`` (what pip's console script imported
  before the hook's own module, until the hooks' entries became plain scripts);
* that, with oracle-guard's git layer imported, then with HEAD's first ``git cat-file
  --batch``, then with the staged diff (``git diff --cached``): the least a hook that
  starts git can cost, and what the first hook of a commit pays;
* the git processes alone: the staged diff (git loads the whole index), ``git version``,
  and check-generator-lock's grep of the test roots for an importer (rule 23 through
  helpers, every cache off) as it was (the index, git's default threads) and as it is
  (HEAD's tree, one thread).

Each ratio is to ``python -c pass``; the last column is the 50 000-file figure over the
2 000-file one, each as a ratio to its own ``python -c pass``. The load average is
printed. No target is asserted: the numbers are printed.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  -- the same clean venv and repositories
from commit_cold import cpu_ms  # noqa: E402  -- one child's CPU time

STEPS = '''\
import sys
from oracle_guard.repo.gitrepo import run_git
step = int(sys.argv[1])
if step >= 1:
    run_git(('cat-file', '--batch'), '.', input=b'HEAD^{commit}\\nHEAD:pyproject.toml\\n')
if step >= 2:
    run_git(('diff', '--raw', '--no-abbrev', '-z', '-M', '--no-ext-diff', '--no-textconv',
             '--ignore-submodules=none', '--cached', 'HEAD', '--'), '.')
'''
DIFF = ['git', 'diff', '--raw', '--no-abbrev', '-z', '-M', '--no-ext-diff', '--no-textconv',
        '--ignore-submodules=none', '--cached', 'HEAD', '--']
GREP = ['git', '--no-literal-pathspecs', 'grep', '-l', '-z', '-w', '-F', '-I', '--full-name',
        '--no-color']
TESTS = ':(glob)tests/**/*.py'


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--venv', required=True)
    parser.add_argument('--runs', type=int, default=31)
    args = parser.parse_args(argv)
    venv = bench.CleanVenv.ensure(args.venv)
    tmp = tempfile.mkdtemp(prefix='og-floor-')
    try:
        steps = os.path.join(tmp, 'steps.py')
        with open(steps, 'w') as f:
            f.write(STEPS)
        py = venv.python
        medians: dict[int, dict[str, float]] = {}
        for size in (2000, 50000):
            root = os.path.join(tmp, f'repo{size}')
            bench.build_repo(root, size)
            head = bench.git('rev-parse', 'HEAD', cwd=root).decode().strip()
            rows = {
                'python -c pass': [py, '-c', 'pass'],
                'python -c "import re"': [py, '-c', 'import re'],
                '+ oracle-guard\'s git layer imported': [py, steps, '0'],
                '+ HEAD\'s first `git cat-file --batch`': [py, steps, '1'],
                '+ the staged diff (the first hook\'s floor)': [py, steps, '2'],
                'git version (a git process)': ['git', 'version'],
                'the staged diff alone': DIFF,
                'grep for an importer, as it was (index, default threads)':
                    [*GREP, '--cached', '-e', 'test_mod_0', '--', TESTS],
                'grep for an importer, as it is (HEAD\'s tree, one thread)':
                    [*GREP, '--threads=1', '-e', 'test_mod_0', head, '--', TESTS],
            }
            samples: dict[str, list[float]] = {name: [] for name in rows}
            for _ in range(args.runs):  # interleaved: load hits every row alike
                for name, command in rows.items():
                    samples[name].append(cpu_ms(command, root, venv.env))
            medians[size] = {name: statistics.median(v) for name, v in samples.items()}
        base = {size: medians[size]['python -c pass'] for size in medians}
        print(f'interpreter: {py}; median of {args.runs} interleaved runs, CPU ms '
              '(× python -c pass)\n')
        print('| what | 2 000 files | 50 000 files | 50k / 2k |')
        print('|---|---|---|---|')
        for name in medians[2000]:
            a, b = medians[2000][name], medians[50000][name]
            ra, rb = a / base[2000], b / base[50000]
            print(f'| {name} | {a:.2f} ({ra:.2f}×) | {b:.2f} ({rb:.2f}×) | {rb / ra:.2f} |')
        print(f'\nload average at the end {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs')
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
