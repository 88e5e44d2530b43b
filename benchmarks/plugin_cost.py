"""The CPU cost of a change to the plugin, on a real suite: two revisions of oracle-guard,
interleaved, running the same pytest command with the plugin recording as the gate's test
command does (``ORACLE_GUARD_RECORD`` set, ``-p oracle_guard``).

    python benchmarks/plugin_cost.py --suite DIR --before REV --after REV [--runs 5]
                                     [--src src] -- PYTEST ARGS...

Each revision's ``hooks/`` is exported (``git archive``) into a temporary folder and put
first on ``PYTHONPATH`` (before the suite's ``--src``), so the installed oracle-guard is
not what runs; the two sides alternate which runs first. CPU is user + system of the pytest process (children included, from
``resource.getrusage``); the medians and their ratio are printed with the load average
before and after. The suite's compiled files are not removed (both sides alike).
"""
from __future__ import annotations

import argparse
import io
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def export(rev: str, folder: str) -> str:
    data = subprocess.run(('git', 'archive', rev, 'hooks'), cwd=ROOT, check=True,
                          capture_output=True).stdout
    target = os.path.join(folder, rev)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(target)
    return os.path.join(target, 'hooks')


def one_run(hooks: str, suite: str, src: str, args: list[str]) -> float:
    record = tempfile.mkdtemp(prefix='plugin-cost-record-')
    env = {k: v for k, v in os.environ.items() if not k.startswith(('PYTEST_', 'ORACLE_GUARD'))}
    env['PYTHONPATH'] = os.pathsep.join([hooks, os.path.join(suite, src)])
    env['ORACLE_GUARD_RECORD'] = record
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, '-m', 'pytest', *args, '-p', 'oracle_guard'],
                          cwd=suite, env=env, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    shutil.rmtree(record, ignore_errors=True)
    last = (proc.stdout.strip().splitlines() or ['?'])[-1]
    print(f'    exit {proc.returncode}: {last}', flush=True)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('--suite', required=True)
    parser.add_argument('--before', required=True)
    parser.add_argument('--after', required=True)
    parser.add_argument('--runs', type=int, default=5)
    parser.add_argument('--src', default='src')
    parser.add_argument('pytest', nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    pytest_args = [a for a in args.pytest if a != '--']
    folder = tempfile.mkdtemp(prefix='plugin-cost-')
    try:
        sides = {'before': export(args.before, folder), 'after': export(args.after, folder)}
        check = subprocess.run([sys.executable, '-c', 'import oracle_guard; print(oracle_guard.__file__)'],
                               env={**os.environ, 'PYTHONPATH': sides['after']},
                               capture_output=True, text=True).stdout.strip()
        print(f'oracle_guard imported from {check}')
        cpu: dict[str, list[float]] = {name: [] for name in sides}
        print(f'load average before: {os.getloadavg()}')
        start = time.monotonic()
        for run in range(args.runs):
            # ABBA: neither side always runs first (the machine's load drifts).
            order = list(sides.items()) if run % 2 == 0 else list(sides.items())[::-1]
            for name, hooks in order:
                seconds = one_run(hooks, args.suite, args.src, pytest_args)
                cpu[name].append(seconds)
                print(f'  run {run + 1} {name}: {seconds:.2f} s CPU', flush=True)
        print(f'load average after: {os.getloadavg()} ({time.monotonic() - start:.0f} s wall)')
        medians = {name: statistics.median(values) for name, values in cpu.items()}
        for name, value in medians.items():
            print(f'{name} ({getattr(args, name)}): median {value:.2f} s CPU of '
                  f'{", ".join(f"{v:.2f}" for v in cpu[name])}')
        print(f'after / before: {medians["after"] / medians["before"]:.3f}')
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == '__main__':
    raise SystemExit(main(sys.argv[1:]))
