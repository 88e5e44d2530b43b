"""How much of a real project's Hypothesis properties lock version 2 reads statically.

Usage::

    pip download --no-deps --no-binary :all: attrs cattrs   # sdists that ship their tests
    python benchmarks/lock_real.py attrs-*.tar.gz cattrs-*.tar.gz

For each sdist (a .tar.gz, or an unpacked folder) it

1. reads every ``@given`` test under its ``tests/`` folder with the library functions
   ``oracle-guard lock`` uses (``property_reader.read_properties`` with helper modules
   followed) and counts the tests whose every argument got a complete static form, and
   the reasons of the parts left to run time;
2. runs the real command, ``oracle-guard lock --dry-run``, in a throwaway git repository
   holding the sdist's files plus a ``[tool.oracle-guard]`` table, and checks that it
   exits 0 without a traceback.

Nothing is written into the sdist; the throwaway repository lives in a temporary folder.
"""
from __future__ import annotations

import argparse
import ast
import collections
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

from oracle_guard.reading.property_reader import read_properties
from oracle_guard.oracle.strategy_form import unresolved_parts
from oracle_guard.reading.strategy_reader import module_candidates


def unpack(source: str, into: str) -> str:
    if os.path.isdir(source):
        return source
    with tarfile.open(source) as archive:
        try:
            archive.extractall(into, filter='data')  # type: ignore[call-arg]
        except TypeError:  # Python < 3.12 without extraction filters
            archive.extractall(into)
    (top,) = [p for p in os.listdir(into) if os.path.isdir(os.path.join(into, p))]
    return os.path.join(into, top)


def python_files(root: str, folder: str) -> list[str]:
    found = []
    for top, dirs, names in os.walk(os.path.join(root, folder)):
        dirs.sort()
        for name in sorted(names):
            if name.endswith('.py'):
                found.append(os.path.relpath(os.path.join(top, name), root).replace(os.sep, '/'))
    return found


def _reason(why: str) -> str:
    """Group unresolved reasons: names and expressions vary, the kind of reason does not."""
    why = re.sub(r'^\S+ is a parameter', 'a parameter', why)
    why = re.sub(r'^\S+\(\) is not a strategy oracle-guard', 'a call that is not a strategy '
                 'oracle-guard', why)
    why = re.sub(r'^\S+ is not a module-level strategy or an import from the tests',
                 'a name that is not a module-level strategy or an import from the tests', why)
    why = re.sub(r'^\S+ is not a module-level strategy of \S+',
                 'a helper-module name that is not a module-level strategy', why)
    why = re.sub(r'^\S+\(\) is not a strategy oracle-guard reads statically',
                 'a strategy oracle-guard does not read statically', why)
    why = re.sub(r'^\S+ is bound more than once', 'a name bound more than once', why)
    why = re.sub(r'^\S+ is not a constant of this module', 'a local variable used as a bound',
                 why)
    why = re.sub(r'^\S+\(\) is more than one return', 'a helper function with more than one '
                 'statement', why)
    why = re.sub(r'^\S+ is decorated', 'a decorated helper function', why)
    return why


def measure_static(root: str, tests: str) -> dict[str, object]:
    parsed: dict[str, ast.Module | None] = {}

    def modules(importer: str, module: str, level: int):  # type: ignore[no-untyped-def]
        for path in module_candidates(importer, module, level, [tests]):
            if not path.startswith(tests):
                continue
            if path not in parsed:
                full = os.path.join(root, path)
                try:
                    with open(full, 'rb') as f:
                        parsed[path] = ast.parse(f.read(), path)
                except (OSError, SyntaxError, ValueError):
                    parsed[path] = None
            if parsed[path] is not None:
                return path, parsed[path]
        return None

    forms: dict[str, object] = {}
    counts: collections.Counter[str] = collections.Counter()
    reasons: collections.Counter[str] = collections.Counter()
    kinds: collections.Counter[str] = collections.Counter()
    crashes = []
    start = time.perf_counter()
    for path in python_files(root, tests):
        with open(os.path.join(root, path), 'rb') as f:
            raw = f.read()
        if b'given' not in raw:
            continue
        try:
            tree = ast.parse(raw, path)
            props = read_properties(path, tree, modules)
        except Exception as exc:  # noqa: BLE001 -- that is what is measured
            crashes.append(f'{path}: {type(exc).__name__}: {exc}')
            continue
        for prop in props:
            forms[f'{path}::{prop.identity}'] = prop.forms
            counts['given tests'] += 1
            counts['arguments'] += len(prop.forms)
            parts = [(arg, where, part) for arg, form in prop.forms.items()
                     for where, part in unresolved_parts(form)]
            for form in prop.forms.values():
                if isinstance(form, dict) and 'strategy' in form:
                    kinds[form['strategy']] += 1
            if not parts:
                counts['complete static entry'] += 1
                continue
            counts['left (partly) to run time'] += 1
            seen = set()
            for _, _, part in parts:
                reason = _reason(part.get('why', ''))
                if reason not in seen:
                    reasons[reason] += 1
                    seen.add(reason)
    digest = hashlib.sha256(json.dumps(forms, sort_keys=True).encode()).hexdigest()
    return {'counts': counts, 'reasons': reasons, 'kinds': kinds, 'crashes': crashes,
            'seconds': time.perf_counter() - start, 'digest': digest}


def run_command(root: str, tests: str) -> tuple[int, str, float]:
    """``oracle-guard lock --dry-run`` in a throwaway git repository copy of the sdist."""
    with tempfile.TemporaryDirectory() as scratch:
        repo = os.path.join(scratch, 'repo')
        shutil.copytree(root, repo)
        pyproject = os.path.join(repo, 'pyproject.toml')
        table = f'\n[tool.oracle-guard]\nsrc = ["src/"]\ntests = ["{tests}/"]\n'
        with open(pyproject, 'a', encoding='utf-8') as f:
            f.write(table)
        env = {**os.environ, 'GIT_AUTHOR_NAME': 'b', 'GIT_AUTHOR_EMAIL': 'b@b',
               'GIT_COMMITTER_NAME': 'b', 'GIT_COMMITTER_EMAIL': 'b@b'}
        for args in (('init', '-q'), ('add', '-A'), ('commit', '-q', '-m', 'sdist')):
            subprocess.run(('git', *args), cwd=repo, env=env, check=True,
                           capture_output=True)
        start = time.perf_counter()
        proc = subprocess.run((sys.executable, '-m', 'oracle_guard.cli', 'lock', '--dry-run'),
                              cwd=repo, capture_output=True, text=True, env=env)
        took = time.perf_counter() - start
        return proc.returncode, proc.stdout + proc.stderr, took


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('sdists', nargs='+', help='.tar.gz sdists or unpacked folders')
    parser.add_argument('--tests', default='tests', help='the tests folder in each sdist')
    parser.add_argument('--forms-digest', action='store_true',
                        help='only print a digest of every form read (to compare Python '
                             'versions: the forms must be the same)')
    args = parser.parse_args(argv)
    if args.forms_digest:
        for source in args.sdists:
            with tempfile.TemporaryDirectory() as scratch:
                static = measure_static(unpack(source, scratch), args.tests)
            print(f'{os.path.basename(source)} {static["counts"]["given tests"]} tests '  # type: ignore[index]
                  f'forms sha256 {static["digest"]} (Python {sys.version.split()[0]})')
        return 0
    failed = False
    for source in args.sdists:
        with tempfile.TemporaryDirectory() as scratch:
            root = unpack(source, scratch)
            name = os.path.basename(root.rstrip('/'))
            static = measure_static(root, args.tests)
            rc, output, took = run_command(root, args.tests)
        counts = static['counts']
        print(f'## {name}\n')
        print('| measure | value |\n|---|---|')
        for key in ('given tests', 'arguments', 'complete static entry',
                    'left (partly) to run time'):
            print(f'| {key} | {counts[key]} |')  # type: ignore[index]
        print(f'| read crashes | {len(static["crashes"])} |')  # type: ignore[arg-type]
        print(f'| static read time | {static["seconds"]:.2f} s |')
        print(f'| `oracle-guard lock --dry-run` exit code | {rc} |')
        print(f'| `oracle-guard lock --dry-run` time | {took:.2f} s |')
        traceback = 'Traceback' in output
        print(f'| traceback in its output | {"yes" if traceback else "no"} |')
        notes = output.count('checked at run time')
        print(f'| "checked at run time" notes printed | {notes} |\n')
        print('Reasons a test has a part left to run time (tests per reason):\n')
        for reason, n in static['reasons'].most_common():  # type: ignore[attr-defined]
            print(f'* {n}: {reason}')
        print('\nTop-level strategy kinds read:',
              ', '.join(f'{k} {n}' for k, n in static['kinds'].most_common()))  # type: ignore[attr-defined]
        for crash in static['crashes']:  # type: ignore[attr-defined]
            print(f'\nCRASH {crash}')
        print()
        failed = failed or rc != 0 or traceback or bool(static['crashes'])
    return 1 if failed else 0


if __name__ == '__main__':
    raise SystemExit(main())
