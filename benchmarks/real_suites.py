"""Run every oracle-guard scanner over test suites nobody here wrote (issue 6, section 1).

    python benchmarks/real_suites.py [--venv DIR] [--packages numpy pandas scipy] [--json OUT]

1. Installs the packages (plus pytest and hypothesis, which their conftests import) from
   PyPI into a scratch virtualenv: a temporary folder, or DIR (reused when it exists).
2. Runs every scanner of oracle-guard, in this interpreter, over every ``.py`` file below a
   ``tests`` folder of those packages: each file is scanned or reported unparsable (OG307);
   a crash or a file taking longer than ``--timeout`` seconds is a failure (exit 1).
3. Collects the installed suites with ``pytest --collect-only`` and the small plugin
   ``pytest_marker_dump.py`` (beside this file): pytest's own list of the items that carry a
   skip, skipif or xfail marker.
4. Compares, per file and per test (``Class::function``, parameters dropped), pytest's view
   with what check-named-freezes finds for the marker forms (``pytest.mark.skip/skipif/xfail``
   as decorators, ``pytestmark`` and ``pytest.param(marks=...)``), and sorts every
   difference into a named cause (each named where the comparison makes it; the latest run
   is in benchmarks/RESULTS.md);
   a difference with no known cause is printed and makes the run fail.

Writes only below the scratch folder; downloads nothing but PyPI packages.
"""
from __future__ import annotations

import argparse
import ast
import collections
import datetime
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'hooks'))

from oracle_guard.hooks import check_named_freezes  # noqa: E402
from oracle_guard.reading import scanner  # noqa: E402
from oracle_guard.config import Config  # noqa: E402
from oracle_guard.oracle.ledger import empty_ledger  # noqa: E402

DEFAULT_PACKAGES = ('numpy', 'pandas', 'scipy')
MARKER_CODES = {'pytest.mark.skip', 'pytest.mark.skipif', 'pytest.mark.xfail'}
_PARAMS = re.compile(r'\[.*\]$', re.S)


# -- the scratch environment ---------------------------------------------------------------
def ensure_venv(venv: str, packages: list[str]) -> str:
    """Create (or reuse) the scratch venv; return its site-packages folder."""
    python = os.path.join(venv, 'bin', 'python')
    if not os.path.exists(python):
        subprocess.run([sys.executable, '-m', 'venv', venv], check=True)
    missing = [p for p in packages if subprocess.run(
        [python, '-c', f'import {p}'], capture_output=True, check=False).returncode != 0]
    if missing or subprocess.run([python, '-c', 'import pytest, hypothesis'],
                                 capture_output=True, check=False).returncode != 0:
        subprocess.run([python, '-m', 'pip', 'install', '-q', '--only-binary=:all:',
                        *packages, 'pytest', 'hypothesis'], check=True)
    out = subprocess.run([python, '-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'],
                         check=True, capture_output=True, text=True).stdout
    return out.strip()


def test_files(site: str, package: str) -> list[str]:
    """Every .py file below a ``tests`` folder of the package, relative to site-packages."""
    found = []
    for folder, dirs, files in os.walk(os.path.join(site, package)):
        dirs.sort()
        rel = os.path.relpath(folder, site).replace(os.sep, '/')
        if 'tests' not in rel.split('/'):
            continue
        found.extend(f'{rel}/{name}' for name in sorted(files) if name.endswith('.py'))
    return found


# -- our side -------------------------------------------------------------------------------
class Timeout(Exception):
    pass


def _alarm(signum, frame):  # type: ignore[no-untyped-def]
    raise Timeout


def optional_scanners() -> list[tuple[str, object]]:
    """Scanners of hooks other helpers are adding: used when their module exists."""
    extra = []
    try:
        from oracle_guard.hooks import check_freeze_ledger
        extra.append(('check-freeze-ledger', check_freeze_ledger))
    except ImportError:
        pass
    try:
        from oracle_guard.hooks import check_generator_lock
        extra.append(('check-generator-lock', check_generator_lock))
    except ImportError:
        pass
    return extra


def scan_generator_lock(module, source: bytes, path: str) -> None:  # type: ignore[no-untyped-def]
    """Call the generator-lock scanner, whatever its entry point is named."""
    for name in ('scan_properties', 'properties_in', 'scan_file', 'live_properties'):
        func = getattr(module, name, None)
        if callable(func):
            try:
                func(source, path)
            except TypeError:
                func(scanner.parse_python(source, path))
            return


def scan_all(site: str, files: list[str], timeout: float) -> dict[str, dict]:
    """Run the scanners over every file; per file: status, silences, timings."""
    cfg = Config(root=site, tests=('',))
    ledger = empty_ledger(cfg.ledger)
    today = datetime.date(2026, 1, 1)
    extra = optional_scanners()
    results: dict[str, dict] = {}
    signal.signal(signal.SIGALRM, _alarm)
    for path in files:
        with open(os.path.join(site, path), 'rb') as f:
            source = f.read()
        entry: dict = {'status': 'ok', 'silences': [], 'tests': 0}
        started = time.perf_counter()
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            findings = check_named_freezes.check_file(path, source, cfg, lambda: ledger, today)
            entry['findings'] = len(findings)
            if any(f.code == 'OG307' for f in findings):
                entry['status'] = 'unparsable'
                entry['error'] = next(f.message for f in findings if f.code == 'OG307')
            else:
                try:
                    scanned = scanner.scan_file(source, path)  # check-properties-present's view
                except scanner.ScanError as exc:
                    entry['status'] = 'unparsable'
                    entry['error'] = exc.message
                else:
                    entry['tests'] = len(scanned.tests)
                    entry['silences'] = [
                        {'line': s.line, 'code': s.code, 'scope': s.scope,
                         'targets': list(s.targets)}
                        for s in scanned.silences
                    ]
                    for _name, module in extra:
                        if _name == 'check-generator-lock':
                            scan_generator_lock(module, source, path)
                        elif hasattr(module, 'test_functions'):
                            module.test_functions(scanner.parse_python(source, path))
        except Timeout:
            entry['status'] = 'hang'
        except Exception as exc:  # noqa: BLE001 -- a crash is what this script looks for
            entry['status'] = 'crash'
            entry['error'] = f'{type(exc).__name__}: {exc}'
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        entry['seconds'] = time.perf_counter() - started
        entry['prefiltered'] = not scanner.might_silence(source)
        results[path] = entry
    return results


# -- pytest's side --------------------------------------------------------------------------
def collect(venv: str, site: str, package: str, out_dir: str) -> dict:
    dump = os.path.join(out_dir, f'markers-{package}.json')
    env = {**os.environ, 'OG_MARKER_DUMP': dump, 'PYTHONPATH': HERE,
           'PYTHONDONTWRITEBYTECODE': '1'}
    env.pop('PYTEST_ADDOPTS', None)
    proc = subprocess.run(
        [os.path.join(venv, 'bin', 'python'), '-m', 'pytest', '--collect-only', '-q',
         '-p', 'pytest_marker_dump', '-p', 'no:cacheprovider', '--rootdir', site,
         '-o', 'addopts=', '--continue-on-collection-errors', package],
        cwd=site, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False,
    )
    if not os.path.exists(dump):
        sys.exit(f'pytest collection of {package} produced no dump:\n'
                 f'{proc.stdout.decode(errors="replace")[-2000:]}')
    with open(dump) as f:
        return json.load(f)


def identity(nodeid: str) -> tuple[str, str]:
    path, _, rest = nodeid.partition('::')
    return path, _PARAMS.sub('', rest)


# -- comparison -----------------------------------------------------------------------------
def _decorator_names(tree: ast.Module) -> dict[str, list[str]]:
    """function name -> source of its decorators, for every def in the file."""
    names: dict[str, list[str]] = collections.defaultdict(list)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name].extend(ast.unparse(d) for d in node.decorator_list)
    return names


class FileFacts:
    """What the explanations need to know about one test file."""

    def __init__(self, site: str, path: str) -> None:
        with open(os.path.join(site, path), 'rb') as f:
            self.source = f.read()
        try:
            self.tree: ast.Module | None = scanner.parse_python(self.source, path)
        except scanner.ScanError:
            self.tree = None
        self.decorators = _decorator_names(self.tree) if self.tree else {}
        self.identities = {i for i, _ in scanner.test_functions(self.tree)} if self.tree else set()
        self.has_param_marks = b'marks=' in self.source
        self.fixtures = {
            node.name for node in ast.walk(self.tree) if self.tree and
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and
            any('fixture' in ast.unparse(d) for d in node.decorator_list)
        } if self.tree else set()

    def in_module_variable(self, line: int) -> bool:
        """Is ``line`` inside ``NAME = ...`` at module level (a list of params, say)?"""
        for node in self.tree.body if self.tree else []:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and \
                    node.lineno <= line <= (node.end_lineno or node.lineno):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                return not any(getattr(t, 'id', '') == 'pytestmark' for t in targets)
        return False

    def decorated_by_helper(self, ident: str) -> bool:
        """A decorator on the test (or its class) that is not a literal pytest.mark.*:
        a helper such as ``td.skip_if_no("pyarrow")`` or ``mpmath_check("0.10")`` that
        returns a mark built at import time."""
        for name in ident.split('::'):
            for deco in self.decorators.get(name, []):
                if not re.match(r'(pytest\.)?mark\.', deco):
                    return True
        return False


def explain_pytest_only(facts: FileFacts, ident: str, origins: set[str],
                        ours_functions: set[str]) -> str:
    """Why pytest sees a marker on a test that the file's own source does not show."""
    func = ident.split('::')[-1]
    if facts.tree is None:
        return 'file-unparsable'
    if ident not in facts.identities:
        if func in ours_functions or func in {i.split('::')[-1] for i in facts.identities}:
            return 'inherited-from-base-class'
        return 'defined-in-another-module'
    if origins == {'hook'}:
        return 'added-by-conftest-hook'
    if 'param' in origins and not facts.has_param_marks:
        return 'fixture-param-marks'
    if facts.decorated_by_helper(ident) or origins <= {'param', 'hook'}:
        return 'mark-from-helper-or-other-module'
    if origins & {'class', 'module'}:
        return 'pytestmark-built-by-code'
    return 'unexplained'


def explain_ours_only(facts: FileFacts, ident: str, silences: list[dict],
                      collected: set[str], path: str, error_files: set[str],
                      fixtures: set[str]) -> str:
    """Why check-named-freezes sees a marker on a test pytest does not report as marked."""
    if path in error_files:
        return 'file-failed-to-collect'
    if not collected:
        return 'file-not-collected-by-pytest'
    parts = ident.split('::')
    if len(parts) == 1 and parts[0] in fixtures:
        return 'marks-on-fixture-params'
    if len(parts) > 1 and not parts[0].startswith('Test'):
        return 'class-not-collected-by-pytest'
    if ident not in collected:
        return 'test-not-collected-by-pytest'
    covering = [s for s in silences if ident in s['targets']]
    if all(s.get('in_body') for s in covering):
        return 'mark-applied-at-run-time'
    if all(facts.in_module_variable(s['line']) for s in covering):
        return 'mark-in-module-level-variable'
    return 'unexplained'


def mark_in_body(tree: ast.Module, line: int) -> bool:
    """Is the silence at ``line`` inside a function body (applied at run time)?"""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            if node.body[0].lineno <= line <= (node.end_lineno or node.lineno):
                return True
    return False


def compare(site: str, package: str, ours: dict[str, dict], dump: dict) -> dict:
    marked: dict[str, dict[str, set[str]]] = collections.defaultdict(dict)  # path -> ident -> origins
    collected: dict[str, set[str]] = collections.defaultdict(set)
    for item in dump['items']:
        path, ident = identity(item['nodeid'])
        collected[path].add(ident)
        if item['marks']:
            marked[path].setdefault(ident, set()).update(item.get('origins', ()))
    error_files = {e['nodeid'] for e in dump['errors']}
    causes: collections.Counter[str] = collections.Counter()
    examples: dict[str, list[str]] = collections.defaultdict(list)
    per_file = []

    def note(cause: str, where: str) -> None:
        causes[cause] += 1
        if len(examples[cause]) < 5:
            examples[cause].append(where)

    paths = set(marked) | {p for p in ours if p.startswith(package + '/')}
    for path in sorted(paths):
        entry = ours.get(path) or {}
        marker_silences = [s for s in entry.get('silences', [])
                           if s['code'].split(' ')[0] in MARKER_CODES]
        theirs = marked.get(path, {})
        mine = {t for s in marker_silences for t in s['targets']}
        if not mine and not theirs:
            continue
        if not os.path.exists(os.path.join(site, path)):
            for ident in theirs:
                note('pytest-only: file-not-scanned', f'{path}::{ident}')
            continue
        facts = FileFacts(site, path)
        if facts.tree is not None:
            for s in marker_silences:
                s['in_body'] = mark_in_body(facts.tree, s['line'])
        ours_functions = {t.split('::')[-1] for t in mine}
        per_file.append({'path': path, 'pytest': len(theirs), 'ours': len(mine),
                         'both': len(mine & set(theirs))})
        for ident in sorted(set(theirs) - mine):
            note('pytest-only: ' + explain_pytest_only(facts, ident, theirs[ident], ours_functions),
                 f'{path}::{ident}')
        for ident in sorted(mine - set(theirs)):
            note('ours-only: ' + explain_ours_only(facts, ident, marker_silences,
                                                   collected.get(path, set()), path,
                                                   error_files, facts.fixtures),
                 f'{path}::{ident}')
    return {
        'files_compared': len(per_file),
        'pytest_silenced_tests': sum(r['pytest'] for r in per_file),
        'ours_silenced_tests': sum(r['ours'] for r in per_file),
        'agreeing_tests': sum(r['both'] for r in per_file),
        'files_equal': sum(1 for r in per_file if r['pytest'] == r['ours'] == r['both']),
        'items': len(dump['items']),
        'items_with_marks': sum(1 for i in dump['items'] if i['marks']),
        'collection_errors': len(dump['errors']),
        'causes': dict(causes.most_common()),
        'examples': examples,
        'per_file': per_file,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--venv', help='scratch virtualenv (reused if present; default: a temp dir)')
    parser.add_argument('--packages', nargs='+', default=list(DEFAULT_PACKAGES))
    parser.add_argument('--json', help='write the full per-file comparison here')
    parser.add_argument('--timeout', type=float, default=20.0, help='seconds per file')
    parser.add_argument('--no-collect', action='store_true', help='scan only; skip pytest')
    args = parser.parse_args(argv)

    scratch = tempfile.mkdtemp(prefix='og-real-suites-')
    venv = args.venv or os.path.join(scratch, 'venv')
    site = ensure_venv(venv, args.packages)
    files = [f for p in args.packages for f in test_files(site, p)]
    started = time.perf_counter()
    ours = scan_all(site, files, args.timeout)
    elapsed = time.perf_counter() - started
    status = collections.Counter(e['status'] for e in ours.values())
    prefiltered = sum(1 for e in ours.values() if e['prefiltered'])
    print(f'scanned {len(files)} test files in {elapsed:.1f}s: {dict(status)}; '
          f'{prefiltered} skipped by the byte prefilter')
    for path, e in ours.items():
        if e['status'] != 'ok':
            print(f'  {e["status"]}: {path}: {e.get("error", "")}')
    failed = status['crash'] + status['hang']

    report = {'venv': venv, 'files': len(files), 'status': dict(status), 'packages': {}}
    if not args.no_collect:
        for package in args.packages:
            result = compare(site, package, ours, collect(venv, site, package, scratch))
            report['packages'][package] = result
            print(f'\n{package}: {result["items"]} items, {result["items_with_marks"]} with '
                  f'skip/skipif/xfail markers, {result["collection_errors"]} collection errors')
            print(f'  tests silenced by markers: pytest {result["pytest_silenced_tests"]}, '
                  f'check-named-freezes {result["ours_silenced_tests"]}, both '
                  f'{result["agreeing_tests"]}; {result["files_equal"]}/'
                  f'{result["files_compared"]} files agree exactly')
            for cause, count in result['causes'].items():
                print(f'  {count:6d}  {cause}')
                for example in result['examples'][cause][:2]:
                    print(f'            e.g. {example}')
                if cause.endswith('unexplained'):
                    failed += count
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(report, f, indent=1)
    print(f'\nscratch folder: {scratch}')
    return 1 if failed else 0


if __name__ == '__main__':
    raise SystemExit(main())
