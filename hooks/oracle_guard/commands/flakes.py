"""``oracle-guard flakes``: flake candidates from two or more JUnit XML runs.

A test whose status differs between runs (passed in one, failed in another) is a
flake candidate; a test that failed in every run is a failure, not a flake, and is
listed apart. For each candidate a draft ledger row is printed, with the owner left
empty for a person to fill in: this command writes nothing.

    oracle-guard flakes run1.xml run2.xml [run3.xml ...]
    oracle-guard flakes --run [--runs N] -- pytest -q tests/
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

from oracle_guard.runner import iso_date
from oracle_guard.context import utc_today
from oracle_guard.findings import ConfigError
from oracle_guard.oracle.ledger import NEVER_FREEZABLE
from oracle_guard.runner import guarded

PASSED, FAILED, SKIPPED = 'passed', 'failed', 'skipped'
EVIDENCE_CHARS = 160
# Suggested classes, first match wins: a "connection timed out" is a network problem.
CLASS_HINTS = (
    ('network', re.compile(
        r'connection ?(error|refused|reset|aborted)|ConnectTimeout|ReadTimeout|socket|'
        r'getaddrinfo|name or service not known|temporary failure in name resolution|'
        r'URLError|HTTPError|NewConnectionError|MaxRetryError|SSLError|network|unreachable|'
        r'\bDNS\b', re.I)),
    ('time-dependent', re.compile(
        r'time ?out|timed out|deadline|clock|datetime|time\.time|monotonic|sleep|'
        r'timezone|\btz\b|\butc\b|\bnow\(|elapsed|took \d', re.I)),
    ('unseeded-entropy', re.compile(r'random|seed|shuffle|uuid|entropy|nondetermin', re.I)),
)


@dataclass
class Case:
    """One test in one run, merged over its testcase elements (call + teardown)."""

    nodeid: str
    identity: str
    status: str = PASSED
    evidence: str = ''
    text: str = ''


@dataclass
class Run:
    path: str
    cases: dict[str, Case] = field(default_factory=dict)  # by node id, in run order


def _split_classname(classname: str, file_attr: str | None) -> tuple[str, list[str]]:
    """pytest writes ``tests.test_a.TestX``: (file path, class names)."""
    parts = [p for p in classname.split('.') if p]
    if file_attr:
        module = re.sub(r'\.py$', '', file_attr).replace('/', '.').split('.')
        if parts[:len(module)] == module:
            return file_attr, parts[len(module):]
    # xunit2 (pytest's default) has no file attribute: trailing CamelCase parts are classes.
    cut = len(parts)
    while cut > 1 and parts[cut - 1][:1].isupper():
        cut -= 1
    module = '/'.join(parts[:cut])
    return (f'{module}.py' if module else ''), parts[cut:]


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ''


def parse_junit(raw: bytes, path: str) -> Run:
    """A JUnit XML document as written by ``pytest --junitxml``."""
    import xml.etree.ElementTree as ET

    if re.search(rb'<!(DOCTYPE|ENTITY)', raw[:4096]):
        raise ConfigError(path, 1, 'JUnit XML with a DOCTYPE or entities is refused',
                          'pass the file pytest --junitxml wrote')
    try:
        root = ET.fromstring(raw)
    except ET.ParseError as exc:
        line = exc.position[0] if exc.position else 0
        raise ConfigError(path, line, f'malformed or truncated XML: {exc}',
                          'rerun the tests; a run that was killed leaves half a file') from None
    if root.tag not in ('testsuites', 'testsuite'):
        raise ConfigError(path, 1, f'not JUnit XML: the root element is <{root.tag}>',
                          'pass files written by pytest --junitxml')
    run = Run(path)
    for element in root.iter('testcase'):
        name = element.get('name')
        if name is None:
            raise ConfigError(path, 0, 'a <testcase> has no name attribute')
        file_path, classes = _split_classname(element.get('classname', ''), element.get('file'))
        identity = '::'.join([*classes, name])
        nodeid = f'{file_path}::{identity}' if file_path else identity
        case = run.cases.setdefault(nodeid, Case(nodeid, identity))
        for child in element:
            if child.tag in ('failure', 'error'):
                case.status = FAILED
                case.text = child.text or ''
                case.evidence = case.evidence or _first_line(
                    child.get('message') or '') or _first_line(case.text)
            elif child.tag == 'skipped' and case.status == PASSED:
                case.status = SKIPPED
    return run


def read_run(path: str) -> Run:
    try:
        with open(path, 'rb') as f:
            raw = f.read()
    except OSError as exc:
        raise ConfigError(path, 0, f'cannot read: {exc.strerror}') from None
    return parse_junit(raw, path)


def _keys(runs: Sequence[Run]) -> dict[str, list[Case | None]]:
    """Cases matched across runs by identity; by node id where an identity is not unique."""
    ambiguous = set()
    for run in runs:
        seen: set[str] = set()
        for case in run.cases.values():
            if case.identity in seen:
                ambiguous.add(case.identity)
            seen.add(case.identity)
    table: dict[str, list[Case | None]] = {}
    for i, run in enumerate(runs):
        for case in run.cases.values():
            key = case.nodeid if case.identity in ambiguous else case.identity
            table.setdefault(key, [None] * len(runs))[i] = case
    return table


def _order(run: Run, common: set[str], keys: dict[str, str]) -> list[str]:
    return [keys[n] for n in run.cases if keys[n] in common]


def suggest_class(text: str, reordered: bool) -> str:
    for name, pattern in CLASS_HINTS:
        if pattern.search(text):
            return name
    return 'order-dependent' if reordered else 'unknown'


@dataclass
class Verdict:
    flakes: list[list[Case | None]]
    failures: list[list[Case | None]]
    reordered: bool


def compare(runs: Sequence[Run]) -> Verdict:
    table = _keys(runs)
    flakes, failures = [], []
    for cases in table.values():
        present = [c for c in cases if c is not None]
        if len(present) < 2:
            continue  # only one run saw it: nothing to compare
        statuses = {c.status for c in present}
        if statuses == {FAILED}:
            failures.append(cases)
        elif FAILED in statuses:
            flakes.append(cases)
    in_all = {k for k, cases in table.items() if all(c is not None for c in cases)}
    keys = {}
    for key, cases in table.items():
        for case in cases:
            if case is not None:
                keys[case.nodeid] = key
    orders = [_order(run, in_all, keys) for run in runs]
    return Verdict(flakes, failures, any(order != orders[0] for order in orders))


def _quoted(text: str) -> str:
    """A YAML double-quoted scalar (JSON strings are valid YAML)."""
    if len(text) > EVIDENCE_CHARS:
        text = text[:EVIDENCE_CHARS - 3] + '...'
    return json.dumps(text)


def draft_row(cases: Sequence[Case | None], reordered: bool, expires: datetime.date) -> str:
    present = [c for c in cases if c is not None]
    failing = next(c for c in present if c.status == FAILED)
    suggested = suggest_class(f'{failing.evidence}\n{failing.text}', reordered)
    if suggested in NEVER_FREEZABLE:
        note = f'suggested; NOT freezable: {NEVER_FREEZABLE[suggested]}'
    elif suggested == 'unknown':
        note = 'could not tell: choose order-dependent or time-dependent, or fix the test'
    else:
        note = 'suggested from the failure text' if suggested != 'order-dependent' else \
            'suggested: the runs ran the tests in different orders'
    statuses = ', '.join(c.status if c else 'absent' for c in cases)
    return (
        f'  # runs: {statuses}\n'
        f'  - id: FZ-???\n'
        f'    nodeid: {failing.nodeid}\n'
        f'    class: {suggested}  # {note}\n'
        f'    evidence: {_quoted(failing.evidence or "(no failure message)")}\n'
        f'    owner:  # a person who answers for this freeze\n'
        f'    expires: {expires.isoformat()}  # suggested\n'
    )


def render(runs: Sequence[Run], verdict: Verdict, expires: datetime.date) -> str:
    names = ', '.join(run.path for run in runs)
    lines = [f'# compared {len(runs)} runs: {names}']
    if not verdict.flakes:
        lines.append('# no flake candidates: no test changed between passing and failing')
    else:
        lines.append(f'# {len(verdict.flakes)} flake candidate(s). Draft rows for the ledger; '
                     'fill in id and owner, then commit the ledger on its own:')
        lines.append('freezes:')
        lines.extend(draft_row(cases, verdict.reordered, expires).rstrip('\n')
                     for cases in verdict.flakes)
    if verdict.failures:
        lines.append(f'# failed in every run ({len(verdict.failures)}): a bug, not a flake; '
                     'fix it rather than freeze it')
        for cases in verdict.failures:
            case = next(c for c in cases if c is not None)
            lines.append(f'#   {case.nodeid}: {case.evidence}')
    return '\n'.join(lines) + '\n'


def run_command(command: Sequence[str], runs: int, folder: str) -> list[str]:
    """Run a pytest command ``runs`` times, each with its own --junitxml; the XML paths."""
    paths = []
    for i in range(1, runs + 1):
        xml = os.path.join(folder, f'run{i}.xml')
        try:
            proc = subprocess.run([*command, f'--junitxml={xml}'], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        except OSError as exc:
            raise ConfigError(command[0], 0, f'cannot run the command: {exc.strerror}'
                              ) from None
        if not os.path.exists(xml):
            tail = proc.stdout.decode('utf-8', 'replace').strip().splitlines()[-5:]
            raise ConfigError(
                ' '.join(command), 0,
                f'run {i} exited with {proc.returncode} and wrote no JUnit XML:\n    '
                + '\n    '.join(tail),
                'the command must be a pytest invocation that accepts --junitxml',
            )
        paths.append(xml)
    return paths



def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command: list[str] = []
    if '--' in argv:
        at = argv.index('--')
        argv, command = argv[:at], argv[at + 1:]
    parser = argparse.ArgumentParser(
        prog='oracle-guard flakes',
        description='Flake candidates from JUnit XML runs, with draft ledger rows.',
        epilog='Exit 0: no flake candidate; 1: candidates found; 2: bad input.',
    )
    parser.add_argument('xml', nargs='*', help='two or more pytest --junitxml files')
    parser.add_argument('--run', action='store_true',
                        help='run the command after "--" (pytest ...) and compare its runs')
    parser.add_argument('--runs', type=int, default=2, metavar='N',
                        help='how many times --run runs the command (default: 2)')
    parser.add_argument('--today', type=iso_date, default=None,
                        help='the date suggested expiries count from (default: today)')
    parser.add_argument('--days', type=int, default=30, metavar='N',
                        help='suggested expiry: today plus N days (default: 30)')
    args = parser.parse_args(argv)
    if args.run:
        if args.xml or not command:
            parser.error('--run takes the command after "--" and no XML files')
        if args.runs < 2:
            parser.error('--runs must be at least 2')
    elif command or len(args.xml) < 2:
        parser.error('give two or more JUnit XML files, or --run -- pytest ...')
    expires = (args.today or utc_today()) + datetime.timedelta(days=args.days)

    def run() -> int:
        if args.run:
            with tempfile.TemporaryDirectory(prefix='oracle-guard-flakes-') as folder:
                runs = [read_run(path) for path in run_command(command, args.runs, folder)]
            for i, r in enumerate(runs, 1):  # the temporary paths mean nothing to a reader
                r.path = f'run {i}'
        else:
            runs = [read_run(path) for path in args.xml]
        verdict = compare(runs)
        sys.stdout.write(render(runs, verdict, expires))
        return 1 if verdict.flakes else 0

    return guarded(run, 'text', debug=False)


if __name__ == '__main__':
    raise SystemExit(main())
