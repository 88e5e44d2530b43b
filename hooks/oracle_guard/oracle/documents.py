"""Strict readers for the human-owned JSON and YAML files.

Both reject duplicate keys (a second row with the same key silently wins in
``json.loads``) and remember the line of every mapping and key, so a finding can
point at the row it is about. YAML aliases are refused outright: a ledger has no
use for them and they are how a "billion laughs" document explodes.
"""
from __future__ import annotations

import bisect

from oracle_guard.findings import ConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any


class LinedDict(dict):  # type: ignore[type-arg]
    """A mapping that knows the line it starts on and the line of each key."""

    line: int = 0
    key_lines: dict[str, int]

    def line_of(self, key: str) -> int:
        return getattr(self, 'key_lines', {}).get(key, self.line)


def decode_text(raw: bytes, source: str) -> str:
    from oracle_guard.config import decode_utf8_sig

    try:
        return decode_utf8_sig(raw)
    except UnicodeDecodeError as exc:
        raise ConfigError(
            source, raw.count(b'\n', 0, exc.start) + 1,
            f'is not valid UTF-8 (byte {exc.start})', 'save the file as UTF-8',
        ) from None


_WS = r'[ \t\n\r]*'


def _line_index(text: str):  # type: ignore[no-untyped-def]
    """offset -> 1-based line, in O(log n): counting newlines per key is quadratic."""
    import re

    newlines = [m.start() for m in re.finditer('\n', text)]

    def line_of(offset: int) -> int:
        return bisect.bisect_left(newlines, offset) + 1

    return line_of


def _make_object_parser(text: str, source: str):  # type: ignore[no-untyped-def]
    import json.decoder
    import re
    from json.decoder import JSONDecodeError

    whitespace = re.compile(_WS).match
    scan_string = json.decoder.scanstring
    line_of = _line_index(text)

    def parse_object(s_and_end, strict, scan_once, object_hook, object_pairs_hook,
                     memo=None, _w=whitespace):  # type: ignore[no-untyped-def]
        s, end = s_and_end
        result = LinedDict()
        result.line = line_of(end - 1)
        result.key_lines = {}
        end = _w(s, end).end()
        if s[end:end + 1] == '}':
            return result, end + 1
        while True:
            if s[end:end + 1] != '"':
                raise JSONDecodeError('Expecting property name enclosed in double quotes',
                                      s, end)
            key_line = line_of(end)
            key, end = scan_string(s, end + 1, strict)
            if key in result:
                raise ConfigError(
                    source, key_line,
                    f'duplicate key {key!r} (first on line {result.key_lines[key]})',
                    'keep one of the two entries',
                )
            end = _w(s, end).end()
            if s[end:end + 1] != ':':
                raise JSONDecodeError("Expecting ':' delimiter", s, end)
            end = _w(s, end + 1).end()
            try:
                value, end = scan_once(s, end)
            except StopIteration as err:
                raise JSONDecodeError('Expecting value', s, err.value) from None
            result[key] = value
            result.key_lines[key] = key_line
            end = _w(s, end).end()
            nextchar = s[end:end + 1]
            end += 1
            if nextchar == '}':
                return result, end
            if nextchar != ',':
                raise JSONDecodeError("Expecting ',' delimiter", s, end - 1)
            end = _w(s, end).end()

    return parse_object


def _reject_constant(name: str) -> Any:
    raise ValueError(f'{name} is not valid JSON')


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise ValueError('duplicate key')
    return found


def _load_json_without_lines(raw: bytes, source: str) -> tuple[bool, Any]:
    """(True, the document) when it is valid strict JSON, read by the json module's C
    scanner (a tenth of the time); (False, None) for anything ``load_json`` refuses,
    whose message and line it then gives."""
    import json

    try:
        text = decode_text(raw, source)
        return True, json.loads(text, object_pairs_hook=_unique_keys,
                                parse_constant=_reject_constant)
    except (ConfigError, ValueError, RecursionError):
        return False, None


def load_json(raw: bytes, source: str, lines: bool = True) -> Any:
    """Parse JSON strictly: duplicate keys, NaN and deep nesting become ConfigErrors.

    ``lines=False``, for a reader that never names a line of a valid document: its
    mappings are plain dicts without ``line_of``, read much faster; an invalid document
    is refused with the same error and line either way."""
    if not lines:
        valid, document = _load_json_without_lines(raw, source)
        if valid:
            return document
    import json  # a run that reads no JSON document (the ledger is YAML) does without
    import json.scanner
    from json.decoder import JSONDecodeError

    text = decode_text(raw, source)
    decoder = json.JSONDecoder(parse_constant=_reject_constant)
    decoder.parse_object = _make_object_parser(text, source)  # type: ignore[attr-defined]
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    try:
        return decoder.decode(text)
    except JSONDecodeError as exc:
        raise ConfigError(source, exc.lineno, f'invalid JSON: {exc.msg} (column {exc.colno})',
                          'fix the syntax; a JSON linter shows the spot') from None
    except RecursionError:
        raise ConfigError(source, 1, 'invalid JSON: nested too deeply') from None
    except ValueError as exc:
        raise ConfigError(source, 1, f'invalid JSON: {exc}') from None


def load_yaml(raw: bytes, source: str) -> Any:
    """Parse YAML safely: no aliases, no duplicate keys, no Python objects.

    A file written in the plain part of YAML (``plain_yaml``) is read without importing
    PyYAML, which costs more than a one-file commit's own work; anything else, and every
    error, is PyYAML's."""
    from oracle_guard.oracle.plain_yaml import NOT_PLAIN
    from oracle_guard.oracle.plain_yaml import read_plain

    text = decode_text(raw, source)
    value = read_plain(text, LinedDict)
    if value is not NOT_PLAIN:
        return value
    return load_yaml_text(text, source)


def load_yaml_text(text: str, source: str) -> Any:
    """PyYAML's reading of a decoded document (the reference ``plain_yaml`` is held to)."""
    import yaml  # only runs that read a YAML file plain_yaml cannot read pay for it

    class StrictLoader(yaml.SafeLoader):
        def compose_node(self, parent, index):  # type: ignore[no-untyped-def]
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise ConfigError(
                    source, event.start_mark.line + 1,
                    'YAML aliases (*name) are not allowed here',
                    'write the value out in full',
                )
            return super().compose_node(parent, index)

        def construct_mapping(self, node, deep=False):  # type: ignore[no-untyped-def]
            result = LinedDict()
            result.line = node.start_mark.line + 1
            result.key_lines = {}
            for key_node, value_node in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    hash(key)
                except TypeError:
                    raise ConfigError(source, key_node.start_mark.line + 1,
                                      'a mapping key must be a plain value') from None
                if key in result:
                    raise ConfigError(
                        source, key_node.start_mark.line + 1,
                        f'duplicate key {key!r} (first on line {result.key_lines[key]})',
                        'keep one of the two entries',
                    )
                result[key] = self.construct_object(value_node, deep=True)
                result.key_lines[key] = key_node.start_mark.line + 1
            return result

    def construct_timestamp(loader, node):  # type: ignore[no-untyped-def]
        # `expires: 2026-02-30` looks like a date to YAML but is none: keep the text, so
        # the rule that needs a date reports it with its line instead of a traceback.
        try:
            return yaml.SafeLoader.construct_yaml_timestamp(loader, node)
        except (ValueError, OverflowError):
            return loader.construct_scalar(node)

    StrictLoader.add_constructor('tag:yaml.org,2002:map', StrictLoader.construct_mapping)
    StrictLoader.add_constructor('tag:yaml.org,2002:timestamp', construct_timestamp)
    loader = None
    try:
        loader = StrictLoader(text)
        return loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise ConfigError(
            source, mark.line + 1 if mark else 0,
            f'invalid YAML: {exc.problem or exc.context}', 'fix the syntax',
        ) from None
    except yaml.reader.ReaderError as exc:
        line = text.count('\n', 0, exc.position) + 1
        raise ConfigError(source, line, f'invalid YAML: character {exc.character!r} is not '
                          'allowed', 'remove control characters from the file') from None
    except yaml.YAMLError as exc:
        raise ConfigError(source, 0, f'invalid YAML: {exc}') from None
    except RecursionError:
        raise ConfigError(source, 1, 'invalid YAML: nested too deeply') from None
    finally:
        if loader is not None:
            loader.dispose()
