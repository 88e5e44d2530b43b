"""What each piece of the sealed run adds to the test command, in CPU time.

    python benchmarks/gate_pieces.py [--package P | --synthetic N] [--runs 3]
                                     [--variants bare,record,record+stream,...] [--compare PYTHON]

The test command of ``oracle-guard ci`` is the user's pytest with the plugin recording
(``ORACLE_GUARD_RECORD``), its events streamed to a listener (``ORACLE_GUARD_STREAM``),
a JUnit report and the gate's canaries. This runs the same pytest command with those
pieces one by one, interleaved, the suite's compiled files removed before every run:

* ``bare``: ``python -m pytest -q -p no:cacheprovider`` (the plugin loaded as it is for
  any user of an adopted repository: ledger and lock at collection);
* ``record``: plus the run record (``-p oracle_guard --maxfail=0``, as the gate adds);
* ``record+stream``: plus the gate's own listener (``gate/stream.EventListener``) in this
  process, whose CPU is counted too;
* ``record+stream+junit``: plus ``--junitxml``;
* ``full``: plus the canaries the gate would plant (``gate/canaries.plant_canaries``).

``--package`` adopts a PyPI sdist as ``ci_overhead.py --gate`` does (init, lock);
``--synthetic N`` writes a suite of N small tests of three kinds (parametrized cases,
``unittest`` methods, plain functions with a fixture) and two Hypothesis properties in a
properties folder, where the per-test work of the plugin is most of the difference.
``--compare PYTHON`` runs the variants with another environment's oracle-guard too (this
script re-runs itself there), interleaved. CPU is user + system of the pytest process and
this process's listener threads; min and median of ``--runs``. No timing is asserted
anywhere. Latest results: ``benchmarks/RESULTS.md``.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
VARIANTS = ('bare', 'record', 'record+stream', 'record+stream+junit', 'full')
GIT = ('git', '-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid',
       '-c', 'commit.gpgsign=false', '-c', 'init.defaultBranch=base')


def synthetic(folder: str, tests: int) -> str:
    """A suite of ``tests`` small tests, adopted (init, lock), on branch ``base``."""
    suite = os.path.join(folder, 'synthetic')
    os.makedirs(os.path.join(suite, 'src', 'pkg'))
    os.makedirs(os.path.join(suite, 'tests', 'properties'))
    params, units = tests * 3 // 5, tests // 5
    functions = tests - params - units
    files = {
        'src/pkg/__init__.py': 'def add(a, b):\n    return a + b\n',
        'pyproject.toml': '[project]\nname = "pkg"\nversion = "0"\n',
        'tests/test_many.py': (
            'import unittest\n\nimport pytest\n\nfrom pkg import add\n\n\n'
            f'@pytest.mark.parametrize("i", range({params}))\n'
            'def test_param(i):\n    assert add(i, 1) == i + 1\n\n\n'
            'class TestUnit(unittest.TestCase):\n    pass\n\n\n'
            f'for _n in range({units}):\n'
            '    def _t(self, n=_n):\n        self.assertEqual(add(n, 0), n)\n'
            '    setattr(TestUnit, f"test_{_n}", _t)\n'),
        'tests/test_fixtures.py': (
            'import pytest\n\nfrom pkg import add\n\n\n@pytest.fixture\n'
            'def one():\n    return 1\n\n\n' + ''.join(
                f'def test_f{j}(one):\n    assert add(one, {j}) == {j + 1}\n\n\n'
                for j in range(functions))),
        'tests/properties/test_props.py': (
            'from hypothesis import given, strategies as st\n\nfrom pkg import add\n\n\n'
            '@given(st.integers(), st.integers())\n'
            'def test_commutes(a, b):\n    assert add(a, b) == add(b, a)\n'),
    }
    for rel, text in files.items():
        with open(os.path.join(suite, rel), 'w', encoding='utf-8') as f:
            f.write(text)
    env = {**os.environ, 'PYTHONPATH': 'src'}
    subprocess.run([*GIT, 'init', '-q'], cwd=suite, check=True)
    subprocess.run([*GIT, 'add', '-A'], cwd=suite, check=True)
    subprocess.run([*GIT, 'commit', '-qm', 'the project'], cwd=suite, check=True)
    cli = (sys.executable, '-m', 'oracle_guard.cli')
    subprocess.run([*cli, 'init', '--hook-repo', 'https://example.invalid/oracle-guard',
                    '--rev', '0' * 40], cwd=suite, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run([*cli, 'lock'], cwd=suite, env=env, check=True, stdout=subprocess.DEVNULL)
    subprocess.run([*GIT, 'add', '-A'], cwd=suite, check=True)
    subprocess.run([*GIT, 'commit', '-qm', 'adopt'], cwd=suite, check=True)
    return suite


def run_variant(suite: str, pycache: str, variant: str) -> tuple[float, str]:
    """(CPU seconds, pytest's last line) of one run of the test command with ``variant``."""
    from oracle_guard.config import load_config
    from oracle_guard.gate import canaries
    from oracle_guard.gate import stream
    from oracle_guard.gate.inventory import static_inventory
    from oracle_guard.gate.sealed import uses_hypothesis
    from oracle_guard.repo.tree_view import TreeView

    shutil.rmtree(os.path.join(pycache, os.path.abspath(suite).lstrip(os.sep)),
                  ignore_errors=True)
    env = {k: v for k, v in os.environ.items()
           if k not in ('PYTHONDONTWRITEBYTECODE', 'PYTEST_ADDOPTS', 'ORACLE_GUARD_RECORD')}
    env.update(PYTHONPYCACHEPREFIX=pycache, PYTHONPATH='src')
    command = [sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider']
    folder = tempfile.mkdtemp(prefix='og-pieces-')
    listener = None
    try:
        if variant != 'bare':
            os.mkdir(os.path.join(folder, 'record'))
            env['ORACLE_GUARD_RECORD'] = os.path.join(folder, 'record')
            command += ['-p', 'oracle_guard', '--maxfail=0']
        if variant in ('record+stream+junit', 'full'):
            command.append(f'--junitxml={folder}/junit.xml')
        if variant == 'full':
            cfg = load_config(suite)
            view = TreeView(suite, 'HEAD')
            tests = sorted({path for path, _ in static_inventory(view, cfg)})
            oracle = [p for p in tests if cfg.is_property(p)]
            plan = canaries.plant_canaries(
                os.path.join(folder, 'canaries'), secrets.token_hex(16), root=suite,
                test_files=tests, oracle_files=oracle, read=view.read,
                hypothesis=uses_hypothesis([*oracle, *tests], view.read))
            env.update(plan.env())
        if variant != 'bare' and variant != 'record':
            listener = stream.EventListener(folder).__enter__()
            env.update(listener.env())
        own = resource.getrusage(resource.RUSAGE_SELF)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        proc = subprocess.run(command, cwd=suite, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        if listener is not None:
            listener.close()
        own_after = resource.getrusage(resource.RUSAGE_SELF)
        children_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    cpu = sum(after - before for after, before in (
        (children_after.ru_utime, children.ru_utime), (children_after.ru_stime, children.ru_stime),
        (own_after.ru_utime, own.ru_utime), (own_after.ru_stime, own.ru_stime)))
    lines = proc.stdout.strip().splitlines()
    return cpu, lines[-1] if lines else ''


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--package', help='a PyPI sdist, adopted as ci_overhead.py --gate does')
    parser.add_argument('--synthetic', type=int, default=5000, metavar='N',
                        help='a synthetic suite of N tests (default, N = 5000)')
    parser.add_argument('--runs', type=int, default=3)
    parser.add_argument('--variants', default=','.join(VARIANTS))
    parser.add_argument('--compare', metavar='PYTHON', help='another environment, interleaved')
    parser.add_argument('--suite', help=argparse.SUPPRESS)  # the folder, for --compare's child
    parser.add_argument('--one', help=argparse.SUPPRESS)  # one run of one variant, as JSON
    args = parser.parse_args()
    if args.one:
        cpu, line = run_variant(args.suite, os.path.join(args.suite, '..', 'pycache'), args.one)
        print(json.dumps([cpu, line]))
        return 0
    variants = args.variants.split(',')
    workdir = tempfile.mkdtemp(prefix='og-pieces-bench-')
    try:
        if args.package:
            sys.path.insert(0, HERE)
            from ci_overhead import prepare_adopted

            env = {k: v for k, v in os.environ.items() if k != 'PYTEST_ADDOPTS'}
            suite = prepare_adopted(args.package, workdir, env)
        else:
            suite = synthetic(workdir, args.synthetic)
        sides = [('this', sys.executable), *([('compare', args.compare)] if args.compare else [])]
        found: dict[tuple[str, str], list[float]] = {}
        last: dict[str, str] = {}
        loads = [os.getloadavg()[0]]
        for _ in range(args.runs):
            for variant in variants:
                for label, python in sides:
                    out = subprocess.run(
                        [python, os.path.abspath(__file__), '--suite', suite, '--one', variant],
                        check=True, stdout=subprocess.PIPE, text=True).stdout
                    cpu, last[variant] = json.loads(out.strip().splitlines()[-1])
                    found.setdefault((label, variant), []).append(cpu)
                    loads.append(os.getloadavg()[0])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f'suite: {args.package or f"synthetic, {args.synthetic} tests"}; Python '
          f'{sys.version.split()[0]}, {os.cpu_count()} CPUs, {args.runs} interleaved runs; '
          f'load average (1 min) {min(loads):.1f} to {max(loads):.1f}')
    for label, python in sides:
        print(f'{label}: {python}')
    print('| variant | side | CPU min (s) | CPU median (s) | all | pytest says |')
    print('|---|---|---|---|---|---|')
    for variant in variants:
        for label, _python in sides:
            values = found[(label, variant)]
            print(f'| {variant} | {label} | {min(values):.2f} | {statistics.median(values):.2f} '
                  f'| {", ".join(f"{v:.2f}" for v in values)} | {last[variant]} |')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
