"""What check-named-freezes found in each test-file content it scanned (a scan cache).

``pre-commit run --all-files`` and history mode scan every test file, and on a
developer's machine almost all of them are the same bytes as last time. check-named-freezes
keeps, per user and under the SHA-256 of each file content, everything those bytes decide:
the findings of rules 35, 35b and 36 (and of a file nobody can parse), and for each silence
where it is, what it is, the tests it silences, the freeze ids it names, the baseline digest
of its expression, what an importorskip imports and the verdict of an environment condition
over the project's Python versions. A second run does not parse such a content again; it
judges it again — the configuration, the ledger, the baseline, the declared dependencies and
today's date are read anew every run, so a freeze that expired or a baseline entry that was
removed fails the second run as it would the first. A verdict on conditions is kept with the
Python versions it was judged against and is used only while ``requires-python`` gives the
same ones.

Where and when:

* under ``$XDG_CACHE_HOME/oracle-guard/`` (``~/.cache/oracle-guard/``), never in the
  repository; one file per oracle-guard version, Python version and digest of the
  scanner's and the judgement's own source, so a scanner that changed never reads an old
  entry;
* only in ``--all-files`` and history mode (a commit scans a few files);
* never when ``CI`` is set, unless ``ORACLE_GUARD_SCAN_CACHE=1``;
  ``ORACLE_GUARD_SCAN_CACHE=0`` turns it off everywhere.

Why it cannot be poisoned by a pull request: an entry is written only by this process,
for the bytes it has just scanned, under their SHA-256 (not git's SHA-1, so no colliding
pair of contents can share an entry); a content that differs by one byte is another key.
An entry that does not read back as exactly what was written (a torn line, a foreign
field) is ignored and the file scanned again. What stays outside this guarantee is anyone
who can write the user's cache folder, which is why CI, where a restored cache may have
been written by a pull request's own code, does not read it unless asked.
"""
from __future__ import annotations

import os

from oracle_guard.reading.cache_policy import append
from oracle_guard.reading.cache_policy import cache_folder as _folder
from oracle_guard.reading.cache_policy import enabled  # noqa: F401 -- where and when

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable

    from oracle_guard.findings import Finding


class FileScan:
    """What one test file's bytes decide: the findings of rules 35, 35b and 36 (and of a
    file nobody can parse), and the facts of each silence the judgement and the ledger
    read. ``silences``: their syntax, for rule 40b ([] when read from the scan cache)."""

    __slots__ = ('findings', 'facts', 'silences', 'minors', 'uses_helpers', 'asked')

    def __init__(self, findings: list[Finding], facts: list, silences: list,  # type: ignore[type-arg]
                 minors: tuple[int, ...] | None = None) -> None:
        self.findings = findings  # Finding with path '': the path is the reader's
        self.facts = facts  # SilenceFacts, one per silence, in scan order
        self.silences = silences
        # The Python minor versions an environment condition was judged against (None:
        # no condition was), which a cached scan must match.
        self.minors = minors
        # Whether a name was imported from a helper module of the tests roots (rule 14):
        # the scan then depends on the helpers as well. ``asked``: the questions it asked
        # of them and their answers (helper_modules.RecordingFile), kept with the scan and
        # asked again before a cached one is used; None when not recorded (not cached).
        self.uses_helpers = False
        self.asked: list | None = None  # type: ignore[type-arg]

    def is_clean(self) -> bool:
        return not self.findings and not self.facts


# Past this size the file is started afresh: a cache, not a record.
_MAX_BYTES = 32 << 20
_HEX = frozenset('0123456789abcdef')


def _scanner_digest() -> str:
    """The version, the interpreter and the source of every module a scan runs."""
    import hashlib
    import sys

    from oracle_guard import __version__

    here = os.path.dirname(os.path.abspath(__file__))
    package = os.path.dirname(here)
    digest = hashlib.sha256(f'{__version__} {sys.version}'.encode())
    for path in (os.path.join(here, 'scanner.py'), os.path.join(here, 'silence_prefilter.py'),
                 os.path.join(here, 'import_aliases.py'), os.path.join(here, 'source_lines.py'),
                 os.path.join(here, 'runner_access.py'),
                 os.path.join(here, 'helper_modules.py'),
                 os.path.join(here, 'silence_acceptance.py'),
                 os.path.join(here, 'env_conditions.py'),
                 os.path.join(package, 'oracle', 'baseline.py'),
                 os.path.join(package, 'hooks', 'check_named_freezes.py'),
                 os.path.abspath(__file__)):
        try:
            with open(path, 'rb') as f:
                digest.update(f.read())
        except OSError:
            digest.update(b'?')
    return digest.hexdigest()[:16]


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _line_col(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _optional(value: object) -> bool:
    return value is None or isinstance(value, str)


def encode_scan(scan: FileScan) -> str:
    import json

    if scan.is_clean() and scan.asked is None:
        return '-'
    record = {
        'f': [[f.line, f.col, f.code, f.message, f.hint] for f in scan.findings],
        's': [[s.line, s.col, s.kind, list(s.freeze_ids), list(s.targets), s.scope, s.code,
               s.digest, s.module, None if s.condition is None else list(s.condition)]
              for s in scan.facts],
        'm': None if scan.minors is None else list(scan.minors),
    }
    if scan.asked is not None:
        record['h'] = scan.asked
    return json.dumps(record, separators=(',', ':'), ensure_ascii=True)


def decode_scan(raw: str) -> FileScan | None:
    """The scan written as ``raw``, or None when it is not exactly such a record."""
    from oracle_guard.findings import Finding

    if raw == '-':
        return FileScan([], [], [])
    import json

    from oracle_guard.reading.silence_acceptance import SilenceFacts

    try:
        data = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(data, dict) or set(data) - {'h'} != {'f', 's', 'm'} or \
            not isinstance(data['f'], list) or not isinstance(data['s'], list) or \
            not isinstance(data.get('h', []), list):
        return None
    minors = data['m']
    if minors is not None and not (isinstance(minors, list) and all(_line_col(m) for m in minors)):
        return None
    findings = []
    for row in data['f']:
        if not (isinstance(row, list) and len(row) == 5 and _line_col(row[0]) and
                _line_col(row[1]) and all(isinstance(v, str) for v in row[2:])):
            return None
        findings.append(Finding('', *row))
    facts = []
    for row in data['s']:
        if not (isinstance(row, list) and len(row) == 10 and _line_col(row[0]) and
                _line_col(row[1]) and isinstance(row[2], str) and _strings(row[3]) and
                _strings(row[4]) and isinstance(row[5], str) and isinstance(row[6], str) and
                _optional(row[7]) and _optional(row[8]) and
                (row[9] is None or (_strings(row[9]) and len(row[9]) == 2))):
            return None
        facts.append(SilenceFacts(*row))
    scan = FileScan(findings, facts, [], None if minors is None else tuple(minors))
    if 'h' in data:
        scan.uses_helpers, scan.asked = True, data['h']
    return scan


class ScanCache:
    """The scans of one scanner version; ``put`` collects, ``save`` appends."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.known: dict[str, str] = {}  # key -> the scan as written
        self.new: list[str] = []
        try:
            if os.path.getsize(path) <= _MAX_BYTES:
                with open(path, encoding='ascii', errors='replace') as f:
                    # A line torn by two runs writing at once does not decode: not used.
                    for line in f:
                        key, _, raw = line.partition(' ')
                        if len(key) == 64 and set(key) <= _HEX and raw.endswith('\n'):
                            self.known[key] = raw[:-1]
        except OSError:
            pass

    @classmethod
    def for_this_scanner(cls) -> ScanCache:
        return cls(os.path.join(_folder(), f'scans-{_scanner_digest()}.txt'))

    @staticmethod
    def key(source: bytes) -> str:
        import hashlib

        return hashlib.sha256(source).hexdigest()

    def get(self, key: str, minors: Callable[[], tuple[int, ...]]) -> FileScan | None:
        """The scan of the content under ``key``, if known and judged against the same
        Python versions as ``minors()`` gives now (asked only then)."""
        raw = self.known.get(key)
        if raw is None:
            return None
        scan = decode_scan(raw)
        if scan is None or (scan.minors is not None and scan.minors != tuple(minors())):
            return None
        return scan

    def is_clean(self, key: str) -> bool:
        """Whether the content under ``key`` was scanned and found nothing (with or
        without the helpers' answers it rests on)."""
        raw = self.known.get(key)
        scan = None if raw is None else decode_scan(raw)
        return scan is not None and scan.is_clean()

    def put(self, key: str, scan: FileScan) -> None:
        raw = encode_scan(scan)
        if self.known.get(key) != raw:
            self.known[key] = raw
            self.new.append(f'{key} {raw}\n')

    def save(self) -> None:
        """Append what this run learnt; a cache that cannot be written is no error."""
        if self.new and append(self.path, ''.join(self.new), _MAX_BYTES):
            self.new = []
