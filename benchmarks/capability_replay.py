"""Replay rule 54's reader over the history of real projects: how many honest commits add
an interpreter capability to their package, and which uses.

    python benchmarks/capability_replay.py [--limit 200] NAME=GIT_DIR:PACKAGE[,PACKAGE] ...
    python benchmarks/capability_replay.py --gate [--limit 0] NAME=CLONE:PACKAGE[,PACKAGE] ...

For each project, the last ``--limit`` commits (merges left out: their changes are their
parents') that touch the package; for each, every changed Python file of the package that
is not test code is read on both sides (``git cat-file --batch``, no work tree) and
compared with its parent's version as the gate compares a change (``gate/capabilities``,
``reading/moved_uses``): the uses the parent had in the files the commit touches (the file
before a rename, a file it deletes) vouch for as many uses of the same kind and expression,
each file's own first. Prints a Markdown table, then every flagged use.

``--gate``: every kind of the rule as the gate judges a pull request (``added_uses`` of
``gate/capabilities``, the ``dependency`` and ``packaging`` kinds included), on each of the
last ``--limit`` non-merge commits of the whole history (0: all) against its parent, in a
clone with a work tree (``CLONE``), the packages as the ``src`` roots and ``tests/`` as the
tests root. Prints per project the commits, those flagged by kind and in all, then every
flagged commit with its uses, and the commits whose build configuration the gate could not
read statically (``gate/packaging``'s notes for the review report).
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


def gate_replay(clone: str, packages: list[str], limit: int
                ) -> tuple[int, list[tuple[str, str, list[tuple[str, int, str, str]]]],
                           list[tuple[str, str, list[tuple[str, str]]]]]:
    """(commits replayed, flagged as above, [(commit, subject, [(file, note)])] unread)."""
    from oracle_guard.config import Config
    from oracle_guard.context import RunContext
    from oracle_guard.gate.capabilities import added_uses
    from oracle_guard.gate.packaging import build_review
    from oracle_guard.repo.changeset import ChangeSet
    from oracle_guard.repo.changeset import diff_raw
    from oracle_guard.repo.changeset import parse_raw
    from oracle_guard.repo.tree_view import TreeView

    cfg = Config(root=clone, src=tuple(p if p.endswith('.py') else p.rstrip('/') + '/'
                                       for p in packages))
    log = git(os.path.join(clone, '.git'), 'log', '--no-merges', '--format=%H %P %s',
              *([f'-n{limit}'] if limit else []), 'HEAD').splitlines()
    flagged, unread = [], []
    replayed = 0
    for entry in log:
        commit, parent, subject = (entry.split(' ', 2) + ['', ''])[:3]
        if len(parent) != 40:  # the first commit: nothing to compare with
            continue
        replayed += 1
        changes = ChangeSet(clone, 'range', parent, parse_raw(diff_raw(clone, parent, commit)),
                            TreeView(clone, commit), f'{parent[:10]}..{commit[:10]}')
        ctx = RunContext(cfg, _changes=changes, _base_cfg=cfg)
        uses = [(a.path, a.use.line, a.use.kind, a.use.expression) for a in added_uses(ctx)]
        if uses:
            flagged.append((commit[:10], subject, uses))
        notes = build_review(changes, [cfg, cfg])[1]
        if notes:
            unread.append((commit[:10], subject, notes))
    return replayed, flagged, unread


def gate_main(projects: list[str], limit: int) -> int:
    rows, details, notes = [], [], []
    for spec in projects:
        name, _, rest = spec.partition('=')
        clone, _, packages = rest.rpartition(':')
        count, flagged, unread = gate_replay(clone, packages.split(','), limit)
        kinds: dict[str, int] = {}
        for commit, subject, uses in flagged:
            for kind in {u[2] for u in uses}:
                kinds[kind] = kinds.get(kind, 0) + 1
            for path, line, kind, expression in uses:
                details.append(f'| {name} | `{commit}` {subject[:60]} | `{path}:{line}` | '
                               f'{kind} | `{expression}` |')
        notes += (f'| {name} | `{commit}` {subject[:60]} | '
                  + '; '.join(f'`{file}`: {what}' for file, what in said) + ' |'
                  for commit, subject, said in unread)
        share = 100 * len(flagged) / count if count else 0.0
        by_kind = ', '.join(f'{k} {n}' for k, n in sorted(kinds.items())) or '-'
        rows.append(f'| {name} | {packages} | {count} | {by_kind} | {len(flagged)} | '
                    f'{share:.1f} % |')
    print('| project | package | commits | flagged by kind | flagged | share |')
    print('|---|---|---|---|---|---|')
    print('\n'.join(rows))
    print()
    if details:
        print('| project | commit | where | kind | expression |')
        print('|---|---|---|---|---|')
        print('\n'.join(details))
    else:
        print('No use flagged.')
    print()
    if notes:
        print('| project | commit | build configuration not read |')
        print('|---|---|---|')
        print('\n'.join(notes))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--limit', type=int, default=None,
                        help='commits per project (200; with --gate 0, every commit)')
    parser.add_argument('--gate', action='store_true',
                        help='every kind as the gate judges a pull request, on the whole '
                             'history of a clone')
    parser.add_argument('projects', nargs='+', metavar='NAME=GIT_DIR:PACKAGE[,PACKAGE]')
    args = parser.parse_args(argv)
    if args.gate:
        return gate_main(args.projects, args.limit or 0)
    args.limit = 200 if args.limit is None else args.limit
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
