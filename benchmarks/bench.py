"""One command, machine-independent ratios for every speed promise of the hooks.

    python benchmarks/bench.py [--venv DIR] [--suites-venv DIR] [--fixtures-mb 256 | --big]
                               [--runs 5] [--only commit scan hash imports profile gate]
                               [--gate-suites PKG ... [--gate-python PATH] [--gate-runs 3]
                                [--gate-compare PYTHON]]

Everything runs with the interpreter of a *clean* virtual environment, the kind pre-commit
builds for a hook repository: ``python -m venv``, ``pip install .`` (not editable: only
oracle-guard and its dependencies), bytecode compiled. ``--venv DIR`` reuses such an
environment (it is built there when DIR does not exist); without it one is built in the
temporary folder. Hooks are run through the console scripts pip wrote, as pre-commit runs
them, and the start-up baseline is ``python -c pass`` of the same interpreter: an
interpreter with a heavy ``site-packages`` starts slower and would hide the hooks' own cost.

Prints, in one run:

1. the interpreter, its start-up time, then every hook (and the one-process
   ``oracle-guard`` hook id) on a one-file commit in synthetic repositories of 2 000 and
   50 000 tracked files, as a ratio to ``python -c pass``, the ratio between the two
   sizes, and how many git processes each hook starts; each hook three ways: with the
   per-user caches as the runs before left them (the hooks after the first of a commit),
   as the first hook of a commit (the staged diff not kept yet; the import closure and
   the property verdicts kept, as on a developer's later commits) and with every cache
   off (``ORACLE_GUARD_SCAN_CACHE=0``: CI; the first commit in a repository, caches empty,
   is ``benchmarks/commit_cold.py``'s);
2. check-named-freezes over real test files — the corpus of benchmarks/corpus.py with
   ``--corpus DIR`` (numpy, pandas, scipy and pytest's suites, downloaded once into DIR),
   the venv made by benchmarks/real_suites.py with ``--suites-venv``, or a synthetic
   corpus — as a ratio to ``ruff check --select PT`` on the same files: one process,
   split over the CPUs, and (corpus) ``pre-commit run --all-files`` itself, cold (against
   ``ruff --no-cache`` and against the floor, CPython's ``ast.parse`` of every file in one
   process) and with the scan cache warm (against ruff with its cache warm);
3. check-fixture-manifest --all-files over N MB of fixtures as a ratio to ``sha256sum``,
   and the peak RSS of the hook on one 1 GB fixture next to that of ``python -c pass``;
4. which of yaml, jsonschema, identify and hypothesis each hook module imports, at import
   and during the one-file commit;
5. (``--only profile``) per hook, the self time ``python -X importtime`` charges to each
   module imported during the one-file commit, summed, with the costliest ones named;
6. the whole gate (``oracle-guard ci``, reference run on) against the bare test command on
   a small synthetic suite (12 tests, 4 properties: the fixed cost) and, with
   ``--gate-suites attrs==26.1.0 more-itertools==11.2.1 boltons==26.2.0``, on those real
   suites, by ``benchmarks/ci_overhead.py --gate`` run with ``--gate-python`` (an
   interpreter with oracle-guard, pytest, Hypothesis and the suites' test dependencies;
   default: this one), CPU and wall, ``--gate-runs`` interleaved rounds (minutes).

Commands are interleaved (A B A B ...) and the median of ``--runs`` runs is used, so other
load on the machine hits both sides of a ratio alike. Everything is written in a
temporary folder (the corpus in its own cache folder). Last, one table holds every row
of the speed targets measured in this run against its target. No target is asserted: the numbers
are printed.
"""
from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HOOKS = (
    'check-fixture-manifest', 'forbid-mixed-oracle-diff', 'check-named-freezes',
    'check-properties-present', 'check-freeze-ledger', 'check-generator-lock',
)
# The optional hook id that runs the six in one process (its console script's name).
EVERY_HOOK = 'every-hook'
# Each hook is measured three ways (bench.py one_file_commit): with the per-user caches as
# the runs before left them, as the first hook of a commit, with every cache off.
FIRST = ' (first of a commit)'
OFF = ' (caches off)'
VARIANTS = ('', FIRST, OFF)
COMMIT_HOOKS = (*HOOKS, EVERY_HOOK)
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAZY = ('yaml', 'jsonschema', 'identify', 'hypothesis')
PYPROJECT = '[tool.oracle-guard]\nsrc = ["src/"]\ntests = ["tests/"]\n'
GIT_ENV = {
    'GIT_AUTHOR_NAME': 'bench', 'GIT_AUTHOR_EMAIL': 'bench@example.invalid',
    'GIT_COMMITTER_NAME': 'bench', 'GIT_COMMITTER_EMAIL': 'bench@example.invalid',
}


def module_of(hook: str) -> str:
    return 'oracle_guard.hooks.' + hook.replace('-', '_')


# The floor of a scan over many files: CPython's own parse of each, in one process.
FLOOR = 'ast.parse, 1 process (the floor)'
PARSE_EACH = ('import ast, sys\nfor p in sys.argv[1:]:\n    with open(p, "rb") as f:\n'
              '        try:\n            ast.parse(f.read(), p)\n'
              '        except (SyntaxError, ValueError):\n            pass\n')
SUMMARY: list[tuple[str, str, str, str]] = []  # (what, measured, target, met)


def summarise(what: str, measured: float, target: float, unit: str = '×') -> None:
    SUMMARY.append((what, f'{measured:.2f}{unit}', f'≤ {target}{unit}',
                    'met' if measured <= target else '**not met**'))


# -- the clean interpreter -------------------------------------------------------------------
class CleanVenv:
    """A virtual environment holding only oracle-guard and its dependencies."""

    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(path)
        self.bin = os.path.join(self.path, 'bin')
        self.python = os.path.join(self.bin, 'python')
        # Nothing of the calling shell may reach the child interpreters: PYTHONPATH would
        # add imports, PYTHONPYCACHEPREFIX or PYTHONDONTWRITEBYTECODE would bypass the
        # compiled bytecode an installed copy runs from.
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith('PYTHON') and k != 'VIRTUAL_ENV'}
        self.env.update(GIT_ENV)
        self.env['PATH'] = self.bin + os.pathsep + os.environ.get('PATH', '')

    @classmethod
    def ensure(cls, path: str) -> CleanVenv:
        venv = cls(path)
        if not os.path.exists(venv.python):
            print(f'building a clean virtual environment in {venv.path} ...', flush=True)
            subprocess.run([sys.executable, '-m', 'venv', venv.path], check=True)
            # What pre-commit does for a hook repository: a plain (non-editable) install.
            subprocess.run([venv.python, '-m', 'pip', 'install', '-q', REPO], check=True,
                           env=venv.env)
        # pip compiles what it installs; compile again so a venv built by hand is too.
        subprocess.run([venv.python, '-m', 'compileall', '-q', venv.path], check=True,
                       stdout=subprocess.DEVNULL, env=venv.env)
        return venv

    def script(self, hook: str) -> list[str]:
        return [os.path.join(self.bin, f'oracle-guard-{hook}')]

    def hooks(self) -> list[str]:
        """The hooks of COMMIT_HOOKS this installed version has (an older one may lack
        the one-process hook)."""
        return [h for h in COMMIT_HOOKS if os.path.exists(self.script(h)[0])]


    def packages(self) -> str:
        out = subprocess.run([self.python, '-m', 'pip', 'list', '--format', 'freeze'],
                             capture_output=True, text=True, env=self.env).stdout
        return ', '.join(line for line in out.split() if line)


def find_ruff(tmp: str) -> str | None:
    """ruff from PATH, or installed in a scratch venv of its own (never in the clean one)."""
    found = shutil.which('ruff')
    if found:
        return found
    peers = os.path.join(tmp, 'peers')
    try:
        subprocess.run([sys.executable, '-m', 'venv', peers], check=True)
        subprocess.run([os.path.join(peers, 'bin', 'python'), '-m', 'pip', 'install', '-q',
                        'ruff'], check=True)
    except subprocess.CalledProcessError:
        return None
    return os.path.join(peers, 'bin', 'ruff')


# -- timing ----------------------------------------------------------------------------------
def run_once(argv: list[str], cwd: str, env: dict[str, str]) -> tuple[float, int, int, float]:
    """Wall seconds, exit code, peak RSS (KiB) and CPU seconds (user + system, its git
    processes included: they are waited for) of one child process."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    return elapsed, proc.returncode, usage.ru_maxrss, usage.ru_utime + usage.ru_stime


def run_parallel(argvs: list[list[str]], cwd: str, env: dict[str, str]
                 ) -> tuple[float, int, int, float]:
    started = time.perf_counter()
    procs = [subprocess.Popen(a, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              stdin=subprocess.DEVNULL, env=env) for a in argvs]
    codes = [p.wait() for p in procs]
    return time.perf_counter() - started, max(codes), 0, 0.0


def interleaved(commands: dict[str, object], cwd: str, runs: int, env: dict[str, str]
                ) -> dict[str, dict]:
    """Run each command ``runs`` times, round-robin; median wall and CPU seconds, exit
    code, max RSS. On a busy machine wall time waits for other processes; CPU time less."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    result: dict[str, dict] = {}
    for _ in range(runs):
        for name, argv in commands.items():
            if isinstance(argv, tuple):  # a group of processes run side by side
                elapsed, code, rss, seconds = run_parallel(list(argv), cwd, env)
            elif isinstance(argv, dict):  # {'argv': [...], 'env': {...}, 'before': callable}
                if argv.get('before'):
                    argv['before']()  # not timed
                elapsed, code, rss, seconds = run_once(argv['argv'], cwd,
                                                       {**env, **argv.get('env', {})})
            else:
                elapsed, code, rss, seconds = run_once(argv, cwd, env)  # type: ignore[arg-type]
            times[name].append(elapsed)
            cpu[name].append(seconds)
            entry = result.setdefault(name, {'rc': code, 'rss_kib': 0})
            entry['rss_kib'] = max(entry['rss_kib'], rss)
    for name, values in times.items():
        result[name]['median'] = statistics.median(values)
        result[name]['cpu'] = statistics.median(cpu[name])
    return result


def git_processes(argv: list[str], cwd: str, venv: CleanVenv, tmp: str,
                  base_env: dict[str, str] | None = None) -> int:
    """How many git processes one run of ``argv`` starts (a counting ``git`` on PATH)."""
    shim = os.path.join(tmp, 'git-shim')
    log = os.path.join(tmp, 'git-calls.log')
    real = shutil.which('git')
    if not os.path.exists(shim):
        os.makedirs(shim)
        with open(os.path.join(shim, 'git'), 'w') as f:
            f.write(f'#!/bin/sh\necho x >> "$OG_BENCH_GIT_LOG"\nexec {real} "$@"\n')
        os.chmod(os.path.join(shim, 'git'), 0o755)
    if os.path.exists(log):
        os.remove(log)
    env = {**(base_env or venv.env), 'OG_BENCH_GIT_LOG': log,
           'PATH': shim + os.pathsep + venv.env['PATH']}
    subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, check=False)
    if not os.path.exists(log):
        return 0
    with open(log) as f:
        return len(f.read().split())


# -- synthetic repositories ------------------------------------------------------------------
def git(*args: str, cwd: str, stdin: bytes | None = None) -> bytes:
    return subprocess.run(('git', *args), cwd=cwd, input=stdin, check=True,
                          capture_output=True, env={**os.environ, **GIT_ENV}).stdout


def write(root: str, path: str, data: bytes) -> None:
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, 'wb') as f:
        f.write(data)


def build_repo(root: str, tracked: int) -> str:
    """A repository with ``tracked`` files: 80% src, 10% tests, 10% manifested fixtures."""
    os.makedirs(root)
    git('init', '-q', cwd=root)
    n_fix = tracked // 10
    n_tests = tracked // 10
    n_src = tracked - n_fix - n_tests - 6
    rows = {}
    for i in range(n_src):
        write(root, f'src/pkg{i // 500}/mod_{i}.py', f'def f_{i}(x):\n    return x + {i}\n'.encode())
    for i in range(n_tests):
        write(root, f'tests/unit{i // 500}/test_mod_{i}.py',
              f'from pkg.mod_{i} import f_{i}\n\n\ndef test_f_{i}():\n'
              f'    assert f_{i}(1) == {i + 1}\n'.encode())
    for i in range(n_fix):
        data = f'{{"case": {i}}}\n'.encode()
        rel = f'set{i // 500}/case_{i}.json'
        write(root, f'tests/fixtures/{rel}', data)
        rows[rel] = {'sha256': hashlib.sha256(data).hexdigest(), 'source': 'human',
                     'purpose': f'case {i}'}
    write(root, 'tests/fixtures/manifest.json',
          json.dumps({'version': 1, 'fixtures': rows}, indent=1).encode())
    write(root, 'tests/fixtures/traces.txt', b'# no recorded traces\n')
    write(root, 'tests/freeze_ledger.yaml', b'budget: 0\nfreezes: []\n')
    write(root, 'tests/domain_lock.json', b'{"version": 1, "properties": {}}\n')
    write(root, 'tests/properties/test_roundtrip.py',
          b'def test_roundtrip():\n    assert int(str(7)) == 7\n')
    write(root, 'pyproject.toml', PYPROJECT.encode())
    git('add', '-A', cwd=root)
    # Packed now, as a developer's repository is: otherwise git's automatic gc packs it in
    # the background while the first runs are measured (a grep of loose objects costs 5-10x).
    git('-c', 'gc.auto=0', 'commit', '-q', '-m', 'base', cwd=root)
    git('gc', '-q', cwd=root)
    # The one-file change: a test file edited and staged, as `git commit` would see it.
    changed = 'tests/unit0/test_mod_0.py'
    with open(os.path.join(root, changed), 'ab') as f:
        f.write(b'\n\ndef test_f_0_again():\n    assert f_0(2) == 2\n')
    git('add', changed, cwd=root)
    return changed


def hook_args(hook: str, changed: str) -> list[str]:
    # What pre-commit runs: every hook of .pre-commit-hooks.yaml has `pass_filenames:
    # false` (check-named-freezes too: it asks git for the staged test files itself).
    return []


def one_file_commit(tmp: str, runs: int, venv: CleanVenv) -> list[str]:
    lines = ['## one-file commit (staged test file), median of %d interleaved runs' % runs, '']
    results, git_counts = {}, {}
    for size in (2000, 50000):
        root = os.path.join(tmp, f'repo{size}')
        t0 = time.perf_counter()
        changed = build_repo(root, size)
        built = time.perf_counter() - t0
        # The per-user caches of this run start empty (the median is of the runs after
        # the first, which fills them, as a developer's later commits find them).
        cache = os.path.join(tmp, f'cache{size}')
        env = {**venv.env, 'XDG_CACHE_HOME': cache}

        def forget_the_staged_diff(cache: str = cache) -> None:
            for kept in glob.glob(os.path.join(cache, 'oracle-guard', 'staged-*')):
                os.remove(kept)

        def keep_the_staged_diff(cache: str = cache, root: str = root) -> None:
            # what an earlier hook of the same commit leaves (a version without this
            # cache keeps nothing: the hook asks git, as it always did)
            if not glob.glob(os.path.join(cache, 'oracle-guard', 'staged-*')):
                subprocess.run(venv.script('check-fixture-manifest'), cwd=root, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               check=False)

        commands: dict[str, object] = {'python -c pass': [venv.python, '-c', 'pass']}
        for hook in venv.hooks():
            argv = [*venv.script(hook), *hook_args(hook, changed)]
            commands[hook] = {'argv': argv, 'before': keep_the_staged_diff}
            # The first hook of a commit: no other hook kept the staged diff yet (the
            # import closure and the property verdicts kept, as on a later commit).
            commands[hook + FIRST] = {'argv': argv, 'before': forget_the_staged_diff}
            # Every per-user cache off: CI (a developer's first commit, with the caches
            # empty, is benchmarks/commit_cold.py's).
            commands[hook + OFF] = {'argv': argv, 'env': {'ORACLE_GUARD_SCAN_CACHE': '0'}}
        results[size] = interleaved(commands, root, runs, env)
        if size == 2000:
            for hook in venv.hooks():
                for variant in VARIANTS:
                    entry: dict = commands[hook + variant]  # type: ignore[assignment]
                    if entry.get('before'):
                        entry['before']()
                    git_counts[hook + variant] = git_processes(
                        entry['argv'], root, venv, tmp, {**env, **entry.get('env', {})})
        lines.append(f'(repo of {size} tracked files built in {built:.1f}s)')
    base2, base50 = results[2000]['python -c pass']['median'], results[50000]['python -c pass']['median']
    cpu2, cpu50 = results[2000]['python -c pass']['cpu'], results[50000]['python -c pass']['cpu']
    lines += ['', 'Wall-clock time as a multiple of `python -c pass` (ms in brackets); the last '
              'column is the same ratio in CPU time (user + system, git included), '
              'which other load on the machine disturbs less.', '',
              '| hook | exit | git processes | 2 000 files: × start-up | '
              '50 000 files: × start-up | 50k / 2k | CPU: 2k, 50k, 50k / 2k |',
              '|---|---|---|---|---|---|---|',
              f'| `python -c pass` | 0 | 0 | 1.00 ({base2 * 1000:.1f} ms) | 1.00 '
              f'({base50 * 1000:.1f} ms) | 1.00 | 1.00 ({cpu2 * 1000:.1f} ms), 1.00 '
              f'({cpu50 * 1000:.1f} ms), 1.00 |']
    worst = {variant: (0.0, '', 0.0) for variant in VARIANTS}
    for hook in venv.hooks():
        for variant in VARIANTS:
            a, b = results[2000][hook + variant], results[50000][hook + variant]
            # Sizes are compared through their start-up ratios: each size is measured in
            # its own interleaved round, so load that changes between the rounds cancels.
            ca, cb = a['cpu'] / cpu2, b['cpu'] / cpu50
            name = ('oracle-guard (all six, one process)' if hook == EVERY_HOOK else hook) + \
                variant
            lines.append(f'| {name} | {a["rc"]}/{b["rc"]} | {git_counts[hook + variant]} | '
                         f'{a["median"] / base2:.2f} ({a["median"] * 1000:.0f} ms) | '
                         f'{b["median"] / base50:.2f} ({b["median"] * 1000:.0f} ms) | '
                         f'{(b["median"] / base50) / (a["median"] / base2):.2f} | '
                         f'{ca:.2f}, {cb:.2f}, {cb / ca:.2f} |')
            if hook != EVERY_HOOK and ca > worst[variant][0]:
                worst[variant] = (ca, hook, worst[variant][2])
            if hook != EVERY_HOOK and cb / ca > worst[variant][2]:
                worst[variant] = (*worst[variant][:2], cb / ca)
    six = sum(results[2000][h]['cpu'] for h in HOOKS) / cpu2
    one = results[2000][EVERY_HOOK]['cpu'] / cpu2 if EVERY_HOOK in results[2000] else None
    lines += ['', f'The six hooks one after the other: {six:.2f}× start-up (CPU, 2 000 files); '
                  + (f'the `oracle-guard` hook id: {one:.2f}×.' if one else
                     'this version has no `oracle-guard` hook id.')]
    for variant, what in (('', 'the hooks after the first of a commit'),
                          (FIRST, 'the first hook of a commit'),
                          (OFF, 'every cache off: CI')):
        ca, hook, ratio = worst[variant]
        summarise(f'one-file commit, worst hook ({hook}) vs `python -c pass` (CPU; {what})',
                  ca, 2.5)
        summarise(f'the same commit, 50 000 vs 2 000 files (worst hook\'s ratio; {what})',
                  ratio, 1.2)
    return lines


# -- scanning --------------------------------------------------------------------------------
def suite_files(venv: str | None) -> tuple[str, str, list[str]]:
    if venv:
        site = glob.glob(os.path.join(venv, 'lib', 'python3*', 'site-packages'))
        if site:
            files = []
            for package in ('numpy', 'pandas', 'scipy'):
                for folder, dirs, names in os.walk(os.path.join(site[0], package)):
                    dirs.sort()
                    if 'tests' in os.path.relpath(folder, site[0]).split(os.sep):
                        files.extend(os.path.join(folder, n) for n in sorted(names)
                                     if n.endswith('.py'))
            if files:
                return f'real suites in {venv}', site[0], files
    return 'synthetic corpus (no --suites-venv)', '', []


def synthetic_corpus(root: str, count: int = 1500) -> list[str]:
    paths = []
    for i in range(count):
        body = [f'import pytest\n\n\nclass TestCase{i}:\n']
        for j in range(40):
            deco = '    @pytest.mark.skipif(True, reason="FZ-1")\n' if j % 10 == 0 else ''
            body.append(f'{deco}    def test_{j}(self):\n        assert {j} + 1 > {j}\n\n')
        if i % 2:  # half the files name no silence at all: the prefilter's work
            body = [b.replace('@pytest.mark.skipif(True, reason="FZ-1")', '@pytest.fixture')
                    for b in body]
        path = f'tests/gen/test_gen_{i}.py'
        write(root, path, ''.join(body).encode())
        paths.append(path)
    return paths


def scanning(tmp: str, suites: str | None, runs: int, venv: CleanVenv,
             corpus_cache: str | None = None) -> list[str]:
    if corpus_cache and not suites:
        return corpus_scanning(tmp, corpus_cache, runs, venv)
    root = os.path.join(tmp, 'scan')
    os.makedirs(root)
    git('init', '-q', cwd=root)
    write(root, 'pyproject.toml', PYPROJECT.encode())
    label, site, sources = suite_files(suites)
    if sources:
        paths = []
        for src in sources:
            path = 'tests/' + os.path.relpath(src, site).replace(os.sep, '/')
            with open(src, 'rb') as f:
                write(root, path, f.read())
            paths.append(path)
    else:
        paths = synthetic_corpus(root)
    size = sum(os.path.getsize(os.path.join(root, p)) for p in paths)
    cpus = os.cpu_count() or 1
    hook = venv.script('check-named-freezes')
    chunks = [paths[i::cpus] for i in range(cpus)]
    ruff_exe = find_ruff(tmp)
    if ruff_exe is None:
        return ['## check-named-freezes vs ruff: ruff could not be found or installed']
    commands: dict[str, object] = {
        'ruff': [ruff_exe, 'check', '--select', 'PT', '--no-cache', '--exit-zero', '-q',
                 *paths],
        'hook, 1 process': [*hook, *paths],
        f'hook, {cpus} processes': tuple([*hook, *c] for c in chunks),
    }
    result = interleaved(commands, root, runs, venv.env)
    ruff = result['ruff']['median']
    lines = [f'## check-named-freezes vs `ruff check --select PT --no-cache`: {label}',
             f'{len(paths)} files, {size / 1e6:.1f} MB, median of {runs} interleaved runs', '',
             '| command | exit | seconds | × ruff |', '|---|---|---|---|']
    for name, entry in result.items():
        lines.append(f'| {name} | {entry["rc"]} | {entry["median"]:.2f} | '
                     f'{entry["median"] / ruff:.2f} |')
    return lines


def corpus_scanning(tmp: str, cache: str, runs: int, venv: CleanVenv) -> list[str]:
    """check-named-freezes over the corpus of benchmarks/corpus.py, in its own repository,
    against ruff's PT rules on the same files: cold (no cache on either side: ``ruff
    --no-cache``, the scan cache off) and warm (both caches filled by one run first: a
    developer's second run). The hook runs as one process, and as ``pre-commit run
    --all-files`` with two ``repo: local`` definitions whose entry is the clean venv's
    console script: with file names, so pre-commit splits them over the CPUs (one process
    each, each paying the imports), and as the shipped manifest has it
    (``pass_filenames: false``, ``require_serial``: one process that asks git)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import corpus

    root, paths = corpus.ensure_corpus(cache)
    size = sum(os.path.getsize(os.path.join(root, p)) for p in paths)
    ruff_exe = find_ruff(tmp)
    if ruff_exe is None:
        return ['## check-named-freezes vs ruff: ruff could not be found or installed']
    hook = venv.script('check-named-freezes')
    configs = {}
    for name, options in (('split', '    types: [python]\n'),
                          ('shipped', '    pass_filenames: false\n    always_run: true\n'
                                      '    require_serial: true\n')):
        configs[name] = os.path.join(tmp, f'corpus-pre-commit-{name}.yaml')
        with open(configs[name], 'w') as f:
            f.write('repos:\n- repo: local\n  hooks:\n  - id: check-named-freezes\n'
                    '    name: check-named-freezes\n'
                    f'    entry: {hook[0]}\n    language: system\n{options}')
    env = {**venv.env, 'PRE_COMMIT_HOME': os.path.join(tmp, 'pre-commit-home'),
           'ORACLE_GUARD_SCAN_CACHE': '0', 'XDG_CACHE_HOME': os.path.join(tmp, 'xdg')}
    ruff_args = ['check', '--select', 'PT', '--exit-zero', '-q']
    split = 'pre-commit run check-named-freezes --all-files'
    shipped = f'{split} (as shipped: the hook lists its files, one process a core)'
    commands: dict[str, object] = {
        FLOOR: [venv.python, '-c', PARSE_EACH, *paths],
        'ruff': [ruff_exe, *ruff_args, '--no-cache', *paths],
        'hook, 1 process': {'argv': [*hook, '--all-files'],
                            'env': {'ORACLE_GUARD_SCAN_PROCESSES': '1'}},
        'hook, every core': [*hook, '--all-files'],
    }
    has_pre_commit = subprocess.run([sys.executable, '-m', 'pre_commit', '--version'],
                                    capture_output=True).returncode == 0
    if has_pre_commit:
        for name, config in ((split, configs['split']), (shipped, configs['shipped'])):
            commands[name] = [sys.executable, '-m', 'pre_commit', 'run', '--config', config,
                              '--all-files']
    result = interleaved(commands, root, runs, env)
    # Warm: ruff's cache and the scan cache of a developer's machine, each filled by one run.
    cached = {**env, 'ORACLE_GUARD_SCAN_CACHE': '1'}
    warm: dict[str, object] = {
        'ruff, cache warm': [ruff_exe, *ruff_args, '--cache-dir',
                             os.path.join(tmp, 'ruff-cache'), *paths],
        'hook, scan cache warm': commands['hook, every core'],
    }
    if has_pre_commit:
        warm[f'{split}, scan cache warm'] = commands[split]
        warm[f'{shipped}, scan cache warm'] = commands[shipped]
    for argv in warm.values():
        run_once(argv, root, cached)  # type: ignore[arg-type]
    run_once([*hook, '--all-files'], root, cached)  # the scan cache filled
    result.update(interleaved(warm, root, runs, cached))
    floor = result[FLOOR]
    lines = [f'## check-named-freezes vs CPython\'s `ast.parse` and `ruff check --select PT`: '
             f'{len(paths)} test files of numpy, pandas, scipy and pytest ({size / 1e6:.1f} MB, '
             f'benchmarks/corpus.py), median of {runs} interleaved runs; cold rows against '
             '`ruff --no-cache`, warm rows against ruff with its cache warm; the floor is '
             '`ast.parse` of every file in one process of the same interpreter', '',
             '| command | exit | seconds (wall) | × floor | × ruff | CPU seconds | CPU × floor '
             '| CPU × ruff |', '|---|---|---|---|---|---|---|---|']
    for name, entry in result.items():
        peer = result['ruff, cache warm' if 'warm' in name else 'ruff']
        lines.append(f'| {name} | {entry["rc"]} | {entry["median"]:.2f} | '
                     f'{entry["median"] / floor["median"]:.2f} | '
                     f'{entry["median"] / peer["median"]:.2f} | {entry["cpu"]:.2f} | '
                     f'{entry["cpu"] / floor["cpu"]:.2f} | {entry["cpu"] / peer["cpu"]:.2f} |')
    row = shipped if has_pre_commit else 'hook, every core'
    cold = result[row]
    summarise(f'corpus scan cold, `{row}` vs `ast.parse` in one process (wall, '
              f'{os.cpu_count()} CPUs)', cold['median'] / floor['median'], 0.8)
    summarise(f'corpus scan cold, `{row}` vs `ast.parse` in one process (CPU)',
              cold['cpu'] / floor['cpu'], 1.2)
    hot = result[f'{row}, scan cache warm' if has_pre_commit else 'hook, scan cache warm']
    peer = result['ruff, cache warm']
    summarise(f'corpus scan, scan cache warm, `{row}` vs ruff with its cache warm (wall)',
              hot['median'] / peer['median'], 1.0)
    summarise(f'corpus scan, scan cache warm, `{row}` vs ruff with its cache warm (CPU)',
              hot['cpu'] / peer['cpu'], 1.0)
    return lines


# -- hashing ---------------------------------------------------------------------------------
def fixture_repo(root: str, total_mb: int, file_mb: int) -> list[str]:
    os.makedirs(root)
    git('init', '-q', cwd=root)
    write(root, 'pyproject.toml', PYPROJECT.encode())
    rows, paths = {}, []
    block = os.urandom(1 << 20)
    for i in range(max(1, total_mb // file_mb)):
        rel = f'blob_{i}.bin'
        digest = hashlib.sha256()
        os.makedirs(os.path.join(root, 'tests/fixtures'), exist_ok=True)
        with open(os.path.join(root, 'tests/fixtures', rel), 'wb') as f:
            for j in range(file_mb):
                chunk = block[j % 7:] + block[:j % 7] if j else block
                chunk = bytes([i % 256]) + chunk[1:]
                f.write(chunk)
                digest.update(chunk)
        rows[rel] = {'sha256': digest.hexdigest(), 'source': 'human', 'purpose': f'blob {i}'}
        paths.append(f'tests/fixtures/{rel}')
    write(root, 'tests/fixtures/manifest.json',
          json.dumps({'version': 1, 'fixtures': rows}, indent=1).encode())
    git('add', '-A', cwd=root)
    git('commit', '-q', '-m', 'fixtures', cwd=root)
    return paths


def hashing(tmp: str, total_mb: int, runs: int, venv: CleanVenv) -> list[str]:
    root = os.path.join(tmp, 'fixtures')
    paths = fixture_repo(root, total_mb, min(64, total_mb))
    hook = venv.script('check-fixture-manifest')
    floor = ('import hashlib, sys\nfor p in sys.argv[1:]:\n    h = hashlib.sha256()\n'
             '    with open(p, "rb") as f:\n        while b := f.read(1 << 20):\n'
             '            h.update(b)\n')
    result = interleaved({'sha256sum': ['sha256sum', *paths],
                          'python hashlib loop (the floor)': [venv.python, '-c', floor, *paths],
                          'check-fixture-manifest --all-files': [*hook, '--all-files']},
                         root, runs, venv.env)
    base = result['sha256sum']['median']
    summarise('check-fixture-manifest --all-files vs sha256sum (wall)',
              result['check-fixture-manifest --all-files']['median'] / base, 1.2)
    lines = [f'## check-fixture-manifest --all-files vs sha256sum: {len(paths)} fixtures, '
             f'{total_mb} MB, median of {runs} interleaved runs', '',
             '| command | exit | seconds | × sha256sum |', '|---|---|---|---|']
    for name, entry in result.items():
        lines.append(f'| {name} | {entry["rc"]} | {entry["median"]:.2f} | '
                     f'{entry["median"] / base:.2f} |')
    shutil.rmtree(root)
    big = os.path.join(tmp, 'one-gb')
    fixture_repo(big, 1024, 1024)
    rss = interleaved({'python -c pass': [venv.python, '-c', 'pass'],
                       'check-fixture-manifest --all-files': [*hook, '--all-files']}, big, 1,
                      venv.env)
    lines += ['', 'peak RSS on one 1 GB fixture: '
              f'hook {rss["check-fixture-manifest --all-files"]["rss_kib"] / 1024:.0f} MiB '
              f'(exit {rss["check-fixture-manifest --all-files"]["rc"]}), '
              f'`python -c pass` {rss["python -c pass"]["rss_kib"] / 1024:.0f} MiB']
    shutil.rmtree(big)
    return lines


# -- imports ---------------------------------------------------------------------------------
def importtime(argv: list[str], cwd: str, venv: CleanVenv) -> list[tuple[str, int, int]]:
    """(module, self µs, cumulative µs) for every import of one run, in import order."""
    proc = subprocess.run([venv.python, '-X', 'importtime', *argv], cwd=cwd, env=venv.env,
                          capture_output=True, text=True, check=False)
    rows = []
    for line in proc.stderr.splitlines():
        if line.startswith('import time:') and '|' in line and 'self [us]' not in line:
            own, cumulative, name = line[len('import time:'):].split('|')
            rows.append((name.strip(), int(own), int(cumulative)))
    return rows


def commit_run(hook: str, changed: str) -> list[str]:
    """What the console script does, as a ``-c`` program, so ``-X importtime`` sees it all."""
    args = f', {hook_args(hook, changed)!r}' if hook_args(hook, changed) else ''
    return ['-c', f'import sys; from {module_of(hook)} import main; '
                  f'sys.exit(main([*sys.argv[1:]{args}]))']


def imports(tmp: str, venv: CleanVenv) -> list[str]:
    root = os.path.join(tmp, 'repo2000')
    changed = 'tests/unit0/test_mod_0.py'
    lines = ['## heavy imports (`python -X importtime`)', '',
             '| hook module | at import | during the one-file commit |', '|---|---|---|']
    for hook in HOOKS:
        module = module_of(hook)
        at_import = {n.split('.')[0] for n, _, _ in
                     importtime(['-c', f'import {module}'], root, venv)} & set(LAZY)
        during = {n.split('.')[0] for n, _, _ in
                  importtime(commit_run(hook, changed), root, venv)} & set(LAZY)
        lines.append(f'| {module} | {", ".join(sorted(at_import)) or "none"} | '
                     f'{", ".join(sorted(during)) or "none"} |')
    return lines


def profile(tmp: str, venv: CleanVenv, runs: int) -> list[str]:
    """Import cost of each hook's one-file commit, beyond what ``python -c pass`` imports."""
    root = os.path.join(tmp, 'repo2000')
    changed = 'tests/unit0/test_mod_0.py'
    startup = {n for n, _, _ in importtime(['-c', 'pass'], root, venv)}
    lines = ['## import profile of the one-file commit (`python -X importtime`, '
             f'self time, median of {runs} runs)', '',
             '| hook | modules imported | import ms | costliest (self ms) |', '|---|---|---|---|']
    for hook in HOOKS:
        per_module: dict[str, list[int]] = {}
        for _ in range(runs):
            for name, own, _cumulative in importtime(commit_run(hook, changed), root, venv):
                if name not in startup:
                    per_module.setdefault(name, []).append(own)
        own_ms = {n: statistics.median(v) / 1000 for n, v in per_module.items()}
        top = sorted(own_ms.items(), key=lambda item: -item[1])[:6]
        lines.append(f'| {hook} | {len(own_ms)} | {sum(own_ms.values()):.1f} | '
                     + ', '.join(f'{n} {ms:.1f}' for n, ms in top) + ' |')
    return lines


def gate_rows(suites: list[str], python: str, runs: int, tmp: str,
              compare: list[str] | None = None) -> list[str]:
    """The gate rows: ``ci_overhead.py --gate`` on the small suite and real suites, its tables
    shown, each suite's CPU ratio summarised (of this checkout's gate; ``compare``: other
    interpreters whose gate runs interleaved, shown in the tables only)."""
    out = os.path.join(tmp, 'gate.json')
    suites = ['small', *[s for s in suites if s != 'small']]  # the fixed cost row first
    proc = subprocess.run([python, os.path.join(REPO, 'benchmarks', 'ci_overhead.py'),
                           '--gate', *[a for s in suites for a in ('--package', s)],
                           *[a for c in compare or () for a in ('--compare', c)],
                           '--runs', str(runs), '--json', out],
                          capture_output=True, text=True)
    if proc.returncode or not os.path.isfile(out):
        return ['## oracle-guard ci vs the bare test command: did not complete', '',
                *proc.stderr.strip().splitlines()[-10:]]
    with open(out, encoding='utf-8') as f:
        measured = json.load(f)
    for result in [r for r in measured['results'] if r['gate'] == 'this']:
        package = result['package']
        if package == 'small':  # the fixed cost: what the gate adds to a one-second suite
            summarise('`oracle-guard ci` vs plain pytest, small suite (12 tests, 4 properties), '
                      'CPU', result['cpu_ratio'], 2.0)
            summarise('`oracle-guard ci` vs plain pytest, small suite, wall', result['wall_ratio'],
                      2.0)
            summarise('the gate\'s fixed cost on the small suite (its wall time beyond '
                      'pytest\'s)', result['gate_wall'] - result['bare_wall'], 1.5, ' s')
            continue
        summarise(f'`oracle-guard ci` vs the bare test command, CPU beyond the reference run, '
                  f'{package}', (result['gate_cpu'] - result.get('reference_cpu', 0.0)) /
                  result['bare_cpu'], 1.25)
        summarise(f'`oracle-guard ci` vs the bare test command, wall, {package} '
                  f'({os.cpu_count()} CPUs)', result['wall_ratio'], 1.3)
    return ['## oracle-guard ci vs the bare test command (benchmarks/ci_overhead.py --gate)',
            '', proc.stdout.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--venv', help='a clean virtual environment holding oracle-guard '
                                       '(built there if missing; default: a temporary one)')
    parser.add_argument('--suites-venv', help='venv made by benchmarks/real_suites.py --venv')
    parser.add_argument('--corpus', metavar='DIR',
                        help='the cache folder of benchmarks/corpus.py (downloaded there on '
                             'first use): scan its real test files instead of --suites-venv')
    parser.add_argument('--fixtures-mb', type=int, default=256)
    parser.add_argument('--big', action='store_true', help='2 GB of fixtures')
    parser.add_argument('--runs', type=int, default=5)
    parser.add_argument('--only', nargs='+',
                        choices=('commit', 'scan', 'hash', 'imports', 'profile', 'gate'))
    parser.add_argument('--gate-suites', nargs='+', metavar='PKG',
                        help='real suites (PyPI sdists, e.g. attrs==26.1.0) for the gate row')
    parser.add_argument('--gate-python', default=sys.executable,
                        help='interpreter for the gate row (oracle-guard, pytest, Hypothesis '
                             'and the suites\' test dependencies installed)')
    parser.add_argument('--gate-runs', type=int, default=3)
    parser.add_argument('--gate-compare', action='append', metavar='PYTHON',
                        help='also run the gate of this interpreter\'s oracle-guard (an older '
                             'checkout), interleaved, for the tables; repeatable')
    args = parser.parse_args(argv)
    only = set(args.only or ('commit', 'scan', 'hash', 'imports', 'profile', 'gate'))
    tmp = tempfile.mkdtemp(prefix='og-bench-')
    try:
        venv = CleanVenv.ensure(args.venv or os.path.join(tmp, 'clean-venv'))
        version = subprocess.run([venv.python, '-c', 'import sys; print(sys.version.split()[0])'],
                                 capture_output=True, text=True, env=venv.env).stdout.strip()
        startup = interleaved({'python -c pass': [venv.python, '-c', 'pass']}, tmp,
                              max(args.runs, 11), venv.env)['python -c pass']['median']
        print(f'interpreter: {venv.python} (python {version}), start-up `python -c pass` '
              f'{startup * 1000:.1f} ms\n'
              f'installed: {venv.packages()}\n'
              f'{os.cpu_count()} CPUs, git {git("--version", cwd=tmp).decode().split()[-1]}\n')

        def show(section: list[str]) -> None:
            print('\n'.join(section) + '\n', flush=True)

        if only & {'commit', 'imports', 'profile'}:
            section = one_file_commit(tmp, args.runs, venv)
            if 'commit' in only:
                show(section)
        if 'imports' in only:
            show(imports(tmp, venv))
        if 'profile' in only:
            show(profile(tmp, venv, args.runs))
        if 'scan' in only:
            show(scanning(tmp, args.suites_venv, args.runs, venv, args.corpus))
        if 'hash' in only:
            show(hashing(tmp, 2048 if args.big else args.fixtures_mb, args.runs, venv))
        if 'gate' in only:  # the small suite always; the real suites when named
            show(gate_rows(args.gate_suites or [], args.gate_python, args.gate_runs, tmp,
                           args.gate_compare))
        load = os.getloadavg()[0] if hasattr(os, 'getloadavg') else float('nan')
        gate_row = [] if 'gate' in only and args.gate_suites else [
            '| `oracle-guard ci` on real suites | not measured in this run: give '
            '--gate-suites (minutes each) | ≤ 1.25× CPU beyond the reference run, ≤ 1.3× '
            'wall | |']
        if 'gate' not in only:
            gate_row.insert(0, '| `oracle-guard ci`, small suite | not measured in this run '
                               '(`--only` left out gate) | ≤ 2× (fixed ≤ 1.5 s) | |')
        show(['## every target in one table (this run; load average at the end '
              f'{load:.1f} on {os.cpu_count()} CPUs)', '',
              '| what | measured | target | |', '|---|---|---|---|',
              *(f'| {w} | {m} | {t} | {ok} |' for w, m, t, ok in SUMMARY), *gate_row])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
