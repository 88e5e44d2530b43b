"""Real git repositories in tmp_path, and hooks called in-process through their main()."""
from __future__ import annotations

import json
import os
import subprocess
import textwrap
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass

import pytest

# The checkout this suite belongs to.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@dataclass
class Result:
    rc: int
    out: str
    err: str

    @property
    def codes(self) -> list[str]:
        """The rule codes reported, in order (`path:line:col: OGxxx ...`)."""
        codes = []
        for line in self.out.splitlines():
            parts = line.split(': ', 2)
            if len(parts) >= 2 and parts[1][:2] == 'OG':
                codes.append(parts[1].split()[0])
        return codes


class Repo:
    def __init__(self, path: str, capsys: pytest.CaptureFixture[str]) -> None:
        self.path = path
        self._capsys = capsys

    def git(self, *args: str, check: bool = True) -> str:
        proc = subprocess.run(('git', *args), cwd=self.path, capture_output=True, text=True)
        if check and proc.returncode:
            raise AssertionError(f'git {args} failed: {proc.stderr}')
        return proc.stdout

    def write(self, rel: str, content: str | bytes, *, dedent: bool = True) -> str:
        full = os.path.join(self.path, rel)
        os.makedirs(os.path.dirname(full) or '.', exist_ok=True)
        if isinstance(content, str):
            content = (textwrap.dedent(content) if dedent else content).encode()
        with open(full, 'wb') as f:
            f.write(content)
        return rel

    def write_json(self, rel: str, data: object) -> str:
        return self.write(rel, json.dumps(data, indent=2, sort_keys=True) + '\n', dedent=False)

    def read(self, rel: str) -> bytes:
        with open(os.path.join(self.path, rel), 'rb') as f:
            return f.read()

    def add(self, *paths: str) -> None:
        self.git('add', '-A', '--', *(paths or ('.',)))

    def commit(self, message: str = 'change', *paths: str) -> str:
        self.add(*paths)
        self.git('commit', '-q', '--no-verify', '--allow-empty', '-m', message)
        return self.git('rev-parse', 'HEAD').strip()

    def rm(self, *paths: str) -> None:
        self.git('rm', '-q', '-r', '--', *paths)

    def run(self, main: Callable[[Sequence[str] | None], int], *args: str) -> Result:
        """Call a hook's main() in-process, in this repository, and capture its output."""
        self._capsys.readouterr()
        cwd = os.getcwd()
        os.chdir(self.path)
        try:
            rc = main(list(args))
        finally:
            os.chdir(cwd)
        captured = self._capsys.readouterr()
        return Result(rc, captured.out, captured.err)

    def snapshot(self) -> dict[str, bytes]:
        """Every file on disk (outside .git): a hook must leave it unchanged."""
        files = {}
        for top, dirs, names in os.walk(self.path):
            dirs[:] = [d for d in dirs if d != '.git']
            for name in names:
                full = os.path.join(top, name)
                if not os.path.islink(full):
                    with open(full, 'rb') as f:
                        files[os.path.relpath(full, self.path)] = f.read()
        return files


def git_calls(monkeypatch):  # type: ignore[no-untyped-def]
    """The git subcommands a hook runs from here on (the real git, counted)."""
    from oracle_guard.repo import gitrepo

    calls: list[str] = []
    real = gitrepo.run_git

    def counted(args, *rest, **options):  # type: ignore[no-untyped-def]
        calls.append(next(a for a in args if not a.startswith('-')))  # the subcommand
        return real(args, *rest, **options)

    monkeypatch.setattr(gitrepo, 'run_git', counted)
    return calls


def sha256(data: bytes) -> str:
    import hashlib
    return hashlib.sha256(data).hexdigest()


PROPERTY_TEST = '''\
from hypothesis import given, strategies as st


@given(st.binary())
def test_parse_never_throws(buf):
    assert isinstance(buf, bytes)
'''
