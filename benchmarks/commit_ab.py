"""Two installed versions of the hooks on the same one-file commit, interleaved, CPU time.

    python benchmarks/commit_ab.py --before DIR --after DIR [--runs 21] [--hooks ...]
                                   [--real SDIST [--change test|src] [--keep DIR]]

``bench.py`` measures one version; run twice, the load between the two runs moves the
figures by as much as a change under test (0.1× and less). This runs both clean virtual
environments (``bench.CleanVenv``: ``pip install .`` of each version) in the synthetic
repositories of ``bench.py`` (2 000 and 50 000 tracked files, one test file staged),
each hook the three ways ``bench.py`` does (the staged diff kept by an earlier hook, the
first hook of a commit, every cache off), each version with its own cache folder, in
rounds whose order alternates (before then after, after then before: neither side always
runs second). Median CPU time (user + system, git included) as a multiple of each
version's own ``python -c pass``; the load average is printed. No target is asserted.

With ``--real SDIST`` the repository is a real project adopted as
``benchmarks/commit_real.py`` adopts it, with one of its one-line changes staged.
"""
from __future__ import annotations

import argparse
import glob
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  -- the same clean venvs and repositories
from commit_cold import cpu_ms  # noqa: E402  -- one child's CPU time


def commands(venv: bench.CleanVenv, hooks: list[str], changed: str, cache: str,
             hook_args=bench.hook_args,  # type: ignore[no-untyped-def]
             ) -> dict[str, tuple[list[str], dict[str, str], object]]:
    env = {**venv.env, 'XDG_CACHE_HOME': cache}
    staged = os.path.join(cache, 'oracle-guard', 'staged-*')

    def forget() -> None:
        for kept in glob.glob(staged):
            os.remove(kept)

    def keep(root: str) -> None:
        if not glob.glob(staged):  # what the first hook of the commit leaves
            subprocess.run(venv.script('check-fixture-manifest'), cwd=root, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)

    found: dict[str, tuple[list[str], dict[str, str], object]] = {
        'python -c pass': ([venv.python, '-c', 'pass'], env, None)}
    for hook in hooks:
        argv = [*venv.script(hook), *hook_args(hook, changed)]
        found[hook] = (argv, env, keep)
        found[hook + bench.FIRST] = (argv, env, lambda root: forget())
        found[hook + bench.OFF] = (argv, {**env, 'ORACLE_GUARD_SCAN_CACHE': '0'}, None)
    return found


def rounds(root: str, plans: dict[str, dict[str, tuple[list[str], dict[str, str], object]]],
           runs: int) -> dict[str, dict[str, float]]:
    """Median CPU ms of every command of every side, ``runs`` rounds after one that fills
    the caches (unkept), the sides' order alternating from round to round."""
    samples: dict[str, dict[str, list[float]]] = {
        side: {name: [] for name in plan} for side, plan in plans.items()}
    order = list(plans)
    for run in range(runs + 1):
        for side in order:
            for name, (command, env, before) in plans[side].items():
                if before is not None:
                    before(root)  # type: ignore[operator]
                ms = cpu_ms(command, root, env)
                if run:
                    samples[side][name].append(ms)
        order.reverse()
    return {side: {name: statistics.median(v) for name, v in rows.items()}
            for side, rows in samples.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--before', required=True)
    parser.add_argument('--after', required=True)
    parser.add_argument('--runs', type=int, default=21)
    parser.add_argument('--hooks', nargs='+', default=list(bench.HOOKS))
    parser.add_argument('--real', metavar='SDIST',
                        help='a real project instead of the synthetic repositories, '
                             'adopted as benchmarks/commit_real.py does')
    parser.add_argument('--change', choices=('test', 'src'), default='test',
                        help="with --real: commit_real.py's one-line change to stage")
    parser.add_argument('--keep', help='with --real: adopt the project here, or reuse it')
    args = parser.parse_args(argv)
    sides = {'before': bench.CleanVenv.ensure(args.before),
             'after': bench.CleanVenv.ensure(args.after)}
    if args.real:
        return real(args, sides)
    tmp = tempfile.mkdtemp(prefix='og-ab-')
    try:
        results: dict[int, dict[str, dict[str, float]]] = {}
        for size in (2000, 50000):
            root = os.path.join(tmp, f'repo{size}')
            changed = bench.build_repo(root, size)
            plans = {side: commands(venv, args.hooks, changed,
                                    os.path.join(tmp, f'cache-{side}-{size}'))
                     for side, venv in sides.items()}
            results[size] = rounds(root, plans, args.runs)
        print(f'median of {args.runs} rounds, order alternating; CPU ms and × the same '
              "version's `python -c pass`\n")
        print('| hook | 2 000 files: before → after | 50 000 files: before → after | '
              '50k / 2k: before → after |')
        print('|---|---|---|---|')
        for name in results[2000]['before']:
            cells = []
            ratios = {}
            for size in (2000, 50000):
                pair = []
                for side in sides:
                    ms = results[size][side][name]
                    base = results[size][side]['python -c pass']
                    ratios[(size, side)] = ms / base
                    pair.append(f'{ms / base:.2f} ({ms:.1f} ms)')
                cells.append(' → '.join(pair))
            cells.append(' → '.join(f'{ratios[(50000, s)] / ratios[(2000, s)]:.2f}'
                                    for s in sides))
            print(f'| {name} | ' + ' | '.join(cells) + ' |')
        print(f'\nload average at the end {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs')
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def real(args: argparse.Namespace, sides: dict[str, bench.CleanVenv]) -> int:
    """Both versions on one real project and one of commit_real.py's changes."""
    import commit_real

    work = args.keep or tempfile.mkdtemp(prefix='og-ab-real-')
    tmp = tempfile.mkdtemp(prefix='og-ab-')
    try:
        project = commit_real.adopted(args.real, work)
        changed, what = commit_real.stage(project, args.change)
        print(f'{project.name}: {what}')
        plans = {side: commands(venv, args.hooks, changed,
                                os.path.join(tmp, f'cache-{side}'),
                                hook_args=commit_real.no_file_names)
                 for side, venv in sides.items()}
        results = rounds(project.root, plans, args.runs)
        project.git('reset', '-q', '--hard', 'HEAD')
        print(f'median of {args.runs} rounds, order alternating; CPU ms and × the same '
              "version's `python -c pass`\n")
        print('| hook | before | after |')
        print('|---|---|---|')
        for name in results['before']:
            cells = [f'{results[s][name] / results[s]["python -c pass"]:.2f} '
                     f'({results[s][name]:.1f} ms)' for s in sides]
            print(f'| {name} | ' + ' | '.join(cells) + ' |')
        print(f'\nload average at the end {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs')
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
