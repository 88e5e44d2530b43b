"""The overhead of ``oracle-guard ci`` over the bare test command, on a real test suite.

    python benchmarks/ci_overhead.py [--package attrs==26.1.0] [--runs 5] [--workdir DIR]
                                     [--xdist N] [--warm]
    python benchmarks/ci_overhead.py --gate --package P [--package P ...] [--runs 3]
                                     [--warm] [--compare PYTHON ...] [--json FILE]

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

``--gate`` measures the whole gate as a project adopts it instead, on one or more suites
(``--package`` repeated), as the README says: after the base commit the script runs
``oracle-guard init`` (which names the modules holding Hypothesis tests as the properties,
where they are) and commits that; when init found none, the first test module is named
in ``properties`` in a commit of its own; then ``oracle-guard lock``. The pull request is
the same one-line comment in the package's ``__init__.py``. ``oracle-guard ci --timings``
runs with its default settings (the reference run on), and the median of every step's
line (``--timings`` on stderr) is printed next to the ratios, with the machine's load
average before and after each run (other jobs share its CPUs). The suite's compiled files
are removed before every run of either side (a fresh CI checkout) unless ``--warm``.
``--package small`` is a synthetic suite of 12 tests and 4 Hypothesis properties (about a
second of pytest), where the gate's fixed cost shows. ``--compare PYTHON`` runs the gate of another environment too (an older checkout
installed there), its test command with that interpreter, interleaved with the rest.
Latest results: ``benchmarks/RESULTS.md``.
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
CLI = (sys.executable, '-m', 'oracle_guard.cli')
TIMING = re.compile(r'oracle-guard ci: timing: (?P<step>[a-z -]+): (?:not run|wall '
                    r'(?P<wall>[\d.]+) s, cpu (?P<gate>[\d.]+) s gate \+ (?P<children>[\d.]+) s '
                    r'children(?: \((?P<beside>[\d.]+) s of its wall time beside the test '
                    r'command\))?)')
TEST_COMMAND = (sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider')
GIT = ('git', '-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid',
       '-c', 'commit.gpgsign=false', '-c', 'init.defaultBranch=base')


def unpack(archive: str, workdir: str) -> str:
    """The sdist unpacked, owned by whoever runs this (root keeps the archive's owners,
    and git then refuses the folder as of dubious ownership)."""
    with tarfile.open(archive) as tar:
        tar.extractall(workdir)  # noqa: S202 -- a PyPI sdist, into a temporary folder
    suite = archive[:-len('.tar.gz')]
    uid, gid = os.getuid(), os.getgid()
    for folder, dirs, files in os.walk(suite):
        for name in (folder, *(os.path.join(folder, n) for n in dirs + files)):
            os.lchown(name, uid, gid)
    return suite


def prepare(package: str, workdir: str) -> str:
    """Download and unpack the sdist; a git repository with a base and a pull request."""
    subprocess.run([sys.executable, '-m', 'pip', 'download', '-q', '--no-deps',
                    '--no-binary', ':all:', package, '-d', workdir], check=True)
    archive = glob.glob(os.path.join(workdir, '*.tar.gz'))[0]
    suite = unpack(archive, workdir)
    subprocess.run([*GIT, 'init', '-q'], cwd=suite, check=True)
    subprocess.run([*GIT, 'add', '-A'], cwd=suite, check=True)
    subprocess.run([*GIT, 'commit', '-q', '-m', 'base'], cwd=suite, check=True)
    subprocess.run([*GIT, 'checkout', '-q', '-b', 'pr'], cwd=suite, check=True)
    source = sorted(glob.glob(os.path.join(suite, 'src', '*', '__init__.py')))[0]
    with open(source, 'a', encoding='utf-8') as f:
        f.write('# a pull request\n')
    subprocess.run([*GIT, 'commit', '-q', '-am', 'pull request'], cwd=suite, check=True)
    return suite


def git(*args: str, cwd: str) -> str:
    return subprocess.run([*GIT, *args], cwd=cwd, check=True, stdout=subprocess.PIPE,
                          text=True).stdout


def first_module(suite: str, candidates: list[str]) -> str:
    """The module a person names when ``init`` found no Hypothesis tests: the first test
    module by name (as ``real_projects.property_module`` picks it)."""
    sys.path.insert(0, HERE)
    from real_projects import property_module

    return property_module(suite, candidates)


# The small suite of the gate's fixed cost (``--package small``): twelve tests of three
# kinds and four Hypothesis properties, about a second of pytest.
SMALL = 'small'
MORE_PROPERTIES = (
    '\n\n@given(st.integers())\ndef test_zero(a):\n    assert add(a, 0) == a\n'
    '\n\n@given(st.integers(), st.integers(), st.integers())\n'
    'def test_associates(a, b, c):\n    assert add(add(a, b), c) == add(a, add(b, c))\n'
    '\n\n@given(st.lists(st.integers()))\ndef test_sum(xs):\n    total = 0\n'
    '    for x in xs:\n        total = add(total, x)\n    assert total == sum(xs)\n')


def prepare_small(workdir: str, env: dict[str, str]) -> str:
    """benchmarks/gate_pieces.py's synthetic suite of 12 tests with four properties,
    adopted and locked on branch ``base``; a pull request on top."""
    sys.path.insert(0, HERE)
    from gate_pieces import synthetic

    suite = synthetic(workdir, 12)
    with open(os.path.join(suite, 'tests', 'properties', 'test_props.py'), 'a',
              encoding='utf-8') as f:
        f.write(MORE_PROPERTIES)
    subprocess.run([*CLI, 'lock'], cwd=suite, env={**env, 'PYTHONPATH': 'src'}, check=True,
                   stdout=subprocess.PIPE)
    git('add', '-A', cwd=suite)
    git('commit', '-q', '-m', 'four properties', cwd=suite)
    git('checkout', '-q', '-b', 'pr', cwd=suite)
    with open(os.path.join(suite, 'src', 'pkg', '__init__.py'), 'a', encoding='utf-8') as f:
        f.write('# a pull request\n')
    git('commit', '-q', '-am', 'pull request', cwd=suite)
    return suite


def prepare_adopted(package: str, workdir: str, env: dict[str, str]) -> str:
    """The sdist adopted as the README says, on branch ``base``; a pull request on top.

    ``oracle-guard init`` names the modules that hold Hypothesis tests as the properties,
    where they are; when it found none (``properties = []``), the first test module is
    named by hand, in a commit of its own, as the README says. Then ``oracle-guard lock``.
    """
    if package == SMALL:
        return prepare_small(workdir, env)
    subprocess.run([sys.executable, '-m', 'pip', 'download', '-q', '--no-deps',
                    '--no-binary', ':all:', package, '-d', workdir], check=True)
    archive = glob.glob(os.path.join(workdir, '*.tar.gz'))[0]
    suite = unpack(archive, workdir)
    if os.path.exists(os.path.join(suite, '.pre-commit-config.yaml')):
        os.remove(os.path.join(suite, '.pre-commit-config.yaml'))  # its hooks need the network
    git('init', '-q', cwd=suite)
    git('add', '-A', cwd=suite)
    git('commit', '-q', '-m', 'the project', cwd=suite)
    subprocess.run([*CLI, 'init', '--hook-repo', 'https://example.invalid/oracle-guard',
                    '--rev', '0' * 40], cwd=suite, env=env, check=True, stdout=subprocess.PIPE)
    git('add', '-A', cwd=suite)
    git('commit', '-q', '-m', 'adopt oracle-guard', cwd=suite)
    pyproject = os.path.join(suite, 'pyproject.toml')
    with open(pyproject, encoding='utf-8') as f:
        text = f.read()
    if re.search(r'^properties = \[\]$', text, flags=re.M):
        tracked = git('ls-files', cwd=suite).splitlines()
        chosen = first_module(suite, [p for p in tracked if p.startswith('tests/test_')
                                      and p.endswith('.py') and p.count('/') == 1])
        text = re.sub(r'^properties = \[\]$', f'properties = ["{chosen}"]', text, flags=re.M)
        with open(pyproject, 'w', encoding='utf-8') as f:
            f.write(text)
        git('commit', '-q', '-am', 'name the property tests', cwd=suite)
    subprocess.run([*CLI, 'lock'], cwd=suite, env=env, check=True, stdout=subprocess.PIPE)
    git('add', '-A', cwd=suite)
    git('commit', '-q', '--allow-empty', '-m', 'lock the properties', cwd=suite)
    git('checkout', '-q', '-b', 'pr', cwd=suite)
    source = sorted([*glob.glob(os.path.join(suite, 'src', '*', '__init__.py')),
                     *glob.glob(os.path.join(suite, '*', '__init__.py'))])
    source = [p for p in source if os.path.basename(os.path.dirname(p)) != 'tests']
    with open(source[0], 'a', encoding='utf-8') as f:
        f.write('# a pull request\n')
    git('commit', '-q', '-am', 'pull request', cwd=suite)
    named = re.search(r'^properties = (.*)$', text, flags=re.M)
    print(f'{package}: properties = {named.group(1) if named else "?"}', file=sys.stderr)
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


def timed_gate(command: list[str], cwd: str, env: dict[str, str]
               ) -> tuple[float, float, str, dict[str, tuple[float, ...]], tuple[float, float]]:
    """(wall, CPU of the children, last stdout line, the --timings steps, load averages
    before and after)."""
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    steps = {}
    for line in proc.stderr.splitlines():
        m = TIMING.fullmatch(line)
        if m and m.group('wall'):
            steps[m.group('step')] = (float(m.group('wall')),
                                      float(m.group('gate')) + float(m.group('children')),
                                      float(m.group('beside') or 0))
    lines = proc.stdout.strip().splitlines()
    return wall, cpu, lines[-1] if lines else '', steps, (load, os.getloadavg()[0])


def gate(packages: list[str], runs: int, warm: bool, compare: list[str],
         json_file: str | None = None) -> None:
    """The whole gate as adopted, reference run on, against the bare test command;
    ``compare``: other interpreters whose own oracle-guard runs the gate too (an older
    checkout installed in an environment of its own), interleaved with the rest;
    ``json_file``: the ratios written there too (``benchmarks/bench.py --gate-suites``)."""
    rows, breakdowns, loads = [], [], []
    results: list[dict[str, object]] = []
    gates = [('this', sys.executable), *[(f'python {i + 1}', python)
                                         for i, python in enumerate(compare)]]
    for package in packages:
        workdir = tempfile.mkdtemp(prefix='og-gate-bench-')
        env = {k: v for k, v in os.environ.items()
               if k not in ('PYTHONDONTWRITEBYTECODE', 'PYTEST_ADDOPTS', 'ORACLE_GUARD_RECORD')}
        env['PYTHONPYCACHEPREFIX'] = os.path.join(workdir, 'pycache')

        def cold() -> None:
            """Forget the suite's compiled files (pytest's rewritten test modules too): a
            fresh CI checkout has none. The interpreter's own stay."""
            if not warm:
                shutil.rmtree(os.path.join(env['PYTHONPYCACHEPREFIX'],
                                           os.path.abspath(suite).lstrip(os.sep)),
                              ignore_errors=True)

        try:
            suite = prepare_adopted(package, workdir, env)
            env['PYTHONPATH'] = 'src'
            command = list(TEST_COMMAND)
            # Each gate runs the test command with its own interpreter: the plugin inside
            # the test process is that gate's.
            cis = [(label, [python, '-m', 'oracle_guard.cli', 'ci', '--base', 'base',
                            '--timings', '--', python, *command[1:]])
                   for label, python in gates]
            timed_gate(command, suite, env)  # warm the interpreter's bytecode and the disk
            for _label, ci in cis:
                timed_gate(ci, suite, env)
            bare: list[tuple[float, float]] = []
            guarded: dict[str, list[tuple[float, float]]] = {label: [] for label, _ in cis}
            steps: dict[str, list[dict[str, tuple[float, ...]]]] = {label: [] for label, _ in cis}
            ci_lines: dict[str, str] = {}
            for _ in range(runs):
                cold()
                wall, cpu, bare_line, _s, load = timed_gate(command, suite, env)
                bare.append((wall, cpu))
                loads.extend(load)
                for label, ci in cis:
                    cold()
                    wall, cpu, ci_lines[label], found, load = timed_gate(ci, suite, env)
                    guarded[label].append((wall, cpu))
                    steps[label].append(found)
                    loads.extend(load)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        b_wall, b_cpu = (statistics.median(v[i] for v in bare) for i in (0, 1))
        for label, _ci in cis:
            g_wall, g_cpu = (statistics.median(v[i] for v in guarded[label]) for i in (0, 1))
            rows.append(f'| {package} | {label} | {bare_line} | {b_wall:.2f} | {g_wall:.2f} | '
                        f'{g_wall / b_wall:.3f} | {b_cpu:.2f} | {g_cpu:.2f} | '
                        f'{g_cpu / b_cpu:.3f} |')
            reference = [found['reference run'][1] for found in steps[label]
                         if 'reference run' in found]
            results.append({'package': package, 'gate': label, 'bare_cpu': b_cpu,
                            'reference_cpu': statistics.median(reference) if reference else 0.0,
                            'gate_cpu': g_cpu, 'cpu_ratio': g_cpu / b_cpu,
                            'bare_wall': b_wall, 'gate_wall': g_wall,
                            'wall_ratio': g_wall / b_wall, 'verdict': ci_lines[label]})
            print(f'{package}: ci ({label}): {ci_lines[label]}', file=sys.stderr)
            names = list(dict.fromkeys(name for found in steps[label] for name in found))
            for name in names:
                values = [found[name] for found in steps[label] if name in found]
                wall, cpu, beside = (statistics.median(v[i] for v in values) for i in (0, 1, 2))
                breakdowns.append(f'| {package} | {label} | {name} | {wall:.2f} | {cpu:.2f} |'
                                  + (f' {beside:.2f} |' if name == 'reference run' else ' |'))
    print(f'Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {runs} runs each side, '
          f'interleaved; suite bytecode {"kept" if warm else "cleared before every run"}; '
          f'load average (1 min) during the runs: {min(loads):.1f} to {max(loads):.1f}')
    for label, python in gates:
        print(f'gate {label}: {python}')
    print('| suite | gate | bare result | bare wall (s) | gate wall (s) | wall ratio | '
          'bare CPU (s) | gate CPU (s) | CPU ratio |')
    print('|---|---|---|---|---|---|---|---|---|')
    print('\n'.join(rows))
    print()
    print('| suite | gate | step | wall (s) | CPU, gate + children (s) | wall beside the test '
          'command (s) |')
    print('|---|---|---|---|---|---|')
    print('\n'.join(breakdowns))
    if json_file:
        import json

        with open(json_file, 'w', encoding='utf-8') as f:
            json.dump({'runs': runs, 'load': [min(loads), max(loads)], 'results': results}, f)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--package', action='append',
                        help='the suite (default attrs==26.1.0); repeat it with --gate; '
                             '"small": 12 synthetic tests and 4 properties (the fixed cost)')
    parser.add_argument('--runs', type=int, default=5)
    parser.add_argument('--workdir', help='reuse this folder (the sdist is unpacked there)')
    parser.add_argument('--xdist', type=int, default=0, help='add -n N to the test command')
    parser.add_argument('--warm', action='store_true',
                        help='keep pytest\'s assertion-rewrite cache of the suite\'s tests '
                             'between runs (default: cleared before every run on both sides, '
                             'as on a fresh CI checkout)')
    parser.add_argument('--gate', action='store_true',
                        help='the whole gate as adopted (init, lock, the reference run on), '
                             'with each step\'s --timings line')
    parser.add_argument('--compare', action='append', metavar='PYTHON',
                        help='with --gate: also run the gate with this interpreter (its own '
                             'oracle-guard installed), interleaved; repeatable')
    parser.add_argument('--json', metavar='FILE',
                        help='with --gate: also write the ratios to FILE as JSON')
    args = parser.parse_args()
    args.package = args.package or ['attrs==26.1.0']
    if args.gate:
        gate(args.package, args.runs, args.warm, args.compare or [], args.json)
        return 0
    args.package = args.package[0]

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
