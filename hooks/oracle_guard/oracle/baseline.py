"""The baseline: silences that existed when the guard was adopted (rules 39 and 42).

Like detect-secrets' baseline, the past is accepted once and the future is judged. The
file is JSON, human-owned, written only by ``oracle-guard baseline`` (``init`` runs it):

    {
      "version": 1,
      "silences": [
        {"path": "tests/test_io.py", "tests": ["TestMmap::test_big"], "scope": "test",
         "kind": "skipif", "expression": "pytest.mark.skipif(HAS_MMAP is None, ...)",
         "digest": "<sha256 of kind and the normalized expression>"}
      ],
      "excluded": [
        {"nodeid": "tests/test_slow.py::test_all", "by": "addopts --deselect"}
      ]
    }

A silence matches an entry when its kind, the tests it silences and the digest of its
expression (``ast.unparse`` of the call: spacing, quotes and line breaks do not count) are
the same, in the entry's file, or anywhere once that file is gone (moving a file keeps
the match). A changed condition or reason, a new silence, or the same silence on another
test (or on one more test) matches nothing. Entries are sorted, one key order, two-space
indent: a re-run changes only the lines that changed.

``unparsable`` (written only when there is one) lists the test files check-named-freezes
could not read at adoption, by the SHA-256 of their bytes: cattrs' PEP 695 modules, which
Python 3.11 cannot parse and cattrs' conftest leaves out below 3.12. Those very bytes are
accepted; an edited or new file nobody can parse is OG307 again.

``patches`` (written only when there is one) lists the places where test code changed pytest
at adoption (rule 35, OG308; and rule 35b's names nobody can read, OG310): a pytest plugin's
own suite assigns attributes of pytest objects. Each is the file, the finding's code and
message, the line as written and the SHA-256 of the three; the same line in the same file (or
anywhere once that file is gone: a move) is accepted as often as the baseline lists it, and a
new one is judged.

``symlinks`` (written only when there is one) lists the test files upstream ships as symlinks
to something not reviewed as test code here (OG307), with the target they named: the same
link to the same target is accepted, a new link or a new target is judged.

``excluded`` lists the inventory tests the existing pytest configuration already leaves
out (``--deselect``/``--ignore`` in ``addopts``, ``collect_ignore`` in a conftest.py, and
what one ``pytest --collect-only`` run at adoption left out: ``-m``/``-k``, a conftest
hook; rule 39b), for the audit of the verified run. A node id there names one case or,
without parameters, every case of that test function.
"""
from __future__ import annotations

import ast
from collections.abc import Callable
from collections.abc import Iterable

from oracle_guard.oracle.documents import load_json
from oracle_guard.findings import ConfigError
from oracle_guard.findings import Finding
from oracle_guard.oracle.records import FrozenRecord
from oracle_guard.oracle.records import Record
from oracle_guard.repo.tree_view import TreeView

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from oracle_guard.reading.scanner import Silence
    from oracle_guard.reading.silence_acceptance import SilenceFacts

VERSION = 1
ENTRY_FIELDS = ('path', 'tests', 'scope', 'kind', 'expression', 'digest')
EXCLUDED_FIELDS = ('nodeid', 'by')
UNPARSABLE_FIELDS = ('path', 'digest', 'why')
PATCH_FIELDS = ('path', 'code', 'what', 'source', 'digest')
LINK_FIELDS = ('path', 'target')
SHOWN_EXPRESSION = 160


def normalized_expression(silence: Silence) -> str:
    """The silence as the parser sees it: formatting, comments and line numbers drop out."""
    node = silence.call if silence.call is not None else silence.node
    if node is None:
        return silence.code
    try:
        return ast.unparse(node)
    except Exception:  # noqa: BLE001 -- an odd node still gets a stable key
        return ast.dump(node)


def _sha256():  # type: ignore[no-untyped-def]
    """hashlib's SHA-256 without importing hashlib, which loads OpenSSL (milliseconds, in
    every commit that judges a silence): CPython's own module gives the same digest."""
    try:
        from _sha2 import sha256  # Python 3.12 and later
    except ImportError:
        try:
            from _sha256 import sha256  # type: ignore[no-redef]  # 3.9 to 3.11
        except ImportError:  # pragma: no cover -- a build without them
            from hashlib import sha256  # type: ignore[no-redef]
    return sha256


def silence_digest(silence: Silence) -> str:
    text = f'{silence.kind}\0{normalized_expression(silence)}'
    return _sha256()(text.encode('utf-8')).hexdigest()


class BaselineEntry(FrozenRecord):
    __slots__ = ('path', 'tests', 'scope', 'kind', 'digest', 'expression', 'line')
    _uncompared = ('line',)
    path: str
    tests: tuple[str, ...]
    scope: str
    kind: str
    digest: str
    expression: str
    line: int  # in the baseline file, for messages

    def __init__(self, path: str, tests: tuple[str, ...], scope: str, kind: str, digest: str,
                 expression: str = '', line: int = 1) -> None:
        self._set(path=path, tests=tests, scope=scope, kind=kind, digest=digest,
                  expression=expression, line=line)

    @classmethod
    def of(cls, path: str, silence: Silence) -> BaselineEntry:
        expression = normalized_expression(silence)
        if len(expression) > SHOWN_EXPRESSION:
            expression = expression[:SHOWN_EXPRESSION - 3] + '...'
        return cls(path, tuple(silence.targets), silence.scope, silence.kind,
                   silence_digest(silence), expression)

    def key(self) -> tuple[tuple[str, ...], str, str]:
        """What a silence must have to match, wherever its file is."""
        return (self.tests, self.kind, self.digest)

    def as_json(self) -> dict[str, Any]:
        return {'path': self.path, 'tests': list(self.tests), 'scope': self.scope,
                'kind': self.kind, 'expression': self.expression, 'digest': self.digest}

    def sort_key(self) -> tuple[str, tuple[str, ...], str, str]:
        return (self.path, self.tests, self.kind, self.digest)


class ExcludedTest(FrozenRecord):
    __slots__ = ('nodeid', 'by')
    nodeid: str
    by: str

    def __init__(self, nodeid: str, by: str) -> None:
        self._set(nodeid=nodeid, by=by)

    def as_json(self) -> dict[str, str]:
        return {'nodeid': self.nodeid, 'by': self.by}


class UnparsableFile(FrozenRecord):
    """A test file check-named-freezes could not read at adoption (OG307), by its bytes."""

    __slots__ = ('path', 'digest', 'why', 'line')
    _uncompared = ('line',)
    path: str
    digest: str  # SHA-256 of the file's bytes
    why: str  # what the scanner said, for the reviewer
    line: int

    def __init__(self, path: str, digest: str, why: str, line: int = 1) -> None:
        self._set(path=path, digest=digest, why=why, line=line)

    def as_json(self) -> dict[str, str]:
        return {'path': self.path, 'digest': self.digest, 'why': self.why}


def content_digest(source: bytes) -> str:
    return _sha256()(source).hexdigest()


class PytestPatch(FrozenRecord):
    """A place where test code changed pytest at adoption (OG308, OG310), by its line."""

    __slots__ = ('path', 'code', 'what', 'source', 'digest', 'line')
    _uncompared = ('line',)
    path: str
    code: str
    what: str  # the finding's message
    source: str  # the line as written, stripped
    digest: str  # SHA-256 of code, message and line
    line: int

    def __init__(self, path: str, code: str, what: str, source: str, digest: str = '',
                 line: int = 1) -> None:
        self._set(path=path, code=code, what=what, source=source,
                  digest=digest or patch_digest(code, what, source), line=line)

    def as_json(self) -> dict[str, str]:
        return {'path': self.path, 'code': self.code, 'what': self.what,
                'source': self.source, 'digest': self.digest}


def patch_digest(code: str, what: str, source: str) -> str:
    return _sha256()(f'{code}\0{what}\0{source}'.encode('utf-8', 'surrogateescape')).hexdigest()


class LinkedTestFile(FrozenRecord):
    """A test file shipped as a symlink to something not reviewed as test code (OG307)."""

    __slots__ = ('path', 'target', 'line')
    _uncompared = ('line',)
    path: str
    target: str
    line: int

    def __init__(self, path: str, target: str, line: int = 1) -> None:
        self._set(path=path, target=target, line=line)

    def as_json(self) -> dict[str, str]:
        return {'path': self.path, 'target': self.target}


class Baseline(Record):
    __slots__ = ('path', 'entries', 'excluded', 'unparsable', 'patches', 'links', '_by_key',
                 'used')
    _uncompared = ('_by_key', 'used')
    path: str
    entries: list[BaselineEntry]
    excluded: list[ExcludedTest]
    unparsable: list[UnparsableFile]
    patches: list[PytestPatch]
    links: list[LinkedTestFile]

    def __init__(self, path: str, entries: list[BaselineEntry] | None = None,
                 excluded: list[ExcludedTest] | None = None,
                 unparsable: list[UnparsableFile] | None = None,
                 patches: list[PytestPatch] | None = None,
                 links: list[LinkedTestFile] | None = None) -> None:
        self.path = path
        self.entries = [] if entries is None else entries
        self.excluded = [] if excluded is None else excluded
        self.unparsable = [] if unparsable is None else unparsable
        self.patches = [] if patches is None else patches
        self.links = [] if links is None else links
        self._by_key: dict[tuple[tuple[str, ...], str, str], list[BaselineEntry]] = {}
        for entry in self.entries:
            self._by_key.setdefault(entry.key(), []).append(entry)
        self.used: set[BaselineEntry] = set()

    def match(self, path: str, silence: Silence | SilenceFacts,
              exists: Callable[[str], bool], digest: str | None = None,
              ) -> BaselineEntry | None:
        """The entry accepting this silence: same file, or a file that is gone (moved).
        ``digest``: its ``silence_digest``, when it was worked out already (the scan cache
        keeps digests, not syntax)."""
        candidates = self._by_key.get(
            (tuple(silence.targets), silence.kind,
             digest if digest is not None else silence_digest(silence)), [])  # type: ignore[arg-type]
        for entry in candidates:
            if entry.path == path:
                self.used.add(entry)
                return entry
        for entry in candidates:
            if not exists(entry.path):
                self.used.add(entry)
                return entry
        return None

    def excluded_nodeids(self) -> dict[str, str]:
        return {e.nodeid: e.by for e in self.excluded}

    def accepts_unparsable(self, path: str, source: bytes) -> bool:
        """Whether these bytes at this path are a file adoption could not read: only the
        same file, unchanged (a copy elsewhere, or one byte more, is judged)."""
        wanted = [u.digest for u in self.unparsable if u.path == path]
        return bool(wanted) and content_digest(source) in wanted

    def dumps(self) -> str:
        data = {
            'version': VERSION,
            'silences': [e.as_json() for e in sorted(self.entries, key=BaselineEntry.sort_key)],
            'excluded': [e.as_json() for e in sorted(set(self.excluded),
                                                      key=lambda e: (e.nodeid, e.by))],
        }
        if self.unparsable:  # most repositories have none: their file keeps its shape
            data['unparsable'] = [u.as_json() for u in sorted(
                set(self.unparsable), key=lambda u: (u.path, u.digest))]
        if self.patches:
            data['patches'] = [p.as_json() for p in sorted(
                self.patches, key=lambda p: (p.path, p.code, p.source, p.what))]
        if self.links:
            data['symlinks'] = [k.as_json() for k in sorted(
                set(self.links), key=lambda k: (k.path, k.target))]
        import json

        return json.dumps(data, indent=2, ensure_ascii=False) + '\n'


def empty_baseline(path: str) -> Baseline:
    return Baseline(path)


def _fail(path: str, line: int, message: str) -> ConfigError:
    return ConfigError(path, line, message, 'regenerate it with `oracle-guard baseline` in a '
                       'change of its own')


def parse_baseline(raw: bytes, path: str, lines: bool = True) -> Baseline:
    """The baseline in ``raw``; ``lines=False`` for a reader that never names an entry's
    line (the silence judge): a valid file is read without them (``load_json``), and a
    refused one is read again with them, so its error names the line either way."""
    if not lines:
        try:
            return _baseline_of(load_json(raw, path, lines=False), path)
        except ConfigError:
            pass
    return _baseline_of(load_json(raw, path), path)


def _baseline_of(data: Any, path: str) -> Baseline:
    if not isinstance(data, dict):
        raise _fail(path, 1, 'the baseline must be a JSON object')
    if data.get('version') != VERSION:
        raise _fail(path, _line(data, 'version'),
                    f'version {data.get("version")!r} is not {VERSION}')
    unknown = [k for k in data if k not in ('version', 'silences', 'excluded', 'unparsable',
                                            'patches', 'symlinks')]
    if unknown:
        raise _fail(path, _line(data, unknown[0]), f'unknown key {unknown[0]!r}')
    entries = []
    for item in _list(data, 'silences', path):
        line = getattr(item, 'line', 1)
        if not isinstance(item, dict) or set(item) != set(ENTRY_FIELDS):
            raise _fail(path, line, f'an entry holds exactly: {", ".join(ENTRY_FIELDS)}')
        tests = item['tests']
        if not isinstance(tests, list) or not all(isinstance(t, str) for t in tests) or \
                not all(isinstance(item[k], str) for k in ENTRY_FIELDS if k != 'tests'):
            raise _fail(path, line, 'tests is a list of test identities; the rest are strings')
        entries.append(BaselineEntry(item['path'], tuple(tests), item['scope'], item['kind'],
                                     item['digest'], item['expression'], line))
    excluded = []
    for item in _list(data, 'excluded', path):
        line = getattr(item, 'line', 1)
        if not isinstance(item, dict) or set(item) != set(EXCLUDED_FIELDS) or \
                not all(isinstance(v, str) for v in item.values()):
            raise _fail(path, line, 'an excluded test is {"nodeid": ..., "by": ...}')
        excluded.append(ExcludedTest(item['nodeid'], item['by']))
    unparsable = []
    for item in _list(data, 'unparsable', path):
        line = getattr(item, 'line', 1)
        if not isinstance(item, dict) or set(item) != set(UNPARSABLE_FIELDS) or \
                not all(isinstance(v, str) for v in item.values()):
            raise _fail(path, line, 'an unparsable file is {"path": ..., "digest": ..., '
                                    '"why": ...}')
        unparsable.append(UnparsableFile(item['path'], item['digest'], item['why'], line))
    patches = []
    for item in _list(data, 'patches', path):
        line = getattr(item, 'line', 1)
        if not isinstance(item, dict) or set(item) != set(PATCH_FIELDS) or \
                not all(isinstance(v, str) for v in item.values()):
            raise _fail(path, line, 'a patch of pytest is {"path": ..., "code": ..., '
                                    '"what": ..., "source": ..., "digest": ...}')
        patch = PytestPatch(item['path'], item['code'], item['what'], item['source'],
                            item['digest'], line)
        if patch.digest != patch_digest(patch.code, patch.what, patch.source):
            raise _fail(path, line, 'the digest of this patch of pytest is not the one of '
                                    'its code, what and source')
        patches.append(patch)
    links = []
    for item in _list(data, 'symlinks', path):
        line = getattr(item, 'line', 1)
        if not isinstance(item, dict) or set(item) != set(LINK_FIELDS) or \
                not all(isinstance(v, str) for v in item.values()):
            raise _fail(path, line, 'a symlinked test file is {"path": ..., "target": ...}')
        links.append(LinkedTestFile(item['path'], item['target'], line))
    return Baseline(path, entries, excluded, unparsable, patches, links)


def _line(data: Any, key: str) -> int:
    line_of = getattr(data, 'line_of', None)
    return line_of(key) if line_of else 1


def _list(data: dict, key: str, path: str) -> list[Any]:  # type: ignore[type-arg]
    value = data.get(key, [])
    if not isinstance(value, list):
        raise _fail(path, _line(data, key), f'{key!r} must be a list')
    return value


def read_baseline(view: TreeView, path: str, lines: bool = True) -> Baseline | None:
    raw = view.read_document(path)
    return None if raw is None else parse_baseline(raw, path, lines)


# -- rule 42: the baseline grows only in a change of its own -------------------------------

def grown_entries(base: Baseline, new: Baseline) -> list[BaselineEntry]:
    """Entries of ``new`` that accept a silence ``base`` did not (moving a file is not
    growth: the key leaves the path out)."""
    known = {entry.key() for entry in base.entries}
    return [entry for entry in new.entries if entry.key() not in known]


def grown_excluded(base: Baseline, new: Baseline) -> list[ExcludedTest]:
    known = {entry.nodeid for entry in base.excluded}
    return [entry for entry in new.excluded if entry.nodeid not in known]


def grown_unparsable(base: Baseline, new: Baseline) -> list[UnparsableFile]:
    known = {(u.path, u.digest) for u in base.unparsable}
    return [u for u in new.unparsable if (u.path, u.digest) not in known]


def grown_patches(base: Baseline, new: Baseline) -> list[PytestPatch]:
    """Patches of pytest ``new`` accepts more often than ``base`` did."""
    left: dict[tuple[str, str], int] = {}
    for patch in base.patches:
        left[(patch.path, patch.digest)] = left.get((patch.path, patch.digest), 0) + 1
    grown = []
    for patch in new.patches:
        key = (patch.path, patch.digest)
        if left.get(key, 0):
            left[key] -= 1
        else:
            grown.append(patch)
    return grown


def grown_links(base: Baseline, new: Baseline) -> list[LinkedTestFile]:
    known = {(k.path, k.target) for k in base.links}
    return [k for k in new.links if (k.path, k.target) not in known]


def growth_findings(base: Baseline, new: Baseline, others: Iterable[str]) -> list[Finding]:
    others = sorted(others)
    shown = ', '.join(others[:3]) + (f' (+{len(others) - 3} more)' if len(others) > 3 else '')
    findings = []
    for entry in grown_entries(base, new):
        findings.append(Finding(
            new.path, entry.line, 1, 'OG520',
            f'baseline grown: accepts {entry.kind} on {", ".join(entry.tests) or entry.scope} '
            f'in {entry.path}, in the same change as {shown}; the baseline grows only in a '
            'change of its own',
            'commit the baseline alone, with no test or src/ edits, so a person reviews it',
        ))
    for excluded in grown_excluded(base, new):
        findings.append(Finding(
            new.path, 1, 1, 'OG520',
            f'baseline grown: excludes {excluded.nodeid} ({excluded.by}), in the same change '
            f'as {shown}; the baseline grows only in a change of its own',
            'commit the baseline alone, with no test or src/ edits, so a person reviews it',
        ))
    for patch in grown_patches(base, new):
        findings.append(Finding(
            new.path, patch.line, 1, 'OG520',
            f'baseline grown: accepts {patch.path}: {patch.what} ({patch.code}), in the same '
            f'change as {shown}; the baseline grows only in a change of its own',
            'commit the baseline alone, with no test or src/ edits, so a person reviews it',
        ))
    for link in grown_links(base, new):
        findings.append(Finding(
            new.path, link.line, 1, 'OG520',
            f'baseline grown: accepts {link.path}, a symlink to {link.target}, in the same '
            f'change as {shown}; the baseline grows only in a change of its own',
            'commit the baseline alone, with no test or src/ edits, so a person reviews it',
        ))
    for unparsable in grown_unparsable(base, new):
        findings.append(Finding(
            new.path, unparsable.line, 1, 'OG520',
            f'baseline grown: accepts {unparsable.path} unread ({unparsable.why}), in the '
            f'same change as {shown}; the baseline grows only in a change of its own',
            'commit the baseline alone, with no test or src/ edits, so a person reviews it',
        ))
    return findings


def baseline_growth_findings(ctx) -> list[Finding]:  # type: ignore[no-untyped-def]
    """Rule 42 for the baseline: grown in a change that also edits test code or src/.

    Judged on the change's two sides like the ledger (row 27); moving the baseline
    (``baseline = "..."`` in the table) is no way around it.
    """
    changes = ctx.changes
    if not changes.has_base or not ctx.base_cfg.has_table:
        return []  # the adoption itself: nothing was guarded before, nothing grew
    cfg = ctx.cfg
    base_path = ctx.base_cfg.baseline
    touched = changes.touched()
    if cfg.baseline not in touched and base_path not in touched:
        return []
    others = [p for p in touched if cfg.is_test_code(p) or cfg.is_src(p)]
    if not others:
        return []  # alone, the baseline diff is what a person reviews
    raw = changes.new.read(cfg.baseline)
    new = parse_baseline(raw, cfg.baseline) if raw is not None else empty_baseline(cfg.baseline)
    raw = changes.read_base(base_path)
    try:
        base = parse_baseline(raw, base_path) if raw is not None else empty_baseline(base_path)
    except ConfigError:
        base = empty_baseline(base_path)  # a base nobody could read accepted nothing
    return growth_findings(base, new, others)
