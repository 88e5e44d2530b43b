"""A corpus of real third-party test files, cached outside the repository.

    python benchmarks/corpus.py [--cache DIR]

Downloads (once) the wheels of numpy, pandas and scipy, which ship their test suites, and
pytest's source distribution (its ``testing/`` folder), with ``pip download --no-deps``;
extracts every ``.py`` file below a ``tests`` (or pytest's ``testing``) folder and commits
them, under ``tests/``, to a git repository of their own, next to a minimal
``[tool.oracle-guard]`` table. Everything lives in the cache folder (default:
``$XDG_CACHE_HOME/oracle-guard-bench``, else ``~/.cache/oracle-guard-bench``), never in
this checkout. Prints the repository's path, the number of files and their size.
"""
from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys
import tarfile
import zipfile

WHEELS = ('numpy', 'pandas', 'scipy')
SDISTS = ('pytest',)
PYPROJECT = b'[tool.oracle-guard]\nsrc = ["src/"]\ntests = ["tests/"]\n'
GIT_ENV = {
    'GIT_AUTHOR_NAME': 'bench', 'GIT_AUTHOR_EMAIL': 'bench@example.invalid',
    'GIT_COMMITTER_NAME': 'bench', 'GIT_COMMITTER_EMAIL': 'bench@example.invalid',
}


def default_cache() -> str:
    base = os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
    return os.path.join(base, 'oracle-guard-bench')


def _download(dists: str) -> None:
    os.makedirs(dists, exist_ok=True)
    pip = [sys.executable, '-m', 'pip', 'download', '-q', '--no-deps', '-d', dists]
    if not glob.glob(os.path.join(dists, '*.whl')):
        subprocess.run([*pip, '--only-binary', ':all:', *WHEELS], check=True)
    if not glob.glob(os.path.join(dists, '*.tar.gz')):
        subprocess.run([*pip, '--no-binary', ':all:', *SDISTS], check=True)


def _members(dists: str):  # type: ignore[no-untyped-def]
    """(path under tests/, bytes) of every test-suite file in the downloads."""
    for wheel in sorted(glob.glob(os.path.join(dists, '*.whl'))):
        with zipfile.ZipFile(wheel) as archive:
            for name in sorted(archive.namelist()):
                if name.endswith('.py') and 'tests' in name.split('/')[:-1]:
                    yield name, archive.read(name)
    for sdist in sorted(glob.glob(os.path.join(dists, '*.tar.gz'))):
        with tarfile.open(sdist) as archive:
            for member in archive.getmembers():
                parts = member.name.split('/')
                if member.isfile() and member.name.endswith('.py') and len(parts) > 2 \
                        and parts[1] == 'testing':
                    project = parts[0].rsplit('-', 1)[0]
                    data = archive.extractfile(member).read()  # type: ignore[union-attr]
                    yield '/'.join((project, 'testing', *parts[2:])), data


def ensure_corpus(cache: str) -> tuple[str, list[str]]:
    """(repository root, tracked test paths), building the repository on first use."""
    repo = os.path.join(cache, 'repo')
    if not os.path.isdir(os.path.join(repo, '.git')):
        _download(os.path.join(cache, 'dists'))
        building = repo + '.building'
        subprocess.run(['rm', '-rf', building], check=True)
        os.makedirs(building)
        for name, data in _members(os.path.join(cache, 'dists')):
            full = os.path.join(building, 'tests', name)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, 'wb') as f:
                f.write(data)
        with open(os.path.join(building, 'pyproject.toml'), 'wb') as f:
            f.write(PYPROJECT)
        env = {**os.environ, **GIT_ENV}
        for argv in (['init', '-q'], ['add', '-A'], ['commit', '-q', '-m', 'corpus']):
            subprocess.run(['git', *argv], cwd=building, check=True, env=env)
        os.rename(building, repo)
    out = subprocess.run(['git', 'ls-files', '-z', 'tests'], cwd=repo, check=True,
                         capture_output=True).stdout
    return repo, sorted(p for p in out.decode().split('\0') if p)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--cache', default=default_cache())
    args = parser.parse_args(argv)
    repo, paths = ensure_corpus(args.cache)
    size = sum(os.path.getsize(os.path.join(repo, p)) for p in paths)
    print(f'{repo}: {len(paths)} test files, {size / 1e6:.1f} MB')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
