"""Which test-file contents are known to hold no silence and no tampering (a scan cache).

``pre-commit run --all-files`` and history mode scan every test file, and on a
developer's machine almost all of them are the same bytes as last time. check-named-freezes
keeps, per user, the SHA-256 of every file content whose scan found nothing at all — no
silence, no rule 35 site, no unreadable coding (those files' findings are ``[]`` whatever
the configuration, the ledger or the date) — and does not parse such a content again.
A file with a silence is judged in full every time: its verdict depends on the ledger,
the baseline and today.

Where and when:

* under ``$XDG_CACHE_HOME/oracle-guard/`` (``~/.cache/oracle-guard/``), never in the
  repository; one file per oracle-guard version, Python version and digest of the
  scanner's own source, so a scanner that changed never reads an old verdict;
* only in ``--all-files`` and history mode (a commit scans a few files);
* never when ``CI`` is set, unless ``ORACLE_GUARD_SCAN_CACHE=1``;
  ``ORACLE_GUARD_SCAN_CACHE=0`` turns it off everywhere.

Why it cannot be poisoned by a pull request: an entry is written only by this process,
for the bytes it has just scanned and found clean, under their SHA-256 (not git's SHA-1,
so no colliding pair of contents can share an entry); a content that differs by one byte
is another key. What stays outside this guarantee is anyone who can write the user's
cache folder, which is why CI, where a restored cache may have been written by a pull
request's own code, does not read it unless asked.
"""
from __future__ import annotations

import hashlib
import os

from oracle_guard.reading.cache_policy import append
from oracle_guard.reading.cache_policy import cache_folder as _folder
from oracle_guard.reading.cache_policy import enabled  # noqa: F401 -- where and when

# Past this size the file is started afresh: a cache, not a record.
_MAX_BYTES = 32 << 20
_HEX = frozenset('0123456789abcdef')


def _scanner_digest() -> str:
    """The version, the interpreter and the source of every module a scan runs."""
    import sys

    from oracle_guard import __version__

    here = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha256(f'{__version__} {sys.version}'.encode())
    for path in (os.path.join(here, 'scanner.py'), os.path.join(here, 'silence_prefilter.py'),
                 os.path.join(here, 'helper_modules.py'),
                 os.path.join(os.path.dirname(here), 'hooks', 'check_named_freezes.py'),
                 os.path.abspath(__file__)):
        try:
            with open(path, 'rb') as f:
                digest.update(f.read())
        except OSError:
            digest.update(b'?')
    return digest.hexdigest()[:16]


class ScanCache:
    """The clean contents of one scanner version; ``add`` collects, ``save`` appends."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.known: set[str] = set()
        self.new: list[str] = []
        try:
            if os.path.getsize(path) <= _MAX_BYTES:
                with open(path, encoding='ascii', errors='replace') as f:
                    # A line torn by two runs writing at once is dropped, never misread.
                    self.known = {line[:64] for line in f
                                  if len(line) == 65 and set(line[:64]) <= _HEX}
        except OSError:
            pass

    @classmethod
    def for_this_scanner(cls) -> ScanCache:
        return cls(os.path.join(_folder(), f'clean-{_scanner_digest()}.txt'))

    @staticmethod
    def key(source: bytes) -> str:
        return hashlib.sha256(source).hexdigest()

    def is_clean(self, key: str) -> bool:
        return key in self.known

    def add(self, key: str) -> None:
        if key not in self.known:
            self.known.add(key)
            self.new.append(key)

    def save(self) -> None:
        """Append what this run learnt; a cache that cannot be written is no error."""
        if self.new and append(self.path, ''.join(f'{key}\n' for key in self.new), _MAX_BYTES):
            self.new = []
