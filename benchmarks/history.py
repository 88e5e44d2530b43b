"""What history mode costs: a one-commit ``--all-files`` run on a long history.

    python benchmarks/history.py [--venv DIR] [--commits 10000] [--runs 7]

Builds (with ``git fast-import``, a few seconds) a repository whose guard was adopted
10 000 commits ago: most commits edit one of 100 ``src/`` modules, every 50th a test
file, every 200th a property test alone (an oracle change the rules read), so the walk
meets the kinds of commits a real project has. HEAD is one more ``src/`` commit. Then each
change-rule hook runs as pre-commit.ci runs it (nothing staged, no base), through the
console scripts of a clean virtual environment (see bench.py), three ways:

* ``HEAD only``: ``--history-limit 1``, the one-commit judgement all-files runs had;
* ``default cap``: no argument, history mode with ``history-limit`` at its default (300);
* ``whole history``: ``--history-limit`` past the 10 000 commits (for information).

Printed: the median wall and CPU seconds, the ratio of each to HEAD only (the target: at
most 2x at the default cap), and how many git processes each run starts. Commands are
interleaved; nothing is asserted.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import CleanVenv  # noqa: E402
from bench import git  # noqa: E402
from bench import git_processes  # noqa: E402
from bench import interleaved  # noqa: E402

HOOKS = ('forbid-mixed-oracle-diff', 'check-freeze-ledger', 'check-properties-present',
         'check-generator-lock', 'check-fixture-manifest')
PROPERTY = '''from hypothesis import given, strategies as st


@given(st.binary())
def test_parse_never_throws(buf):
    assert isinstance(buf, bytes)
'''
ADOPTION = {
    'pyproject.toml': '[project]\nname = "app"\n\n[tool.oracle-guard]\nsrc = ["src/"]\n',
    'tests/properties/test_parse.py': PROPERTY,
    'tests/freeze_ledger.yaml': 'budget: 0\nfreezes: []\n',
    'tests/domain_lock.json': '{"version": 1, "properties": '
                              '{"test_parse_never_throws": {"max_examples": 100}}}\n',
    'tests/fixtures/manifest.json': '{"version": 1, "fixtures": {}}\n',
    'tests/fixtures/traces.txt': '# recorded trace ids\n',
    '.pre-commit-config.yaml': 'repos: []\n',
    **{f'src/mod_{i}.py': f'def f{i}():\n    return {i}\n' for i in range(100)},
    **{f'tests/test_mod_{i}.py': f'def test_{i}():\n    assert True\n' for i in range(10)},
}


def _blob(path: str, text: str) -> bytes:
    data = text.encode()
    return b'M 100644 inline %s\ndata %d\n%s\n' % (path.encode(), len(data), data)


def _commit(n: int, message: str, files: dict[str, str], parent: bool) -> bytes:
    msg = message.encode()
    out = (b'commit refs/heads/main\nmark :%d\n'
           b'committer bench <bench@example.invalid> %d +0000\ndata %d\n%s\n'
           % (n, 1700000000 + n, len(msg), msg))
    if parent:
        out += b'from :%d\n' % (n - 1)
    return out + b''.join(_blob(p, t) for p, t in files.items())


def build_history(root: str, commits: int) -> None:
    """Adoption, then ``commits`` commits since, then HEAD: one more src/ edit."""
    os.makedirs(root)
    git('init', '-q', '-b', 'main', cwd=root)
    stream = [_commit(1, 'adopt oracle-guard', ADOPTION, parent=False)]
    for i in range(1, commits + 1):
        if i % 200 == 0:
            files = {'tests/properties/test_parse.py': PROPERTY + f'\n# reviewed {i}\n'}
            message = f'property test {i}, alone'
        elif i % 50 == 0:
            files = {f'tests/test_mod_{i % 10}.py': f'def test_{i}():\n    assert True\n'}
            message = f'test {i}'
        else:
            files = {f'src/mod_{i % 100}.py': f'def f():\n    return {i}\n'}
            message = f'change {i}'
        stream.append(_commit(i + 1, message, files, parent=True))
    stream.append(_commit(commits + 2, 'the pull request: one src/ commit',
                          {'src/mod_0.py': 'def f():\n    return -1\n'}, parent=True))
    git('fast-import', '--quiet', cwd=root, stdin=b''.join(stream))
    git('checkout', '-q', '--detach', 'main', cwd=root)  # as pre-commit.ci checks out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--venv', help='a clean virtual environment holding oracle-guard '
                                       '(built there if missing; default: a temporary one)')
    parser.add_argument('--commits', type=int, default=10000)
    parser.add_argument('--runs', type=int, default=7)
    args = parser.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix='og-history-')
    try:
        venv = CleanVenv.ensure(args.venv or os.path.join(tmp, 'clean-venv'))
        repo = os.path.join(tmp, 'repo')
        build_history(repo, args.commits)
        count = git('rev-list', '--count', 'HEAD', cwd=repo).decode().strip()
        print(f'{count} commits, adoption {args.commits + 1} commits before HEAD; '
              f'{os.cpu_count()} CPUs, git {git("--version", cwd=tmp).decode().split()[-1]}\n')
        print('| hook | HEAD only (ms, CPU ms) | default cap: × HEAD only (wall, CPU) '
              '| whole history: × HEAD only (wall, CPU) | git processes (HEAD only / cap) |')
        print('|---|---|---|---|---|')
        for hook in HOOKS:
            script = venv.script(hook)
            commands = {
                'head': [*script, '--history-limit', '1'],
                'cap': script,
                'all': [*script, '--history-limit', str(args.commits + 10)],
            }
            result = interleaved(commands, repo, args.runs, venv.env)
            codes = {name: r['rc'] for name, r in result.items()}
            if any(codes.values()):
                print(f'| {hook} | unexpected exit codes {codes} | | | |')
                continue
            head = result['head']

            def ratio(name: str) -> str:
                return (f'{result[name]["median"] / head["median"]:.2f}, '
                        f'{result[name]["cpu"] / head["cpu"]:.2f}')

            spawned = (git_processes(commands['head'], repo, venv, tmp),
                       git_processes(commands['cap'], repo, venv, tmp))
            print(f'| {hook} | {head["median"] * 1000:.0f}, {head["cpu"] * 1000:.0f} '
                  f'| {ratio("cap")} | {ratio("all")} | {spawned[0]} / {spawned[1]} |',
                  flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
