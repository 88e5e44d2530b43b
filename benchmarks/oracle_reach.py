"""What the oracle-reach measurement and the mutant runs add to ``oracle-guard ci``, on a
real suite, for an honest ``src/`` change, and what its report tells of a special-cased one.

    python benchmarks/oracle_reach.py [--package attrs==26.1.0] [--runs 3]
        [--change honest|special-cased] [--no-gate]

Downloads the package's source distribution (into a temporary folder; nothing is committed
here), makes it a git repository and adopts oracle-guard as ``reference_run.py`` does
(``oracle-guard init``, whose ``properties`` are the four modules with ``@given`` tests:
``tests/test_3rd_party.py``, ``test_dunders.py``, ``test_funcs.py``, ``test_make.py``;
``oracle-guard lock``). The pull request (``--change``) is an honest change of
``src/attr/_funcs.py``: ``asdict`` and ``astuple`` take any true ``retain_collection_types``
as ``True`` (``is True`` becomes a truth test, two lines); or a special-cased one: ``asdict``
keeps a list's type only below 1000 items, and makes a longer one a tuple (a bug no
property's list is long enough to show).

Printed: the gate's ``oracle reach`` line and its review report's section, the ``--timings``
of the two new steps (the mutant budget unset: the reference run's own wall time), and,
measured in this process (``gate/reference.py``), the reference run alone with and without
the measurement (medians of wall time and of the pytest children's CPU time).
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
CLI = (sys.executable, '-m', 'oracle_guard.cli')
# (file, old, new): the pull request's change.
HONEST = (
    ('src/attr/_funcs.py', 'cf = value_type if retain_collection_types is True else list',
     'cf = value_type if retain_collection_types else list'),
    ('src/attr/_funcs.py', 'retain = retain_collection_types  # Very long. :/',
     'retain = bool(retain_collection_types)  # Very long. :/'),
)
# Right on every list the properties draw, wrong on a long one: asdict turns a list of
# 1000 items or more into a tuple.
SPECIAL_CASED = (
    ('src/attr/_funcs.py',
     '                cf = value_type if retain_collection_types is True else list\n',
     '                if len(v) < 1000:\n'
     '                    cf = value_type if retain_collection_types is True else list\n'
     '                else:\n'
     '                    cf = tuple\n'),
)
CHANGES = {'honest': HONEST, 'special-cased': SPECIAL_CASED}


def run(args: tuple[str, ...] | list[str], cwd: str, env: dict[str, str] | None = None,
        ok: tuple[int, ...] = (0,)) -> str:
    proc = subprocess.run(list(args), cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    if proc.returncode not in ok:
        raise RuntimeError(f'{" ".join(args)} failed:\n{proc.stdout[-3000:]}')
    return proc.stdout


def prepare(package: str, workdir: str, env: dict[str, str],
            change: tuple[tuple[str, str, str], ...]) -> str:
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
    run([*CLI, 'lock'], suite, env)
    run([*GIT, 'add', '-A'], suite)
    run([*GIT, 'commit', '-q', '-m', 'adopt oracle-guard'], suite)
    run([*GIT, 'checkout', '-q', '-b', 'pr'], suite)
    for path, old, new in change:
        full = os.path.join(suite, path)
        with open(full, encoding='utf-8') as f:
            text = f.read()
        assert old in text, (path, old)
        with open(full, 'w', encoding='utf-8') as f:
            f.write(text.replace(old, new, 1))
    run([*GIT, 'add', '-A'], suite)
    run([*GIT, 'commit', '-q', '-m', 'pull request'], suite)
    return suite


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def reference_alone(suite: str, runs: int) -> dict[str, tuple[float, float]]:
    """The reference run on its own, with the measurement (one coverage context per test, as
    for the mutant runs, and without contexts) and without it (``reach.plan`` answering
    None): median (wall, CPU of the pytest children) seconds."""
    from oracle_guard.commands.ci import range_context
    from oracle_guard.gate import reach
    from oracle_guard.gate.reference import ReferenceRuns

    planned = reach.plan

    def without_contexts(*args: object, **kwargs: object) -> reach.Plan | None:
        found = planned(*args, **kwargs)  # type: ignore[arg-type]
        if found is not None:
            found.contexts = False
        return found

    plans = {'measured': planned, 'measured, no contexts (mutant-budget = 0)': without_contexts,
             'not measured': lambda *args, **kwargs: None}
    here = os.getcwd()
    os.chdir(suite)
    times: dict[str, list[tuple[float, float]]] = {label: [] for label in plans}
    try:
        for _ in range(runs):
            for label in times:
                reach.plan = plans[label]  # type: ignore[assignment]
                gate = ReferenceRuns(range_context('base'), sys.executable, approved=False)
                try:
                    cpu, start = children_cpu(), time.perf_counter()
                    gate.reference()
                    times[label].append((time.perf_counter() - start, children_cpu() - cpu))
                finally:
                    gate.close()
    finally:
        reach.plan = planned  # type: ignore[assignment]
        os.chdir(here)
    return {label: (statistics.median(v[0] for v in values),
                    statistics.median(v[1] for v in values)) for label, values in times.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--package', default='attrs==26.1.0')
    parser.add_argument('--runs', type=int, default=3,
                        help='reference runs alone of each kind (0: none)')
    parser.add_argument('--change', choices=sorted(CHANGES), default='honest')
    parser.add_argument('--no-gate', action='store_true',
                        help='only the reference run alone (not the whole gate first)')
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix='og-reach-bench-')
    env = {k: v for k, v in os.environ.items()
           if k not in ('PYTHONDONTWRITEBYTECODE', 'PYTEST_ADDOPTS', 'ORACLE_GUARD_RECORD')}
    env['PYTHONPATH'] = 'src'
    env['PYTHONPYCACHEPREFIX'] = os.path.join(workdir, 'pycache')
    try:
        suite = prepare(args.package, workdir, env, CHANGES[args.change])
        print(f'suite: {args.package}, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs')
        if not args.no_gate:
            report = os.path.join(workdir, 'report.md')
            out = run([*CLI, 'ci', '--base', 'base', '--timings', '--report', report, '--',
                       *TEST_COMMAND], suite, {**env, 'COLUMNS': '200'}, ok=(0, 1))
            for line in out.splitlines():
                if 'oracle reach' in line or line.startswith('oracle-guard ci: timing: ') and any(
                        step in line for step in ('reference run', 'oracle reach', 'mutant runs',
                                                  'total')) or ' finding(s); ' in line:
                    print(line)
            with open(report, encoding='utf-8') as f:
                text = f.read()
            section = text[text.index('### What the oracle judges'):]
            print(section[:section.index('\n### ', 5)] if '\n### ' in section[5:] else section)
        os.environ.pop('PYTHONPATH', None)
        if not args.runs:
            return 0
        print('| reference run alone | wall (s) | CPU (s) |')
        print('|---|---|---|')
        for label, (wall, cpu) in reference_alone(suite, args.runs).items():
            print(f'| {label} | {wall:.2f} | {cpu:.2f} |')
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
