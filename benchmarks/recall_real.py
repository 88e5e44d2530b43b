"""The same findings before and after: every hook with ``--all-files`` and every cache
off, on real projects adopted by ``commit_real.py`` (``--keep``), for two installed
versions.

    python benchmarks/recall_real.py --before VENV --after VENV [--empty-baseline]
                                     PROJECT_ROOT [...]

For each project (a clean HEAD: ``git reset --hard``) and each hook of both versions:
the exit code and the findings (the lines that start with a path and a line number),
compared as sets, and their count. Prints one table per project and every finding that
only one version reports (none is the expected output). With ``--empty-baseline`` the
working tree's baseline (what ``--all-files`` judges) is emptied first, so every silence
adoption accepted is judged and reported again (restored afterwards). No target is
asserted.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  -- the same clean venvs and hooks

FINDING = re.compile(r'^[^\s:][^:]*:\d+:(\d+:)? ')


def findings(venv: bench.CleanVenv, hook: str, root: str) -> tuple[int, list[str]]:
    env = {**venv.env, 'ORACLE_GUARD_SCAN_CACHE': '0'}
    proc = subprocess.run([*venv.script(hook), '--all-files'], cwd=root, env=env,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)
    lines = (proc.stdout + proc.stderr).splitlines()
    return proc.returncode, sorted(line for line in lines if FINDING.match(line))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--before', required=True)
    parser.add_argument('--after', required=True)
    parser.add_argument('--empty-baseline', action='store_true')
    parser.add_argument('roots', nargs='+')
    args = parser.parse_args(argv)
    sides = {'before': bench.CleanVenv.ensure(args.before),
             'after': bench.CleanVenv.ensure(args.after)}
    differ = 0
    for root in args.roots:
        subprocess.run(['git', 'reset', '-q', '--hard', 'HEAD'], cwd=root, check=True)
        label = ''
        if args.empty_baseline:
            from oracle_guard.config import load_config

            with open(os.path.join(root, load_config(root).baseline), 'w') as f:
                f.write('{"version": 1, "silences": [], "excluded": []}\n')
            label = ', baseline emptied'
        print(f'### {os.path.basename(root)}{label}\n')
        print('| hook | exit before, after | findings before, after | same findings |')
        print('|---|---|---|---|')
        for hook in bench.HOOKS:
            (rc_b, found_b), (rc_a, found_a) = (findings(v, hook, root) for v in sides.values())
            same = rc_b == rc_a and found_b == found_a
            differ += not same
            print(f'| {hook} | {rc_b}, {rc_a} | {len(found_b)}, {len(found_a)} | '
                  f'{"yes" if same else "**no**"} |')
            for line in sorted(set(found_b) ^ set(found_a)):
                print(f'|  | only {"before" if line in found_b else "after"}: '
                      f'`{line[:150]}` | | |')
        print()
        subprocess.run(['git', 'reset', '-q', '--hard', 'HEAD'], cwd=root, check=True)
    return 1 if differ else 0


if __name__ == '__main__':
    raise SystemExit(main())
