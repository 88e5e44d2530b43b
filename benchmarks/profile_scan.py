"""Where the time goes: the corpus scan and the one-file commit of the two slowest hooks.

    python benchmarks/profile_scan.py [--cache DIR] [--only scan commit] [--top 15]

1. **The corpus scan**: check-named-freezes over every test file of the corpus
   (``benchmarks/corpus.py``: the test suites numpy, pandas and scipy ship, and pytest's
   own), in this process, twice: once with a timer around each phase of a file's check
   (read, byte prefilters, parse, alias collection, the silence walk, the rule 35 walk,
   environment conditions, the judgement), in CPU time, so the phases add up to the run
   without profiler overhead (the scan cache off: a cold run; with ``--warm``, filled by
   a first run), once under ``cProfile``, whose costliest functions are printed.
2. **The one-file commit** of check-generator-lock and check-freeze-ledger in a
   synthetic repository of 2 000 files (``bench.build_repo``): each in a fresh
   interpreter under ``cProfile``, imports included, summarised as import time, time
   waiting for git, and the rest, with the costliest functions.

Nothing here is asserted; the figures are printed for docs/performance.md.
"""
from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import pstats
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'hooks'))

import corpus  # noqa: E402


class PhaseTimer:
    """Exclusive CPU time per phase (``time.process_time``: other processes on the machine
    do not count): a phase called inside another is not counted twice."""

    def __init__(self) -> None:
        self.totals: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self.stack: list[list[float]] = []  # [started, time of nested phases]

    def wrap(self, phase: str, function):  # type: ignore[no-untyped-def]
        def timed(*args, **kwargs):  # type: ignore[no-untyped-def]
            self.stack.append([time.process_time(), 0.0])
            try:
                return function(*args, **kwargs)
            finally:
                started, nested = self.stack.pop()
                spent = time.process_time() - started
                self.totals[phase] = self.totals.get(phase, 0.0) + spent - nested
                self.calls[phase] = self.calls.get(phase, 0) + 1
                if self.stack:
                    self.stack[-1][1] += spent
        return timed


def _patch(timer: PhaseTimer) -> list[tuple[object, str, object]]:
    """Wrap the scan's phases where check_file looks them up; returns what to restore."""
    from oracle_guard.hooks import check_named_freezes as hook
    from oracle_guard.reading import env_conditions
    from oracle_guard.reading import import_aliases
    from oracle_guard.reading import runner_access
    from oracle_guard.reading import scan_cache
    from oracle_guard.reading import scanner
    from oracle_guard.reading import silence_acceptance
    from oracle_guard.reading import silence_prefilter

    targets = [
        (hook, '_read', 'read the file'),
        (silence_prefilter, 'might_silence', 'byte prefilter (silences)'),
        (silence_prefilter, 'might_tamper', 'byte prefilter (rule 35)'),
        (silence_prefilter, 'foreign_encoding', 'coding cookie (rule 36)'),
        (scanner, 'parse_python', 'parse (ast.parse)'),
        (import_aliases, 'ImportAliases', 'alias collection'),
        (scanner, 'scan_silences', 'silence walk'),
        (runner_access, 'tampering', 'rule 35 walk'),
        (runner_access, 'computed_access', 'rule 35b walk'),
        (env_conditions.ConditionReader, 'of_tree', 'environment conditions (reader)'),
        (silence_acceptance.SilenceJudge, 'judge', 'judgement (rules 39-41)'),
        (silence_acceptance.SilenceJudge, 'facts_of', 'facts of a silence (digest, conditions)'),
        (silence_acceptance.SilenceJudge, 'judge_facts', 'judgement (rules 39-41)'),
        (hook, 'judge_silence', 'judgement (ledger)'),
        (scan_cache.ScanCache, 'for_this_scanner', 'scan cache: load'),
        (scan_cache.ScanCache, 'key', 'scan cache: SHA-256 of each file'),
        (scan_cache.ScanCache, 'get', 'scan cache: look-up and decode'),
        (scan_cache.ScanCache, 'put', 'scan cache: encode'),
        (scan_cache.ScanCache, 'save', 'scan cache: save'),
    ]
    saved = []
    for owner, name, phase in targets:
        if not hasattr(owner, name):
            continue  # a phase this version of the scanner does not have
        original = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
        saved.append((owner, name, original))
        if isinstance(original, classmethod):
            setattr(owner, name, classmethod(timer.wrap(phase, original.__func__)))
        elif isinstance(original, staticmethod):
            setattr(owner, name, staticmethod(timer.wrap(phase, original.__func__)))
        else:
            setattr(owner, name, timer.wrap(phase, original))
    return saved


def scan_profile(cache: str, top: int, warm: bool = False) -> list[str]:
    from oracle_guard.hooks.check_named_freezes import main

    repo, paths = corpus.ensure_corpus(cache)
    size = sum(os.path.getsize(os.path.join(repo, p)) for p in paths)
    os.chdir(repo)
    # In this process: the phase timers and cProfile see no worker (reading/scan_pool).
    os.environ['ORACLE_GUARD_SCAN_PROCESSES'] = '1'
    if warm:  # a developer's second --all-files run: the scan cache filled by a first one
        os.environ['ORACLE_GUARD_SCAN_CACHE'] = '1'
        os.environ['XDG_CACHE_HOME'] = tempfile.mkdtemp(prefix='og-profile-cache-')
        with contextlib.redirect_stdout(io.StringIO()):
            main(list(paths))
    else:  # the cold scan
        os.environ['ORACLE_GUARD_SCAN_CACHE'] = '0'
    lines = [f'## corpus scan ({"scan cache warm" if warm else "cold"}): check-named-freezes '
             f'over {len(paths)} files ({size / 1e6:.1f} MB)', '']
    best: dict[str, float] | None = None
    walls = []
    for _ in range(3):  # best of three: other processes share the machine
        timer = PhaseTimer()
        saved = _patch(timer)
        started = time.process_time()
        with contextlib.redirect_stdout(io.StringIO()):
            main(list(paths))
        wall = time.process_time() - started
        for owner, name, original in saved:
            setattr(owner, name, original)
        walls.append(wall)
        if best is None or wall <= min(walls):
            best, calls = dict(timer.totals), dict(timer.calls)
            best['(everything else)'] = wall - sum(timer.totals.values())
    wall = min(walls)
    lines += [f'wall {wall:.2f} s (best of {len(walls)}: '
              + ', '.join(f'{w:.2f}' for w in walls) + ')', '',
              '| phase | calls | seconds | share |', '|---|---|---|---|']
    for phase, seconds in sorted(best.items(), key=lambda item: -item[1]):  # type: ignore[union-attr]
        lines.append(f'| {phase} | {calls.get(phase, "")} | {seconds:.2f} | '
                     f'{seconds / wall:.0%} |')
    profiler = cProfile.Profile()
    with contextlib.redirect_stdout(io.StringIO()):
        profiler.runcall(main, list(paths))
    lines += ['', f'cProfile (its own overhead included), top {top} by own time:', '',
              '```', *_top(profiler, top), '```']
    return lines


def _top(profiler: cProfile.Profile, top: int) -> list[str]:
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats('tottime').print_stats(top)
    text = out.getvalue().replace(os.path.dirname(HERE) + os.sep, '')
    rows = text.splitlines()
    start = next((i for i, line in enumerate(rows) if line.lstrip().startswith('ncalls')), 0)
    return [r for r in rows[start:] if r.strip()]


# -- the one-file commit -------------------------------------------------------------------
_CHILD = r'''
import cProfile, io, os, pstats, sys, time
started = time.perf_counter()
profiler = cProfile.Profile()
profiler.enable()
from {module} import main
code = main([])
profiler.disable()
wall = time.perf_counter() - started
stats = pstats.Stats(profiler)
def cumulative(match):
    return max((v[3] for k, v in stats.stats.items() if match(k)), default=0.0)
# cProfile counts a recursive function's time once, at its outermost call.
outer = cumulative(lambda k: k[2] == '_find_and_load')
git = cumulative(lambda k: k[2] == 'run_git')
print(f'EXIT {{code}} WALL {{wall:.4f}} IMPORTS {{outer:.4f}} GIT {{git:.4f}}', file=sys.stderr)
out = io.StringIO()
pstats.Stats(profiler, stream=out).sort_stats('cumulative').print_stats({top})
print(out.getvalue(), file=sys.stderr)
'''


def commit_profile(top: int) -> list[str]:
    import bench

    lines = ['## one-file commit (2 000 files, a test file staged), under cProfile', '']
    with tempfile.TemporaryDirectory(prefix='og-profile-') as tmp:
        root = os.path.join(tmp, 'repo')
        bench.build_repo(root, 2000)
        env = {k: v for k, v in os.environ.items() if not k.startswith('PYTHON')}
        env['PYTHONPATH'] = os.path.join(os.path.dirname(HERE), 'hooks')
        for hook in ('check-generator-lock', 'check-freeze-ledger'):
            runs = []
            for _ in range(3):
                proc = subprocess.run(
                    [sys.executable, '-c', _CHILD.format(module=bench.module_of(hook), top=top)],
                    cwd=root, env=env, capture_output=True, text=True, check=False)
                head = next(line for line in proc.stderr.splitlines() if line.startswith('EXIT'))
                _, code, _, wall, _, imports, _, git = head.split()
                runs.append((float(wall), code, float(imports), float(git), proc.stderr))
            wall, code, imports, git, report = min(runs)
            lines += [f'### {hook}: exit {code}, {wall * 1000:.1f} ms under the profiler '
                      f'(best of 3): imports {imports * 1000:.1f} ms, waiting for git '
                      f'{git * 1000:.1f} ms, the rest {(wall - imports - git) * 1000:.1f} ms',
                      '', '```']
            rows = report.splitlines()
            start = next((i for i, line in enumerate(rows)
                          if line.lstrip().startswith('ncalls')), 0)
            lines += [r.replace(os.path.dirname(HERE) + os.sep, '')
                      for r in rows[start:start + top + 1] if r.strip()]
            lines += ['```', '']
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--cache', default=corpus.default_cache(),
                        help='where benchmarks/corpus.py keeps the corpus')
    parser.add_argument('--only', nargs='+', choices=('scan', 'commit'))
    parser.add_argument('--top', type=int, default=15)
    parser.add_argument('--warm', action='store_true',
                        help='profile the scan with the scan cache filled by a first run')
    args = parser.parse_args(argv)
    only = set(args.only or ('scan', 'commit'))
    if 'commit' in only:
        print('\n'.join(commit_profile(args.top)), flush=True)
    if 'scan' in only:
        print('\n'.join(scan_profile(args.cache, args.top, args.warm)), flush=True)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
