"""The scanner's byte prefilter, in a module of its own.

A commit that stages test files without any silence word is decided here, without
importing the scanner (and with it ``ast`` and ``re``).
"""
from __future__ import annotations

# Every silence spelling contains one of these words, whatever it is imported as:
# an alias still has to import the original name once.
MARKER_WORDS = (b'skip', b'Skip', b'xfail', b'XFail', b'expectedFailure', b'__test__',
                b'parametrize')


def might_silence(source: bytes) -> bool:
    """The byte prefilter: files without a marker word are never parsed.

    Python reads identifiers NFKC-normalised (``pytest.\uff53kip`` is ``pytest.skip``), so a
    file with non-ASCII bytes is searched in that form too.
    """
    if any(word in source for word in MARKER_WORDS):
        return True
    if source.isascii():
        return False
    import unicodedata

    text = unicodedata.normalize('NFKC', source.decode('utf-8', 'replace'))
    normalized = text.encode('utf-8', 'replace')
    return any(word in normalized for word in MARKER_WORDS)
