"""check-named-freezes over pytest's own test suite: how many sites, of which spellings.

    python benchmarks/pytest_suite_sites.py [--version 9.2.0] [--workdir DIR] [--list FILE]

Downloads the pytest source distribution with pip (``pip download --no-binary``; the
wheel has no tests), unpacks it below a scratch folder and runs check-named-freezes'
``check_file`` over every ``.py`` file of ``testing/`` with an empty ledger, so every
silence site is reported. pytest's suite exercises skips as a subject, not only as a tool:
it is where references that skip nothing (``pytest.raises(pytest.skip.Exception)``,
``except pytest.skip.Exception``) are most common. Writes only below the scratch folder.
"""
from __future__ import annotations

import argparse
import collections
import datetime
import glob
import os
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'hooks'))

from oracle_guard.config import Config  # noqa: E402
from oracle_guard.hooks.check_named_freezes import check_file  # noqa: E402
from oracle_guard.oracle.ledger import empty_ledger  # noqa: E402


def testing_folder(version: str, workdir: str) -> str:
    folder = os.path.join(workdir, f'pytest-{version}', 'testing')
    if not os.path.isdir(folder):
        subprocess.run([sys.executable, '-m', 'pip', 'download', '-q', '--no-deps',
                        '--no-binary', ':all:', f'pytest=={version}', '-d', workdir],
                       check=True)
        (sdist,) = glob.glob(os.path.join(workdir, f'pytest-{version}.tar.gz'))
        with tarfile.open(sdist) as tar:
            tar.extractall(workdir)  # noqa: S202 -- our own scratch folder
    return folder


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--version', default='9.2.0')
    parser.add_argument('--workdir', default=None)
    parser.add_argument('--list', help='write every finding to this file')
    args = parser.parse_args()
    workdir = args.workdir or tempfile.mkdtemp(prefix='og-pytest-suite-')
    root = testing_folder(args.version, workdir)
    cfg = Config(root=root, tests=('',))
    ledger = empty_ledger(cfg.ledger)
    findings, files = [], 0
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        for name in sorted(names):
            if name.endswith('.py'):
                files += 1
                path = os.path.join(folder, name)
                with open(path, 'rb') as f:
                    source = f.read()
                rel = os.path.relpath(path, root)
                findings += check_file(rel, source, cfg, lambda: ledger,
                                       datetime.date(2026, 1, 1))
    codes = collections.Counter(f.code for f in findings)
    spellings = collections.Counter(f.message.split(' without ')[0] for f in findings
                                    if f.code == 'OG301')
    print(f'pytest {args.version}: {files} files under testing/; findings {dict(sorted(codes.items()))}')
    for spelling, count in spellings.most_common():
        print(f'  {count:5}  {spelling}')
    if args.list:
        with open(args.list, 'w') as f:
            f.writelines(f'{x.path}:{x.line}: {x.code} {x.message}\n' for x in findings)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
