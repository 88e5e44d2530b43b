"""A reader for plain YAML files, so most commits need not import PyYAML.

Every commit reads the freeze ledger (a row expires while nothing changes), and importing
PyYAML alone costs about twice a clean interpreter's start-up. Ledgers are written in a
small part of YAML: block mappings and sequences, one-line scalars, comments. This module
reads exactly that part and gives up (returns ``NOT_PLAIN``) on anything else, which
``documents.load_yaml`` then hands to PyYAML: flow collections other than ``[]``, quoting
with escapes, multi-line scalars, anchors, aliases, tags, directives, tabs, ``\\r``,
non-ASCII text, duplicate keys, numbers other than plain decimals, every error.

What it returns is what PyYAML's safe loader (as ``documents.load_yaml`` configures it)
returns for the same text: the same values of the same types, ``LinedDict`` mappings with
the same lines. ``tests/test_plain_yaml.py`` holds it to PyYAML on examples and on
seeded random documents.
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from oracle_guard.oracle.documents import LinedDict


class _NotPlain(Exception):
    """The text leaves the plain part of YAML: PyYAML reads it."""


NOT_PLAIN = object()

# YAML 1.1 as PyYAML resolves a plain scalar (yaml/resolver.py, yaml/constructor.py).
_BOOLS = {'yes': True, 'Yes': True, 'YES': True, 'no': False, 'No': False, 'NO': False,
          'true': True, 'True': True, 'TRUE': True, 'false': False, 'False': False,
          'FALSE': False, 'on': True, 'On': True, 'ON': True, 'off': False, 'Off': False,
          'OFF': False}
_NULLS = ('~', 'null', 'Null', 'NULL')
# First characters of a number, a timestamp, a merge key or a value key: only plain
# decimals and YYYY-MM-DD dates are read here; the rest is PyYAML's.
_NUMERIC_START = frozenset('-+.0123456789<=')
# Characters that cannot start a plain scalar, or start one PyYAML reads differently.
_INDICATORS = frozenset('-?:,[]{}#&*!|>\'"%@`')
_PRINTABLE = frozenset(chr(c) for c in range(0x20, 0x7f)) | {'\n'}
_DIGITS = frozenset('0123456789')


def read_plain(text: str, mapping: type[LinedDict]) -> Any:
    """The document's value, or ``NOT_PLAIN`` when it is not (only) plain YAML.

    ``mapping`` is ``documents.LinedDict``, passed in because documents imports this
    module (a mapping knows its line and the line of each key)."""
    if not set(text) <= _PRINTABLE:
        return NOT_PLAIN  # tabs, \r, control characters, non-ASCII: PyYAML decides
    lines = []
    for number, line in enumerate(text.split('\n'), 1):
        content = line.lstrip(' ')
        if not content or content.startswith('#'):
            continue
        if line.startswith(('---', '...', '%')):
            return NOT_PLAIN
        lines.append((number, len(line) - len(content), content.rstrip(' ')))
    if not lines:
        return NOT_PLAIN  # an empty document: PyYAML says None
    try:
        value, at = _block(lines, 0, lines[0][1], mapping)
    except _NotPlain:
        return NOT_PLAIN
    if at != len(lines) or lines[0][1] != 0:
        return NOT_PLAIN
    return value


def _block(lines: list[tuple[int, int, str]], at: int, indent: int,
           mapping: type[LinedDict]) -> tuple[Any, int]:
    """The block mapping or sequence starting at ``lines[at]`` (which is at ``indent``)."""
    content = lines[at][2]
    if content == '-' or content.startswith('- '):
        return _sequence(lines, at, indent, mapping)
    return _mapping(lines, at, indent, None, mapping)


def _key_and_rest(content: str) -> tuple[str, str] | None:
    """``key: rest`` -> (key, rest); None when the line is not a plain key."""
    colon = content.find(':')
    while colon != -1 and not (colon + 1 == len(content) or content[colon + 1] == ' '):
        colon = content.find(':', colon + 1)
    if colon <= 0:
        return None
    key = content[:colon]
    if key[0] in _INDICATORS or ' #' in key or key.endswith(' '):
        raise _NotPlain
    return key, content[colon + 1:].lstrip(' ')


def _mapping(lines: list[tuple[int, int, str]], at: int, indent: int,
             first: tuple[int, str] | None, mapping: type[LinedDict]) -> tuple[LinedDict, int]:
    """A block mapping whose keys sit at column ``indent``. ``first``: (line, content)
    of a first key that shares its line with a sequence dash."""
    result = mapping()
    result.key_lines = {}
    while True:
        if first is not None:
            number, content = first
            first = None
        elif at < len(lines) and lines[at][1] == indent:
            number, _, content = lines[at]
            at += 1
        else:
            break
        pair = _key_and_rest(content)
        if pair is None:
            raise _NotPlain
        key = _scalar_value(pair[0])
        if not isinstance(key, str) or key in result:
            raise _NotPlain  # a duplicate is an error PyYAML words
        if not result.key_lines:
            result.line = number
        rest = pair[1]
        if rest and not rest.startswith('#'):
            value = _inline(rest)
        elif at < len(lines) and (lines[at][1] > indent or (
                lines[at][1] == indent and (lines[at][2] == '-' or
                                            lines[at][2].startswith('- ')))):
            value, at = _block(lines, at, lines[at][1], mapping)
        else:
            value = None
        result[key] = value
        result.key_lines[key] = number
    if at < len(lines) and lines[at][1] > indent:
        raise _NotPlain  # an over-indented line: a continuation or an error
    return result, at


def _sequence(lines: list[tuple[int, int, str]], at: int, indent: int,
              mapping: type[LinedDict]) -> tuple[list, int]:
    items: list[Any] = []
    while at < len(lines) and lines[at][1] == indent and (
            lines[at][2] == '-' or lines[at][2].startswith('- ')):
        number, _, content = lines[at]
        at += 1
        item = content[1:].lstrip(' ')
        if not item or item.startswith('#'):
            raise _NotPlain  # `-` alone: the item's node is on the lines below
        if item == '-' or item.startswith('- '):
            raise _NotPlain  # a sequence in a sequence
        column = indent + len(content) - len(item)
        if _key_and_rest(item) is not None:
            value, at = _mapping(lines, at, column, (number, item), mapping)
            items.append(value)
        else:
            items.append(_inline(item))
            if at < len(lines) and lines[at][1] > indent:
                raise _NotPlain  # a multi-line scalar
    if at < len(lines) and lines[at][1] > indent:
        raise _NotPlain
    return items, at


def _inline(text: str) -> Any:
    """A value written on the line of its key or dash: ``[]``, a quoted or plain scalar."""
    if text[0] in '"\'':
        quote = text[0]
        end = text.find(quote, 1)
        if end == -1 or '\\' in text[:end] or quote == '\'' and text[end + 1:end + 2] == '\'':
            raise _NotPlain
        after = text[end + 1:]
        if after and not (after.startswith(' ') and
                          (not after.strip(' ') or after.lstrip(' ').startswith('#'))):
            raise _NotPlain
        return text[1:end]
    if text.startswith('[]'):
        after = text[2:]
        if not after or (after.startswith(' ') and after.lstrip(' ').startswith('#')):
            return []
        raise _NotPlain
    hash_at = text.find(' #')
    if hash_at != -1:
        text = text[:hash_at].rstrip(' ')
    if text[0] in _INDICATORS or ': ' in text or text.endswith(':'):
        raise _NotPlain
    return _scalar_value(text)


def _scalar_value(text: str) -> Any:
    """A plain scalar as PyYAML's safe loader resolves it (the forms read here)."""
    first = text[0]
    if first in _NUMERIC_START:
        if set(text) <= _DIGITS and (text == '0' or first != '0'):
            return int(text)
        if len(text) == 10 and text[4] == '-' and text[7] == '-' and \
                set(text[:4] + text[5:7] + text[8:]) <= _DIGITS:
            import datetime

            try:
                return datetime.date(int(text[:4]), int(text[5:7]), int(text[8:]))
            except (ValueError, OverflowError):
                return text  # documents.load_yaml keeps an impossible date as its text
        raise _NotPlain
    if text in _BOOLS:
        return _BOOLS[text]
    if text in _NULLS:
        return None
    return text
