"""What each property module's content was judged to hold (a verdict cache, rule 31).

check-properties-present must find a real test among the property modules on every
commit, whatever the change: the folder can have been emptied by an earlier commit made
with ``--no-verify``, so "nothing staged there" is no reason to skip it. What it finds in
one module depends on the module's bytes alone (and on oracle-guard's own code): the
identities of the tests that do something and the hollow ones with their lines. So the
verdict is kept per content, and a commit that stages no property module reads no
property module and parses nothing: the object ids ``git ls-tree`` lists are the keys.

Where and when (``reading/cache_policy.py``, the scan cache's rule too):

* under ``$XDG_CACHE_HOME/oracle-guard/`` (``~/.cache/oracle-guard/``), never in the
  repository; one file per oracle-guard version, Python version and digest of the source
  of every module a verdict comes from, so changed code never reads an old verdict;
* never when ``CI`` is set, unless ``ORACLE_GUARD_SCAN_CACHE=1``;
  ``ORACLE_GUARD_SCAN_CACHE=0`` turns it off everywhere.

The key of a content is git's object id of the blob (``g<id>``), which git computed from
the bytes; the working tree's files, which no blob may match, are keyed by the SHA-256 of
their bytes (``s<hex>``). git's object ids are SHA-1 hardened against the known collision
attacks (git refuses such objects since 2.13) or SHA-256. An entry is written only by this
process, for bytes it has just parsed itself (a module that failed to parse, which may be
a MemoryError, is judged again every time); a line that does not read back exactly as
it was written (torn by two runs at once, edited, binary garbage) is ignored, never
trusted: that content is judged again.
"""
from __future__ import annotations

import os

from oracle_guard.reading.cache_policy import append
from oracle_guard.reading.cache_policy import cache_folder
from oracle_guard.reading.cache_policy import enabled  # noqa: F401 -- where and when

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterable

# Past this size the file is started afresh: a cache, not a record.
_MAX_BYTES = 8 << 20
_HEX = frozenset('0123456789abcdef')
# The modules a property module's verdict comes from (beside this one).
_SOURCES = ('reading/scanner.py', 'reading/import_aliases.py', 'reading/source_lines.py',
            'reading/runner_access.py', 'reading/silence_prefilter.py',
            'reading/property_reader.py', 'reading/module_values.py',
            'hooks/check_properties_present.py', 'reading/verdict_cache.py')


def _code_digest() -> str:
    """The version, the interpreter and the bytes of every module a verdict comes from.

    CRC-32 and the lengths, not a cryptographic hash (hashlib costs a commit more to
    import than its whole check): nobody chooses these bytes to collide, they only tell
    one installed version of oracle-guard from another."""
    import sys
    import zlib

    from oracle_guard import __version__

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    crc = zlib.crc32(f'{__version__} {sys.version}'.encode())
    sizes = []
    for relative in _SOURCES:
        try:
            with open(os.path.join(package, relative), 'rb') as f:
                data = f.read()
        except OSError:
            data = b'?'
        crc = zlib.crc32(data, crc)
        sizes.append(len(data))
    return f'{crc:08x}{zlib.crc32(repr(sizes).encode()):08x}'


def content_key(object_id: str | None, source: bytes | None = None) -> str | None:
    """``g<object id>``; without one, ``s<SHA-256 of source>``; None when neither."""
    if object_id and set(object_id) <= _HEX and len(object_id) in (40, 64):
        return 'g' + object_id
    if source is None:
        return None
    import hashlib  # only for the working tree's files (--all-files)

    return 's' + hashlib.sha256(source).hexdigest()


class Verdict:
    """What one property module holds: the identities of its real tests, and its
    hollow tests (line, identity) in the order they were found."""

    __slots__ = ('real', 'hollow')

    def __init__(self, real: Iterable[str], hollow: Iterable[tuple[int, str]]) -> None:
        self.real = tuple(real)
        self.hollow = tuple(hollow)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Verdict) and (self.real, self.hollow) == \
            (other.real, other.hollow)

    def __repr__(self) -> str:
        return f'Verdict(real={self.real!r}, hollow={self.hollow!r})'

    def line(self, key: str) -> str:
        return (f'{key}\t{" ".join(self.real)}\t'
                f'{" ".join(f"{n}:{i}" for n, i in self.hollow)}\n')


def _identity(word: str) -> bool:
    return bool(word) and all(part.isidentifier() for part in word.split('::'))


def _parse(line: str) -> tuple[str, Verdict] | None:
    """One line as ``Verdict.line`` wrote it, or None when it is anything else."""
    if not line.endswith('\n'):
        return None  # torn: the run writing it stopped (or another one wrote at once)
    fields = line[:-1].split('\t')
    if len(fields) != 3:
        return None
    key, real, hollow = fields
    if len(key) not in (41, 65) or key[0] not in 'gs' or not set(key[1:]) <= _HEX:
        return None
    reals = real.split(' ') if real else []
    hollows = []
    for item in hollow.split(' ') if hollow else []:
        number, _, identity = item.partition(':')
        if not (number.isdigit() and number.isascii()) or not _identity(identity):
            return None
        hollows.append((int(number), identity))
    if not all(_identity(r) for r in reals):
        return None
    return key, Verdict(reals, hollows)


class VerdictCache:
    """The verdicts of one code version; ``get``, ``put``, then ``save`` appends."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.known: dict[str, Verdict] = {}
        self.new: list[str] = []
        try:
            if os.path.getsize(path) <= _MAX_BYTES:
                with open(path, encoding='utf-8', errors='replace', newline='\n') as f:
                    for line in f:
                        parsed = _parse(line)
                        if parsed is not None:
                            self.known[parsed[0]] = parsed[1]
        except (OSError, ValueError):
            pass

    @classmethod
    def for_this_code(cls) -> VerdictCache:
        return cls(os.path.join(cache_folder(), f'properties-{_code_digest()}.txt'))

    def get(self, key: str | None) -> Verdict | None:
        return self.known.get(key) if key else None

    def put(self, key: str | None, verdict: Verdict) -> None:
        if key and key not in self.known:
            self.known[key] = verdict
            line = verdict.line(key)
            if _parse(line) == (key, verdict):  # what cannot be read back is not written
                self.new.append(line)

    def save(self) -> None:
        """Append what this run learnt; a cache that cannot be written is no error."""
        if self.new and append(self.path, ''.join(self.new), _MAX_BYTES):
            self.new = []
