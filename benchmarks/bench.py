"""One command, machine-independent ratios for every speed promise of SPEC section 6.

    python benchmarks/bench.py [--suites-venv DIR] [--fixtures-mb 256 | --big] [--runs 5]

Prints, in one run:

1. every hook on a one-file commit in synthetic repositories of 2 000 and 50 000 tracked
   files, as a ratio to ``python -c pass``, and the ratio between the two sizes;
2. check-named-freezes over every test file of the real suites (the venv made by
   benchmarks/real_suites.py, or a synthetic corpus without it) as a ratio to
   ``ruff check --select PT --no-cache`` on the same files: one process, and split over
   the CPUs the way pre-commit splits a file list;
3. check-fixture-manifest --all-files over N MB of fixtures as a ratio to ``sha256sum``,
   and the peak RSS of the hook on one 1 GB fixture next to that of ``python -c pass``;
4. which of yaml, jsonschema, identify and hypothesis each hook module imports, at import
   and during the one-file commit.

Commands are interleaved (A B A B ...) and the median of ``--runs`` runs is used, so other
load on the machine hits both sides of a ratio alike. Everything is written in a
temporary folder; nothing is downloaded. No target is asserted: the numbers are printed.
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
HOOKS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'hooks')
LAZY = ('yaml', 'jsonschema', 'identify', 'hypothesis')
PYPROJECT = '[tool.oracle-guard]\nsrc = ["src/"]\ntests = ["tests/"]\n'
GIT_ENV = {
    'GIT_AUTHOR_NAME': 'bench', 'GIT_AUTHOR_EMAIL': 'bench@example.invalid',
    'GIT_COMMITTER_NAME': 'bench', 'GIT_COMMITTER_EMAIL': 'bench@example.invalid',
}


def module_of(hook: str) -> str:
    return 'oracle_guard.' + hook.replace('-', '_')


def available_hooks() -> list[str]:
    return [h for h in HOOKS
            if os.path.exists(os.path.join(HOOKS_DIR, *module_of(h).split('.')) + '.py')]


def hook_command(hook: str) -> list[str]:
    script = shutil.which(f'oracle-guard-{hook}')
    if script:
        return [script]
    return [sys.executable, '-c', f'import sys; from {module_of(hook)} import main; '
                                  'sys.exit(main())']


# -- timing ----------------------------------------------------------------------------------
def run_once(argv: list[str], cwd: str, stdin: int | None = None) -> tuple[float, int, int]:
    """Wall seconds, exit code and peak RSS (KiB) of one child process."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                            env={**os.environ, **GIT_ENV})
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    return elapsed, proc.returncode, usage.ru_maxrss


def run_parallel(argvs: list[list[str]], cwd: str) -> tuple[float, int, int]:
    started = time.perf_counter()
    procs = [subprocess.Popen(a, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              stdin=subprocess.DEVNULL) for a in argvs]
    codes = [p.wait() for p in procs]
    return time.perf_counter() - started, max(codes), 0


def interleaved(commands: dict[str, object], cwd: str, runs: int) -> dict[str, dict]:
    """Run each command ``runs`` times, round-robin; median seconds, exit code, max RSS."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    result: dict[str, dict] = {}
    for _ in range(runs):
        for name, argv in commands.items():
            if isinstance(argv, tuple):  # a group of processes run side by side
                elapsed, code, rss = run_parallel(list(argv), cwd)
            else:
                elapsed, code, rss = run_once(argv, cwd)  # type: ignore[arg-type]
            times[name].append(elapsed)
            entry = result.setdefault(name, {'rc': code, 'rss_kib': 0})
            entry['rss_kib'] = max(entry['rss_kib'], rss)
    for name, values in times.items():
        result[name]['median'] = statistics.median(values)
    return result


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
    git('commit', '-q', '-m', 'base', cwd=root)
    # The one-file change: a test file edited and staged, as `git commit` would see it.
    changed = 'tests/unit0/test_mod_0.py'
    with open(os.path.join(root, changed), 'ab') as f:
        f.write(b'\n\ndef test_f_0_again():\n    assert f_0(2) == 2\n')
    git('add', changed, cwd=root)
    return changed


def one_file_commit(tmp: str, runs: int) -> list[str]:
    hooks = available_hooks()
    lines = ['## one-file commit (staged test file), median of %d interleaved runs' % runs, '']
    results = {}
    for size in (2000, 50000):
        root = os.path.join(tmp, f'repo{size}')
        t0 = time.perf_counter()
        changed = build_repo(root, size)
        built = time.perf_counter() - t0
        commands: dict[str, object] = {'python -c pass': [sys.executable, '-c', 'pass']}
        for hook in hooks:
            args = [changed] if hook == 'check-named-freezes' else []
            commands[hook] = [*hook_command(hook), *args]
        results[size] = interleaved(commands, root, runs)
        lines.append(f'(repo of {size} tracked files built in {built:.1f}s)')
    base2, base50 = results[2000]['python -c pass']['median'], results[50000]['python -c pass']['median']
    lines += ['', '| hook | exit | 2 000 files: × start-up | 50 000 files: × start-up | '
              '50k / 2k |', '|---|---|---|---|---|',
              f'| `python -c pass` | 0 | 1.00 ({base2 * 1000:.0f} ms) | 1.00 '
              f'({base50 * 1000:.0f} ms) | 1.00 |']
    for hook in hooks:
        a, b = results[2000][hook], results[50000][hook]
        # Sizes are compared through their start-up ratios: each size is measured in its
        # own interleaved round, so load that changes between the rounds cancels out.
        lines.append(f'| {hook} | {a["rc"]}/{b["rc"]} | {a["median"] / base2:.2f} | '
                     f'{b["median"] / base50:.2f} | '
                     f'{(b["median"] / base50) / (a["median"] / base2):.2f} |')
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


def scanning(tmp: str, venv: str | None, runs: int) -> list[str]:
    root = os.path.join(tmp, 'scan')
    os.makedirs(root)
    git('init', '-q', cwd=root)
    write(root, 'pyproject.toml', PYPROJECT.encode())
    label, site, sources = suite_files(venv)
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
    hook = hook_command('check-named-freezes')
    chunks = [paths[i::cpus] for i in range(cpus)]
    commands: dict[str, object] = {
        'ruff': ['ruff', 'check', '--select', 'PT', '--no-cache', '--exit-zero', '-q', *paths],
        'hook, 1 process': [*hook, *paths],
        f'hook, {cpus} processes': tuple([*hook, *c] for c in chunks),
    }
    result = interleaved(commands, root, runs)
    ruff = result['ruff']['median']
    lines = [f'## check-named-freezes vs `ruff check --select PT --no-cache`: {label}',
             f'{len(paths)} files, {size / 1e6:.1f} MB, median of {runs} interleaved runs', '',
             '| command | exit | seconds | × ruff |', '|---|---|---|---|']
    for name, entry in result.items():
        lines.append(f'| {name} | {entry["rc"]} | {entry["median"]:.2f} | '
                     f'{entry["median"] / ruff:.2f} |')
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


def hashing(tmp: str, total_mb: int, runs: int) -> list[str]:
    root = os.path.join(tmp, 'fixtures')
    paths = fixture_repo(root, total_mb, min(64, total_mb))
    hook = hook_command('check-fixture-manifest')
    floor = ('import hashlib, sys\nfor p in sys.argv[1:]:\n    h = hashlib.sha256()\n'
             '    with open(p, "rb") as f:\n        while b := f.read(1 << 20):\n'
             '            h.update(b)\n')
    result = interleaved({'sha256sum': ['sha256sum', *paths],
                          'python hashlib loop (the floor)': [sys.executable, '-c', floor, *paths],
                          'check-fixture-manifest --all-files': [*hook, '--all-files']},
                         root, runs)
    base = result['sha256sum']['median']
    lines = [f'## check-fixture-manifest --all-files vs sha256sum: {len(paths)} fixtures, '
             f'{total_mb} MB, median of {runs} interleaved runs', '',
             '| command | exit | seconds | × sha256sum |', '|---|---|---|---|']
    for name, entry in result.items():
        lines.append(f'| {name} | {entry["rc"]} | {entry["median"]:.2f} | '
                     f'{entry["median"] / base:.2f} |')
    shutil.rmtree(root)
    big = os.path.join(tmp, 'one-gb')
    fixture_repo(big, 1024, 1024)
    rss = interleaved({'python -c pass': [sys.executable, '-c', 'pass'],
                       'check-fixture-manifest --all-files': [*hook, '--all-files']}, big, 1)
    lines += ['', 'peak RSS on one 1 GB fixture: '
              f'hook {rss["check-fixture-manifest --all-files"]["rss_kib"] / 1024:.0f} MiB '
              f'(exit {rss["check-fixture-manifest --all-files"]["rc"]}), '
              f'`python -c pass` {rss["python -c pass"]["rss_kib"] / 1024:.0f} MiB']
    shutil.rmtree(big)
    return lines


# -- imports ---------------------------------------------------------------------------------
def imported(argv: list[str], cwd: str) -> set[str]:
    proc = subprocess.run([sys.executable, '-X', 'importtime', *argv], cwd=cwd,
                          capture_output=True, text=True, check=False)
    found = set()
    for line in proc.stderr.splitlines():
        if line.startswith('import time:') and '|' in line:
            name = line.rsplit('|', 1)[1].strip().split('.')[0]
            if name in LAZY:
                found.add(name)
    return found


def imports(tmp: str) -> list[str]:
    root = os.path.join(tmp, 'repo2000')
    lines = ['## heavy imports (`python -X importtime`)', '',
             '| hook module | at import | during the one-file commit |', '|---|---|---|']
    for hook in available_hooks():
        module = module_of(hook)
        at_import = imported(['-c', f'import {module}'], root)
        args = ', ["tests/unit0/test_mod_0.py"]' if hook == 'check-named-freezes' else ''
        during = imported(['-c', f'import sys; from {module} import main; '
                                 f'sys.exit(main([*sys.argv[1:]{args}]))'], root)
        lines.append(f'| {module} | {", ".join(sorted(at_import)) or "none"} | '
                     f'{", ".join(sorted(during)) or "none"} |')
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--suites-venv', help='venv made by benchmarks/real_suites.py --venv')
    parser.add_argument('--fixtures-mb', type=int, default=256)
    parser.add_argument('--big', action='store_true', help='2 GB of fixtures')
    parser.add_argument('--runs', type=int, default=5)
    parser.add_argument('--only', nargs='+', choices=('commit', 'scan', 'hash', 'imports'))
    args = parser.parse_args(argv)
    only = set(args.only or ('commit', 'scan', 'hash', 'imports'))
    tmp = tempfile.mkdtemp(prefix='og-bench-')
    # An installed hook runs from compiled bytecode (pip and pre-commit compile at install
    # time). Where PYTHONDONTWRITEBYTECODE is set, every run would compile our modules
    # again; keep bytecode in a scratch folder instead, as an installed copy would.
    os.environ.pop('PYTHONDONTWRITEBYTECODE', None)
    os.environ['PYTHONPYCACHEPREFIX'] = os.path.join(tmp, 'pycache')
    try:
        print(f'python {sys.version.split()[0]}, {os.cpu_count()} CPUs, git '
              f'{git("--version", cwd=tmp).decode().split()[-1]}\n')
        def show(section: list[str]) -> None:
            print('\n'.join(section) + '\n', flush=True)

        if 'commit' in only or 'imports' in only:
            section = one_file_commit(tmp, args.runs)
            if 'commit' in only:
                show(section)
        if 'imports' in only:
            show(imports(tmp))
        if 'scan' in only:
            show(scanning(tmp, args.suites_venv, args.runs))
        if 'hash' in only:
            show(hashing(tmp, 2048 if args.big else args.fixtures_mb, args.runs))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
