"""The overhead of ``oracle-guard ci`` over the bare test command, on a real test suite.

    python benchmarks/ci_overhead.py [--package attrs==26.1.0] [--runs 5] [--workdir DIR]
                                     [--xdist N]

Downloads the package's source distribution from PyPI into a temporary folder (nothing
is committed here), makes it a git repository with a base commit and a one-line pull
request on top (a comment in ``src/``), and runs, interleaved:

* the bare test command: ``python -m pytest -q -p no:cacheprovider`` (``PYTHONPATH=src``);
* ``oracle-guard ci --base base -- <the same command>``: the change rules, the run with
  the plugin recording, the audit.

The interpreter is this one; it needs oracle-guard, pytest and the suite's test
dependencies (for attrs: hypothesis). Bytecode goes to a cache outside the suite, so both
sides run compiled, as an installed copy does. Wall time and CPU time (user + system of
every child process) are measured; the ratios are of medians. The target is a ratio of at
most 1.10. The suite's own findings (its skips are not frozen in a ledger) do not matter
here: the audit does all its work either way.

By default pytest's assertion-rewrite cache of the suite's test modules is removed before
every run of either side, as on a fresh CI checkout; ``--warm`` keeps it (a developer's
second run), where the run record must compile the test modules itself.
"""
from __future__ import annotations

import argparse
import glob
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

TEST_COMMAND = (sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider')
GIT = ('git', '-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid',
       '-c', 'commit.gpgsign=false', '-c', 'init.defaultBranch=base')


def prepare(package: str, workdir: str) -> str:
    """Download and unpack the sdist; a git repository with a base and a pull request."""
    subprocess.run([sys.executable, '-m', 'pip', 'download', '-q', '--no-deps',
                    '--no-binary', ':all:', package, '-d', workdir], check=True)
    archive = glob.glob(os.path.join(workdir, '*.tar.gz'))[0]
    with tarfile.open(archive) as tar:
        tar.extractall(workdir)  # noqa: S202 -- a PyPI sdist, into a temporary folder
    suite = archive[:-len('.tar.gz')]
    subprocess.run([*GIT, 'init', '-q'], cwd=suite, check=True)
    subprocess.run([*GIT, 'add', '-A'], cwd=suite, check=True)
    subprocess.run([*GIT, 'commit', '-q', '-m', 'base'], cwd=suite, check=True)
    subprocess.run([*GIT, 'checkout', '-q', '-b', 'pr'], cwd=suite, check=True)
    source = sorted(glob.glob(os.path.join(suite, 'src', '*', '__init__.py')))[0]
    with open(source, 'a', encoding='utf-8') as f:
        f.write('# a pull request\n')
    subprocess.run([*GIT, 'commit', '-q', '-am', 'pull request'], cwd=suite, check=True)
    return suite


def timed(command: list[str], cwd: str, env: dict[str, str]) -> tuple[float, float, int, str]:
    """(wall seconds, CPU seconds of the children, exit code, last output line)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = proc.stdout.strip().splitlines()
    return wall, cpu, proc.returncode, lines[-1] if lines else ''


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--package', default='attrs==26.1.0')
    parser.add_argument('--runs', type=int, default=5)
    parser.add_argument('--workdir', help='reuse this folder (the sdist is unpacked there)')
    parser.add_argument('--xdist', type=int, default=0, help='add -n N to the test command')
    parser.add_argument('--warm', action='store_true',
                        help='keep pytest\'s assertion-rewrite cache of the suite\'s tests '
                             'between runs (default: cleared before every run on both sides, '
                             'as on a fresh CI checkout)')
    args = parser.parse_args()

    workdir = args.workdir or tempfile.mkdtemp(prefix='og-ci-bench-')
    existing = [p for p in glob.glob(os.path.join(workdir, '*')) if os.path.isdir(
        os.path.join(p, '.git'))]
    suite = existing[0] if existing else prepare(args.package, workdir)
    env = {k: v for k, v in os.environ.items()
           if k not in ('PYTHONDONTWRITEBYTECODE', 'PYTEST_ADDOPTS', 'ORACLE_GUARD_RECORD')}
    env['PYTHONPATH'] = 'src'
    env['PYTHONPYCACHEPREFIX'] = os.path.join(workdir, 'pycache')
    command = [*TEST_COMMAND, *(['-n', str(args.xdist)] if args.xdist else [])]
    ci = [sys.executable, '-m', 'oracle_guard.cli', 'ci', '--base', 'base', '--', *command]

    def cold() -> None:
        """Forget pytest's rewritten test modules: a fresh checkout has none."""
        if not args.warm:
            shutil.rmtree(os.path.join(env['PYTHONPYCACHEPREFIX'],
                                       os.path.abspath(suite).lstrip(os.sep)),
                          ignore_errors=True)

    timed(command, suite, env)  # warm the interpreter's own bytecode and the file system
    timed(ci, suite, env)
    bare: list[tuple[float, float]] = []
    guarded: list[tuple[float, float]] = []
    for _ in range(args.runs):
        cold()
        wall, cpu, _rc, last = timed(command, suite, env)
        bare.append((wall, cpu))
        bare_line = last
        cold()
        wall, cpu, _rc, last = timed(ci, suite, env)
        guarded.append((wall, cpu))
        ci_line = last

    def median(values: list[tuple[float, float]], at: int) -> float:
        return statistics.median(v[at] for v in values)

    print(f'suite: {args.package} ({os.path.basename(suite)}), Python '
          f'{sys.version.split()[0]}, {os.cpu_count()} CPUs, {args.runs} runs each, interleaved')
    print(f'test command: {" ".join(command[1:])}; pytest\'s rewrite cache '
          f'{"kept" if args.warm else "cleared before every run"}')
    print(f'bare:         {bare_line}')
    print(f'ci:           {ci_line}')
    print('| | bare test command | oracle-guard ci | ratio |')
    print('|---|---|---|---|')
    for label, at in (('wall time (s)', 0), ('CPU time (s)', 1)):
        b, g = median(bare, at), median(guarded, at)
        print(f'| {label} | {b:.2f} | {g:.2f} | {g / b:.3f} |')
    if not args.workdir:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
