"""check-generator-lock's one-file commit with nothing kept yet, in CPU time.

    python benchmarks/commit_cold.py --venv DIR [--runs 9]

``bench.py`` measures each hook with the per-user caches as earlier runs left them, as
the first hook of a commit, and with every cache off. This measures what it cannot: the
very first run in a repository on a developer's machine, when the import closure of the
test roots is built (one ``git ls-tree``, every test module read once by blob id), in the
synthetic repositories of ``bench.py`` (2 000 and 50 000 files), each run with an empty
cache folder; beside it the same hook with the closure kept but the staged diff not
(the first hook of a later commit) and with every cache off. Median of ``--runs``; the
load average is printed.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  -- the same clean venv and repositories


def cpu_ms(argv: list[str], cwd: str, env: dict[str, str]) -> float:
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    _, _, usage = os.wait4(proc.pid, 0)
    return (usage.ru_utime + usage.ru_stime) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--venv', required=True)
    parser.add_argument('--runs', type=int, default=9)
    args = parser.parse_args(argv)
    venv = bench.CleanVenv.ensure(args.venv)
    hook = venv.script('check-generator-lock')
    tmp = tempfile.mkdtemp(prefix='og-cold-')
    try:
        for size in (2000, 50000):
            root = os.path.join(tmp, f'repo{size}')
            bench.build_repo(root, size)
            rows: dict[str, list[float]] = {'python -c pass': [], 'nothing kept (first run)': [],
                                            'closure kept, staged diff not': [],
                                            'every cache off': []}
            for run in range(args.runs):
                cache = os.path.join(tmp, f'cache{run}')
                env = {**venv.env, 'XDG_CACHE_HOME': cache}
                rows['python -c pass'].append(cpu_ms([venv.python, '-c', 'pass'], root, env))
                rows['nothing kept (first run)'].append(cpu_ms(hook, root, env))
                for name in os.listdir(os.path.join(cache, 'oracle-guard')):
                    if name.startswith('staged-'):
                        os.remove(os.path.join(cache, 'oracle-guard', name))
                rows['closure kept, staged diff not'].append(cpu_ms(hook, root, env))
                rows['every cache off'].append(
                    cpu_ms(hook, root, {**env, 'ORACLE_GUARD_SCAN_CACHE': '0'}))
                shutil.rmtree(cache, ignore_errors=True)
            base = statistics.median(rows['python -c pass'])
            print(f'## {size} files, median of {args.runs} (CPU ms, × python -c pass)')
            for name, values in rows.items():
                ms = statistics.median(values)
                print(f'| {name} | {ms:.1f} | {ms / base:.2f} |')
        print(f'load average at the end {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs')
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
