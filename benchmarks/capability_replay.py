"""Replay rule 54's reader over the history of real projects: how many honest commits add
an interpreter capability to their package, and which uses.

    python benchmarks/capability_replay.py [--limit 200] NAME=GIT_DIR:PACKAGE[,PACKAGE] ...

For each project, the last ``--limit`` commits (merges left out: their changes are their
parents') that touch the package; for each, every changed Python file of the package that
is not test code is read on both sides (``git cat-file --batch``, no work tree) and
compared with its parent's version as the gate compares a change (``gate/capabilities``,
``reading/moved_uses``): the uses the parent had in the files the commit touches (the file
before a rename, a file it deletes) vouch for as many uses of the same kind and expression,
each file's own first. Prints a Markdown table, then every flagged use.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'hooks'))

from oracle_guard.reading.capabilities import capability_uses  # noqa: E402
from oracle_guard.reading.capabilities import identity  # noqa: E402
from oracle_guard.reading.capabilities import parse_module  # noqa: E402
from oracle_guard.reading.moved_uses import unvouched  # noqa: E402


def git(git_dir: str, *args: str) -> str:
    return subprocess.run(['git', f'--git-dir={git_dir}', *args], check=True,
                          capture_output=True).stdout.decode('utf-8', 'surrogateescape')


class Blobs:
    """``rev:path`` -> bytes through one ``git cat-file --batch`` process."""

    def __init__(self, git_dir: str) -> None:
        self.proc = subprocess.Popen(['git', f'--git-dir={git_dir}', 'cat-file', '--batch'],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def read(self, name: str) -> bytes | None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(name.encode('utf-8', 'surrogateescape') + b'\n')
        self.proc.stdin.flush()
        header = self.proc.stdout.readline().split()
        if len(header) < 3 or header[1] != b'blob':
            return None
        data = self.proc.stdout.read(int(header[2]))
        self.proc.stdout.read(1)
        return data

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def is_test(path: str) -> bool:
    parts = path.split('/')
    name = parts[-1]
    return any(p in ('test', 'tests', 'testing') for p in parts[:-1]) or \
        name.startswith('test_') or name.endswith('_test.py') or name == 'conftest.py'


def own_names(packages: list[str]) -> list[str]:
    return [p.rstrip('/').rsplit('/', 1)[-1] for p in packages]


def replay(git_dir: str, packages: list[str], limit: int
           ) -> tuple[int, list[tuple[str, str, list[tuple[str, int, str, str]]]]]:
    """(commits replayed, [(commit, subject, [(path, line, kind, expression)])] flagged)."""
    log = git(git_dir, 'log', '--no-merges', f'-n{limit}', '--format=%H %s', 'HEAD', '--',
              *packages).splitlines()
    blobs = Blobs(git_dir)
    own = own_names(packages)
    flagged = []
    try:
        for entry in log:
            commit, _, subject = entry.partition(' ')
            parents = git(git_dir, 'rev-list', '--parents', '-n1', commit).split()[1:]
            parent = parents[0] if parents else None
            if parent is None:
                continue
            diff = git(git_dir, 'diff-tree', '-r', '-M', '--name-status', '-z', parent,
                       commit, '--', *packages).split('\0')
            sides, removed = [], []
            at = 0
            while at < len(diff) - 1:
                status = diff[at]
                if status.startswith(('R', 'C')):
                    old, path = diff[at + 1], diff[at + 2]
                    at += 3
                else:
                    old = path = diff[at + 1]
                    at += 2
                if not path.endswith('.py') or is_test(path):
                    continue
                # as the gate does: only a rename's old side is the file's base
                base = None if status.startswith(('A', 'C')) else old
                old_raw = blobs.read(f'{parent}:{base}') if base is not None else None
                old_tree = parse_module(old_raw) if old_raw is not None else None
                before = capability_uses(old_tree, own) if old_tree is not None else []
                if status.startswith('D'):
                    removed += before
                    continue
                new_tree = parse_module(blobs.read(f'{commit}:{path}') or b'')
                if new_tree is None:
                    removed += before  # the new side runs nothing
                    continue
                now = capability_uses(new_tree, own)
                if old_raw is not None and old_tree is None:
                    text = old_raw.decode('utf-8', 'replace')
                    now = [u for u in now if u.expression not in text]
                sides.append((path, now, before))
            # the gate's matching (reading/moved_uses): each file's own base side first,
            # then what the commit's other files lost (a module moved or split adds nothing)
            left = unvouched([(now, before) for _, now, before in sides], removed, identity)
            uses = [(path, u.line, u.kind, u.expression)
                    for (path, _, _), found in zip(sides, left) for u in found]
            if uses:
                flagged.append((commit[:10], subject, uses))
    finally:
        blobs.close()
    return len(log), flagged


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--limit', type=int, default=200)
    parser.add_argument('projects', nargs='+', metavar='NAME=GIT_DIR:PACKAGE[,PACKAGE]')
    args = parser.parse_args(argv)
    rows, details = [], []
    total = total_flagged = 0
    for spec in args.projects:
        name, _, rest = spec.partition('=')
        git_dir, _, packages = rest.rpartition(':')
        count, flagged = replay(git_dir, packages.split(','), args.limit)
        total += count
        total_flagged += len(flagged)
        share = 100 * len(flagged) / count if count else 0.0
        rows.append(f'| {name} | {packages} | {count} | {len(flagged)} | {share:.1f} % |')
        for commit, subject, uses in flagged:
            for path, line, kind, expression in uses:
                details.append(f'| {name} | `{commit}` {subject[:60]} | `{path}:{line}` | '
                               f'{kind} | `{expression}` |')
    share = 100 * total_flagged / total if total else 0.0
    print('| project | package | commits replayed | commits flagged | share flagged |')
    print('|---|---|---|---|---|')
    print('\n'.join(rows))
    print(f'| **all** | | {total} | {total_flagged} | {share:.1f} % |')
    print()
    if details:
        print('| project | commit | where | kind | expression |')
        print('|---|---|---|---|---|')
        print('\n'.join(details))
    else:
        print('No use flagged.')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
