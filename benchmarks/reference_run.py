"""What the reference run and its evidence add to ``oracle-guard ci``, on a real suite.

    python benchmarks/reference_run.py [--package attrs==26.1.0] [--runs 3]

Downloads the package's source distribution (into a temporary folder; nothing is
committed here), makes it a git repository and adopts oracle-guard as the README says
(``oracle-guard init``; the module with the most ``@given`` tests moved into
``tests/properties/`` as ``benchmarks/real_projects.py`` chooses it, its relative imports
pointed one package up; ``oracle-guard lock``). The pull request then does the three
things that start the gate's own runs: a one-line change in ``src/`` (the reference run),
a new test (run against the base ``src/``, rule 49) and a freeze row for an existing test
(rerun ``flaky-reruns`` times, default 5, rule 48).

Measured, interleaved: the bare test command, ``oracle-guard ci --no-reference-run`` and
``oracle-guard ci``; then each of the three runs on its own, in this process
(``gate/reference.py``), so the cost of each step is seen. Medians of wall time and of CPU
time (user + system of every child process: the reference run overlaps the test command
in wall time, never in CPU time).
"""
from __future__ import annotations

import argparse
import glob
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TEST_COMMAND = (sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider')
GIT = ('git', '-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid',
       '-c', 'commit.gpgsign=false', '-c', 'init.defaultBranch=base')
CLI = (sys.executable, '-m', 'oracle_guard.cli')
NEW_TEST = 'import attr\n\n\ndef test_bench_new():\n    assert attr.has(attr.s(type("C", (), {})))\n'


def run(args: tuple[str, ...] | list[str], cwd: str, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(list(args), cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    if proc.returncode:
        raise RuntimeError(f'{" ".join(args)} failed:\n{proc.stdout[-3000:]}')
    return proc.stdout


def prepare(package: str, workdir: str, env: dict[str, str]) -> tuple[str, str]:
    """(the suite's folder, the test chosen for the freeze)."""
    sys.path.insert(0, HERE)
    from real_projects import property_module

    subprocess.run([sys.executable, '-m', 'pip', 'download', '-q', '--no-deps',
                    '--no-binary', ':all:', package, '-d', workdir], check=True)
    archive = glob.glob(os.path.join(workdir, '*.tar.gz'))[0]
    with tarfile.open(archive) as tar:
        tar.extractall(workdir)  # noqa: S202 -- a PyPI sdist, into a temporary folder
    suite = archive[:-len('.tar.gz')]
    if os.path.exists(os.path.join(suite, '.pre-commit-config.yaml')):
        os.remove(os.path.join(suite, '.pre-commit-config.yaml'))  # its hooks need the network
    run([*GIT, 'init', '-q'], suite)
    run([*GIT, 'add', '-A'], suite)
    run([*GIT, 'commit', '-q', '-m', 'the project'], suite)
    run([*CLI, 'init', '--hook-repo', 'https://example.invalid/oracle-guard', '--rev',
         '0' * 40], suite, env)
    tracked = run(['git', 'ls-files'], suite).splitlines()
    chosen = property_module(suite, [p for p in tracked if p.startswith('tests/test_')
                                     and p.count('/') == 1])
    moved = f'tests/properties/{os.path.basename(chosen)}'
    os.makedirs(os.path.join(suite, 'tests', 'properties'), exist_ok=True)
    run(['git', 'mv', chosen, moved], suite)
    with open(os.path.join(suite, moved), encoding='utf-8') as f:
        text = re.sub(r'^from \.(\w)', r'from ..\1', f.read(), flags=re.M)
    with open(os.path.join(suite, moved), 'w', encoding='utf-8') as f:
        f.write(text)
    run([*CLI, 'lock'], suite, env)
    run([*GIT, 'add', '-A'], suite)
    run([*GIT, 'commit', '-q', '-m', 'adopt oracle-guard'], suite)
    # The pull request: src/, a new test, a freeze of a test that exists.
    run([*GIT, 'checkout', '-q', '-b', 'pr'], suite)
    source = sorted(glob.glob(os.path.join(suite, 'src', '*', '__init__.py')))[0]
    with open(source, 'a', encoding='utf-8') as f:
        f.write('# a pull request\n')
    with open(os.path.join(suite, 'tests', 'test_bench_new.py'), 'w', encoding='utf-8') as f:
        f.write(NEW_TEST)
    frozen = 'tests/test_make.py::TestAttributes::test_sets_attrs'
    ledger = os.path.join(suite, 'tests', 'freeze_ledger.yaml')
    with open(ledger, 'w', encoding='utf-8') as f:
        f.write(f'budget: 1\nfreezes:\n  - id: FZ-1\n    nodeid: {frozen}\n'
                '    class: order-dependent\n    evidence: "benchmark"\n    owner: bench\n'
                '    expires: 2099-01-01\n')
    run([*GIT, 'add', '-A'], suite)
    run([*GIT, 'commit', '-q', '-m', 'pull request'], suite)
    return suite, frozen


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str], cwd: str, env: dict[str, str]) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of every child process, last output line)."""
    cpu = children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    lines = proc.stdout.strip().splitlines()
    return time.perf_counter() - start, children_cpu() - cpu, lines[-1] if lines else ''


def steps(suite: str, runs: int) -> dict[str, tuple[float, float]]:
    """Each of the gate's own runs on its own, in this process: median (wall, CPU of the
    pytest children) seconds."""
    from oracle_guard.commands.ci import range_context
    from oracle_guard.gate.reference import ReferenceRuns

    here = os.getcwd()
    os.chdir(suite)
    try:
        times: dict[str, list[tuple[float, float]]] = {
            'reference run (rule 44)': [], 'freeze reruns (rule 48)': [],
            'new tests on the base src (rule 49)': []}
        for _ in range(runs):
            gate = ReferenceRuns(range_context('base'), sys.executable, approved=False)
            try:
                for label, step in zip(times, (gate.reference, gate.freezes, gate.new_tests)):
                    cpu, start = children_cpu(), time.perf_counter()
                    step()
                    times[label].append((time.perf_counter() - start, children_cpu() - cpu))
            finally:
                gate.close()
        for title, lines in gate.result.report:
            print(f'{title}: {lines[0]}')
        return {label: (statistics.median(v[0] for v in values),
                        statistics.median(v[1] for v in values))
                for label, values in times.items()}
    finally:
        os.chdir(here)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--package', default='attrs==26.1.0')
    parser.add_argument('--runs', type=int, default=3)
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix='og-reference-bench-')
    env = {k: v for k, v in os.environ.items()
           if k not in ('PYTHONDONTWRITEBYTECODE', 'PYTEST_ADDOPTS', 'ORACLE_GUARD_RECORD')}
    env['PYTHONPATH'] = 'src'
    env['PYTHONPYCACHEPREFIX'] = os.path.join(workdir, 'pycache')
    try:
        suite, frozen = prepare(args.package, workdir, env)
        ci = [*CLI, 'ci', '--base', 'base']
        commands = {'bare test command': list(TEST_COMMAND),
                    'oracle-guard ci --no-reference-run': [*ci, '--no-reference-run', '--',
                                                           *TEST_COMMAND],
                    'oracle-guard ci': [*ci, '--', *TEST_COMMAND]}
        for command in commands.values():
            timed(command, suite, env)  # warm the interpreter's bytecode and the disk
        measured: dict[str, list[tuple[float, float]]] = {label: [] for label in commands}
        last: dict[str, str] = {}
        for _ in range(args.runs):
            for label, command in commands.items():
                wall, cpu, last[label] = timed(command, suite, env)
                measured[label].append((wall, cpu))
        print(f'suite: {args.package}, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, '
              f'{args.runs} runs each, interleaved; frozen in the pull request: {frozen}')
        for label in commands:
            print(f'{label}: {last[label]}')
        bare_wall = statistics.median(v[0] for v in measured['bare test command'])
        bare_cpu = statistics.median(v[1] for v in measured['bare test command'])
        print('| | wall (s) | wall ratio | CPU (s) | CPU ratio |')
        print('|---|---|---|---|---|')

        def row(label: str, wall: float, cpu: float) -> None:
            print(f'| {label} | {wall:.2f} | {wall / bare_wall:.3f} | {cpu:.2f} | '
                  f'{cpu / bare_cpu:.3f} |')

        for label, values in measured.items():
            row(label, statistics.median(v[0] for v in values),
                statistics.median(v[1] for v in values))
        os.environ.pop('PYTHONPATH', None)
        for label, (wall, cpu) in steps(suite, args.runs).items():
            row(label, wall, cpu)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
