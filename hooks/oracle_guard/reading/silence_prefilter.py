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
    found = [word for word in MARKER_WORDS if word in source]
    normalized = b''
    if not source.isascii():
        import unicodedata

        # A legacy codec's letters normalise too: latin-1's b"\xaa" is "a" to Python.
        codec = declared_codec(source) or 'utf-8'
        text = unicodedata.normalize('NFKC', source.decode(codec, 'replace'))
        normalized = text.encode('utf-8', 'replace')
        found += [word for word in MARKER_WORDS if word in normalized and word not in found]
    if found == [b'parametrize']:
        return _may_pass_an_empty_parameter_set(source) or \
            _may_pass_an_empty_parameter_set(normalized)
    return bool(found)


# `parametrize` alone silences a test only with an empty parameter set: a literal `[]`
# or `()` (blanks, comments and line continuations inside) as the second positional
# argument, so after a comma and any opening parentheses. Tokens are ASCII, so the bytes
# are searched as they are. Each repetition starts with a distinct character (a comment
# runs to its line's end), so the search cannot backtrack out of linear time. The scanner
# reads the positional form only; should it learn `argvalues=[]`, this search must too.
_GAP = rb'(?:[ \t\f\r\n\\]|#[^\r\n]*[\r\n])*'
_EMPTY_PARAMETER_SET = rb',(?:[ \t\f\r\n\\(]|#[^\r\n]*[\r\n])*[\[(]' + _GAP + rb'[\])]'


def _may_pass_an_empty_parameter_set(source: bytes) -> bool:
    """Whether a file that names no silence but ``parametrize`` can hold
    ``parametrize(names, [])``; most parametrized files cannot, and are not parsed."""
    import re

    return re.search(_EMPTY_PARAMETER_SET, source) is not None


# -- rule 36: what Python decodes must be what is reviewed ---------------------------------

def declared_codec(source: bytes) -> str | None:
    """The codec a PEP 263 coding cookie names (as written), or None. Python looks at the
    first line, and at the second only when the first is blank or a comment."""
    if b'coding' not in source[:1024]:
        return None  # the usual file: no regex
    import re

    if source.startswith(b'\xef\xbb\xbf'):
        source = source[3:]
    for line in re.split(rb'\r\n|\r|\n', source[:1024], maxsplit=2)[:2]:
        match = re.match(rb'^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)', line)
        if match:
            return match.group(1).decode('ascii', 'replace')
        if not re.match(rb'^[ \t\f]*(?:[#\r\n]|$)', line):
            return None
    return None


def ascii_compatible(name: str) -> bool:
    """Whether every ASCII byte stands for itself under this codec and every other byte is
    one character of its own (latin-1, cp1252, iso-8859-15), or fails the import (ascii):
    code then reads the same as UTF-8 shows it. Not so for utf-7 (``+AAo-`` is a newline), utf-16/32, multi-byte codecs
    whose second byte may be ``\\`` or ``"``, or a codec Python does not know."""
    import codecs
    import importlib

    try:
        info = codecs.lookup(name)
    except LookupError:
        return False
    if info.name in ('utf-8', 'iso8859-1', 'ascii'):
        return True
    # A charmap codec (encodings/cp1252.py) decodes byte by byte from one table, with no
    # state: iso2022_jp's escapes or utf-7's "+" cannot change what later bytes mean.
    try:
        module = importlib.import_module('encodings.' + info.name.replace('-', '_'))
    except ImportError:
        return False
    table = getattr(module, 'decoding_table', None)
    return isinstance(table, str) and len(table) == 256 and \
        table[:128] == bytes(range(128)).decode('ascii')


def foreign_encoding(source: bytes) -> tuple[int, str] | None:
    """(line, name) of a PEP 263 coding cookie under which ASCII bytes do not stand for
    themselves (rule 36), or None.

    Python decodes the file with the declared codec; everything oracle-guard reads (and
    a reviewer sees) is the bytes as text. Under ``# -*- coding: utf-7 -*-`` a skip can look
    like a comment, so such a file is refused rather than scanned. A legacy single-byte
    codec (latin-1, cp1252) changes only what non-ASCII bytes mean: the code reads the same.
    """
    name = declared_codec(source)
    if name is None:
        return None
    normal = name[:12].lower().replace('_', '-')
    if normal == 'utf-8' or normal.startswith('utf-8-') or ascii_compatible(name):
        return None
    import re

    body = source[3:] if source.startswith(b'\xef\xbb\xbf') else source
    first = re.split(rb'\r\n|\r|\n', body[:1024], maxsplit=1)[0]
    return (1 if re.search(rb'coding[:=]', first) else 2), name


# -- rule 35b: can the file compute a name of pytest's? -----------------------------------

# A computed module name needs no other word; the rest reach pytest or unittest through an
# object the file names (or imports by a computed name, which the first words select).
_IMPORT_WORDS = (b'import_module', b'__import__')
_LOOKUP_WORDS = (b'getattr', b'globals', b'locals', b'vars', b'__dict__', b'modules')
_RUNNER_WORDS = (b'pytest', b'unittest')


def might_compute(source: bytes) -> bool:
    """The byte prefilter for rule 35b: a file that cannot compute a name of pytest's marks,
    outcomes or internals is not parsed for it. Identifiers are NFKC-normalised by Python,
    so a file with non-ASCII bytes is searched in that form too."""
    if not source.isascii():
        import unicodedata

        codec = declared_codec(source) or 'utf-8'
        source = unicodedata.normalize('NFKC', source.decode(codec, 'replace')).encode(
            'utf-8', 'replace')
    if any(word in source for word in _IMPORT_WORDS):
        return True
    if b'modules' in source and b'sys' in source:
        return True  # a key into sys.modules imports by name, as import_module does
    return any(word in source for word in _LOOKUP_WORDS) and \
        any(word in source for word in _RUNNER_WORDS)


# -- rule 35: can the file assign to __code__ or to a pytest object? ----------------------

# What `from pytest import *` binds that has attributes worth patching.
_PYTEST_STAR = (b'mark', b'skip', b'xfail', b'importorskip', b'param')
_NAME_CHARS = frozenset(b'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_')
_RUN_CHARS = _NAME_CHARS | frozenset(b'. \t')
_AUGMENTED = (b'+', b'-', b'*', b'/', b'%', b'@', b'&', b'|', b'^', b'<<', b'>>', b'//', b'**')


def _store_follows(window: bytes) -> bool:
    """Whether ``window`` (what follows a name on its line) assigns an attribute reached
    through the name: ``.attr = ...``, ``.a.b += ...``, ``.attr, y = ...``, ``.a in``."""
    i, end = 0, len(window)
    while i < end and window[i] in b' \t':
        i += 1
    if i == end or window[i] != ord('.'):
        return False
    start = i
    while i < end and window[i] in _RUN_CHARS:
        i += 1
    run, rest = window[start:i], window[i:]
    if rest.startswith(b',') or b' in ' in run + b' ':  # a tuple target, `for ... in`
        return True
    if rest.startswith(b'=') and not rest.startswith(b'=='):
        return True
    return any(rest.startswith(op + b'=') for op in _AUGMENTED)


def _stores_through(source: bytes, name: bytes) -> bool:
    """Whether some line assigns an attribute reached through ``name``. Each use of the
    name is looked at in a window of its own line, so a huge line costs linear time."""
    start = 0
    while True:
        at = source.find(name, start)
        if at < 0:
            return False
        start = at + len(name)
        if at and source[at - 1] in _NAME_CHARS | {ord('.')}:
            continue  # part of a longer name, or an attribute of something else
        if start < len(source) and source[start] in _NAME_CHARS:
            continue
        end = source.find(b'\n', start, start + 200)
        if _store_follows(source[start:end if end != -1 else start + 200]):
            return True


def _pytest_names(source: bytes) -> list[bytes] | None:
    """Names bound from pytest (``import pytest as pt``, ``from pytest import mark as m``),
    or None when an import list spans lines (the parser reads it)."""
    names = [b'pytest']
    for marker in (b'import pytest as ', b'from pytest import '):
        start = 0
        while True:
            at = source.find(marker, start)
            if at < 0:
                break
            start = at + len(marker)
            end = source.find(b'\n', start)
            listed = source[start:end if end != -1 else len(source)].split(b'#', 1)[0]
            if b'(' in listed or b'\\' in listed:
                return None
            if b'*' in listed:
                names.extend(_PYTEST_STAR)
            names.extend(part.split()[-1] for part in listed.split(b',') if part.split())
    return names


def might_tamper(source: bytes) -> bool:
    """The byte prefilter for rule 35: a file that cannot assign to ``__code__`` or to a
    pytest object is not parsed for it. Plain byte searches, no regex: each use of pytest
    (or a name imported from it) is looked at on its own line."""
    source = as_python_reads(source)
    if b'__code__' in source or b'_pytest' in source or \
            any(word in source for word in _IMPORT_WORDS):
        return True  # `import_module("_py" "test")` names _pytest in pieces
    if b'pytest' not in source:
        return False
    if any(word in source for word in (b'setattr', b'__dict__', b'vars(', b'del ', b'del\t')):
        return True
    names = _pytest_names(source)
    if names is None:
        return True
    return any(_stores_through(source, name) for name in dict.fromkeys(names))


def as_python_reads(source: bytes) -> bytes:
    """The bytes as Python reads their identifiers: NFKC-normalised when any byte is not
    ASCII (``\uff47iven`` is ``given``, ``__\uff43ode__`` is ``__code__``), the bytes
    themselves otherwise, so a byte search for a name cannot be dodged by its fullwidth
    spelling. Strings and comments normalise too, which can only add a hit."""
    if source.isascii():
        return source
    import unicodedata

    codec = declared_codec(source) or 'utf-8'
    return source + b'\n' + unicodedata.normalize(
        'NFKC', source.decode(codec, 'replace')).encode('utf-8', 'replace')
