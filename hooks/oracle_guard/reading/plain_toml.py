"""A reader for the plain subset of TOML that pyproject.toml files are written in.

``tomllib`` costs a hook more to import (``re``, ``typing``, ``string``, its own regular
expressions) than the whole one-file commit is allowed to take. Most ``pyproject.toml``
files use only tables and arrays of tables, bare, quoted or dotted keys, strings (one-line
or multi-line) with short escapes, integers, booleans, arrays and inline tables;
:func:`read_plain_toml` reads exactly that and returns ``None`` for anything else
(``\\u`` escapes, floats, dates, a duplicate key, a table defined twice, a header naming
a table dotted keys made), and the caller asks ``tomllib``, which also reports every
error. What this reader accepts, ``tomllib`` reads the same.
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

_BARE = frozenset('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-')
_DIGITS = frozenset('0123456789')
_SPACE = ' \t'
# The short escapes of a basic string (TOML 1.0); \u and \U are left to tomllib.
_ESCAPES = {'"': '"', '\\': '\\', 'b': '\b', 't': '\t', 'n': '\n', 'f': '\f', 'r': '\r'}
# After a value: what may follow it on its line or in its array / inline table.
_VALUE_END = frozenset(' \t\r\n#,]}')


class _NotPlain(Exception):
    """Outside the subset (or not TOML at all): tomllib decides."""


def read_plain_toml(text: str) -> dict[str, Any] | None:
    """The document as ``tomllib.loads`` returns it, or None when it is not plain."""
    try:
        return _Reader(text).document()
    except (_NotPlain, IndexError):
        return None


class _Reader:
    __slots__ = ('text', 'pos', 'inline', 'dotted', 'arrays', 'defined')

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.inline: set[int] = set()  # ids of inline tables: no header may extend them
        # ids of the tables dotted keys made, with the section (header) they were made in:
        # only more dotted keys of that section may extend them, and no header names one.
        self.dotted: dict[int, int] = {}
        self.arrays: set[int] = set()  # ids of the arrays of tables ([[a]]): no value is one
        self.defined: set[int] = set()  # ids of the tables a header defined: once each

    # -- characters --------------------------------------------------------------------
    def _peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ''

    def _skip_space(self) -> None:
        text, pos = self.text, self.pos
        while pos < len(text) and text[pos] in _SPACE:
            pos += 1
        self.pos = pos

    def _comment(self) -> None:
        """A ``#`` comment up to the end of the line (not the newline)."""
        end = self.text.find('\n', self.pos)
        end = len(self.text) if end < 0 else end
        body = self.text[self.pos + 1:end]
        if body.endswith('\r') and end < len(self.text):  # CRLF; a lone CR at the end is not
            body = body[:-1]
        if not _printable(body):
            raise _NotPlain
        self.pos = end

    def _end_of_line(self) -> None:
        """Spaces, an optional comment, then a newline or the end of the text."""
        self._skip_space()
        if self._peek() == '#':
            self._comment()
        self._newline_or_end()

    def _newline_or_end(self) -> None:
        ch = self._peek()
        if ch == '':
            return
        if ch == '\n':
            self.pos += 1
        elif ch == '\r' and self.text.startswith('\r\n', self.pos):
            self.pos += 2
        else:
            raise _NotPlain

    def _skip_blank(self) -> None:
        """Spaces, newlines and comments (inside an array)."""
        while True:
            self._skip_space()
            ch = self._peek()
            if ch == '#':
                self._comment()
            elif ch == '\n' or ch == '\r':
                self._newline_or_end()
            else:
                return

    # -- the document --------------------------------------------------------------------
    def document(self) -> dict[str, Any]:
        root: dict[str, Any] = {}
        table = root
        section = 0
        while True:
            self._skip_space()
            ch = self._peek()
            if ch == '':
                return root
            if ch == '#':
                self._comment()
                self._newline_or_end()
            elif ch == '\n' or ch == '\r':
                self._newline_or_end()
            elif ch == '[':
                self.pos += 1
                array = self._peek() == '['
                self.pos += array
                path = self._header()
                if array:
                    if self._peek() != ']':
                        raise _NotPlain
                    self.pos += 1
                table = self._open_table(root, path, array)
                section += 1
                self._end_of_line()
            else:
                keys = self._dotted_key()
                if self._peek() != '=':
                    raise _NotPlain  # not TOML
                self.pos += 1
                self._skip_space()
                value = self._value()
                target = table
                for part in keys[:-1]:
                    if part not in target:
                        made: dict[str, Any] = {}
                        target[part] = made
                        self.dotted[id(made)] = section
                    target = target[part]
                    if not isinstance(target, dict) or self.dotted.get(id(target)) != section:
                        raise _NotPlain  # a value, or a table made elsewhere, extended
                if keys[-1] in target:
                    raise _NotPlain
                target[keys[-1]] = value
                self._end_of_line()

    def _dotted_key(self) -> list[str]:
        """``a``, ``a.b``, ``"a" . 'b'``: the key's parts, and the spaces after it."""
        keys = [self._key()]
        while True:
            self._skip_space()
            if self._peek() != '.':
                return keys
            self.pos += 1
            self._skip_space()
            keys.append(self._key())

    def _header(self) -> tuple[str, ...]:
        parts = []
        while True:
            self._skip_space()
            parts.append(self._key())
            self._skip_space()
            ch = self._peek()
            self.pos += 1
            if ch == ']':
                return tuple(parts)
            if ch != '.':
                raise _NotPlain

    def _open_table(self, root: dict[str, Any], path: tuple[str, ...],
                    array: bool = False) -> dict[str, Any]:
        """The table ``[path]`` names (``[[path]]``: a new one at the end of its array)."""
        table = root
        for part in path[:-1]:
            if part not in table:
                table[part] = {}
            table = table[part]
            if isinstance(table, list) and id(table) in self.arrays:
                table = table[-1]  # [a.b] after [[a]]: in a's last table
            if not isinstance(table, dict) or id(table) in self.inline:
                raise _NotPlain  # a value or an inline table cannot be extended
        last = path[-1]
        if array:
            tables = table.get(last)
            if tables is None:
                tables = table[last] = []
                self.arrays.add(id(tables))
            elif not isinstance(tables, list) or id(tables) not in self.arrays:
                raise _NotPlain  # [[a]] after [a], or after a = [...]
            made: dict[str, Any] = {}
            tables.append(made)
            self.defined.add(id(made))
            return made
        table = table.setdefault(last, {})
        if not isinstance(table, dict) or id(table) in self.inline or id(table) in self.dotted:
            # a value, an array of tables, an inline table, or a table dotted keys made
            # (a header may still define a new table under one of those: [tool.ruff]
            # lint.select = [...], then [tool.ruff.lint.per-file-ignores], as TOML says)
            raise _NotPlain
        if id(table) in self.defined:
            raise _NotPlain  # a table defined twice
        # A table first made implicitly by [a.b] may be defined once as [a]; a key that
        # clashes with its sub-table is then a duplicate key, caught on insertion.
        self.defined.add(id(table))
        return table

    def _key(self) -> str:
        ch = self._peek()
        if ch == '"' or ch == "'":
            if self.text.startswith(ch * 3, self.pos):
                raise _NotPlain  # no key is a multi-line string
            return self._string(ch)
        start = pos = self.pos
        text = self.text
        while pos < len(text) and text[pos] in _BARE:
            pos += 1
        if pos == start:
            raise _NotPlain
        self.pos = pos
        return text[start:pos]

    # -- values --------------------------------------------------------------------------
    def _value(self) -> Any:
        ch = self._peek()
        if ch == '"' or ch == "'":
            return self._string(ch)
        if ch == '[':
            return self._array()
        if ch == '{':
            return self._inline_table()
        start = pos = self.pos
        text = self.text
        while pos < len(text) and text[pos] not in _VALUE_END:
            pos += 1
        word = text[start:pos]
        self.pos = pos
        if word == 'true':
            return True
        if word == 'false':
            return False
        digits = word[1:] if word[:1] in ('+', '-') else word
        if digits and all(c in _DIGITS for c in digits) and (digits == '0' or digits[0] != '0'):
            return int(word)
        raise _NotPlain  # a float, a date, 0x.., 1_000, inf, nan ...

    def _string(self, quote: str) -> str:
        text = self.text
        if text.startswith(quote * 3, self.pos):
            return self._multi_line_string(quote)
        if quote == '"':
            return self._basic_string()
        end = text.find(quote, self.pos + 1)
        if end < 0:
            raise _NotPlain
        body = text[self.pos + 1:end]
        if not _printable(body):
            raise _NotPlain  # newlines and control characters
        self.pos = end + 1
        return body

    def _basic_string(self) -> str:
        """A one-line ``"..."`` string, its short escapes read (``\\"``, ``\\\\``, ``\\b``,
        ``\\t``, ``\\n``, ``\\f``, ``\\r``); ``\\u``, ``\\U`` and anything else: tomllib."""
        text = self.text
        pos = self.pos + 1
        parts = []
        while True:
            quote = text.find('"', pos)
            slash = text.find('\\', pos)
            if quote < 0:
                raise _NotPlain
            if slash < 0 or quote < slash:
                parts.append(text[pos:quote])
                break
            parts.append(text[pos:slash])
            escaped = _ESCAPES.get(text[slash + 1:slash + 2])
            if escaped is None:
                raise _NotPlain
            parts.append(escaped)
            pos = slash + 2
        if not _printable(text[self.pos + 1:quote]):
            raise _NotPlain  # a newline or a control character as written (`\\t` is fine)
        self.pos = quote + 1
        return ''.join(parts)

    def _multi_line_string(self, quote: str) -> str:
        """A ``\'\'\'...\'\'\'`` or ``\"\"\"...\"\"\"`` string (sympy's pyproject.toml
        has one). As TOML reads it: a newline right after the opening quotes is dropped,
        CRLF is read as LF, one or two quotes right before the closing three belong to the
        string; a basic one reads the short escapes and a backslash that ends its line
        (every space and newline after it dropped). ``\\u``, ``\\U``, any other escape, a
        lone CR or another control character: tomllib."""
        text = self.text
        start = self.pos + 3
        if text.startswith('\n', start):
            start += 1
        elif text.startswith('\r\n', start):
            start += 2
        pos = start
        parts = []
        while True:
            close = text.find(quote * 3, pos)
            if close < 0:
                raise _NotPlain
            slash = text.find('\\', pos, close) if quote == '"' else -1
            if slash < 0:
                parts.append(text[pos:close])
                break
            parts.append(text[pos:slash])
            escaped = _ESCAPES.get(text[slash + 1:slash + 2])
            if escaped is not None:
                parts.append(escaped)
                pos = slash + 2
                continue
            after = slash + 1  # a line-ending backslash: spaces, then a newline
            while after < len(text) and text[after] in _SPACE:
                after += 1
            if not (text.startswith('\n', after) or text.startswith('\r\n', after)):
                raise _NotPlain
            while after < len(text) and text[after] in ' \t\r\n':
                after += 1  # a lone CR here is refused below, with the body as written
            pos = after
        run = close + 3
        while run < len(text) and text[run] == quote:
            run += 1
        if run - close > 5:
            raise _NotPlain  # six quotes or more in a row: not TOML
        if not _printable(text[start:close].replace('\r\n', '').replace('\n', '')):
            raise _NotPlain
        parts.append(quote * (run - close - 3))
        self.pos = run
        # CRLF as LF in what was written; an escaped \r (a part of its own) stays
        return ''.join(part.replace('\r\n', '\n') for part in parts)

    def _array(self) -> list[Any]:
        self.pos += 1
        items: list[Any] = []
        while True:
            self._skip_blank()
            if self._peek() == ']':
                self.pos += 1
                return items
            items.append(self._value())
            self._skip_blank()
            ch = self._peek()
            self.pos += 1
            if ch == ']':
                return items
            if ch != ',':
                raise _NotPlain

    def _inline_table(self) -> dict[str, Any]:
        self.pos += 1
        table: dict[str, Any] = {}
        self.inline.add(id(table))
        self._skip_space()
        if self._peek() == '}':
            self.pos += 1
            return table
        while True:
            self._skip_space()
            key = self._key()
            self._skip_space()
            if self._peek() != '=':
                raise _NotPlain
            self.pos += 1
            self._skip_space()
            value = self._value()
            if key in table:
                raise _NotPlain
            table[key] = value
            self._skip_space()
            ch = self._peek()
            self.pos += 1
            if ch == '}':
                return table
            if ch != ',':
                raise _NotPlain  # newlines and trailing commas are not allowed here


def _printable(text: str) -> bool:
    """No control characters but tab (what TOML allows in comments and one-line strings)."""
    return all(c == '\t' or ('\x1f' < c != '\x7f') for c in text)


# -- TOML 1.0 on every Python -------------------------------------------------------------

def toml_1_1_only(text: str) -> tuple[int, str] | None:
    """(line, what) of the first form that TOML 1.1 reads and TOML 1.0 refuses, or None.

    Python 3.11+'s ``tomllib`` reads TOML 1.0; tomli 2.3 and later (Python 3.9 and 3.10)
    read TOML 1.1, and a later ``tomllib`` may too. So that one pyproject.toml configures
    the guard the same way on every Python, the guard reads TOML 1.0: a newline or a
    trailing comma inside an inline table, the ``\\e`` and ``\\xHH`` escapes and a time
    without seconds are refused before the parser sees them. Strings and comments are
    skipped as TOML lexes them, so their content is never mistaken for syntax.
    """
    import re

    time_without_seconds = re.compile(r'(?<![\d:])\d\d:\d\d(?![:\d])')
    stack: list[str] = []  # '{' and '[' that are open
    line = 1
    i, end = 0, len(text)
    last = ''  # the last significant character outside strings and comments
    while i < end:
        ch = text[i]
        if ch == '\n':
            if stack and stack[-1] == '{':
                return line, 'a newline inside an inline table (TOML 1.1)'
            line += 1
            i += 1
            continue
        if ch == '#':
            while i < end and text[i] != '\n':
                i += 1
            continue
        if ch in '"\'':
            triple = text.startswith(ch * 3, i)
            quote = ch * 3 if triple else ch
            j = i + len(quote)
            while j < end and not text.startswith(quote, j):
                if ch == '"' and text[j] == '\\':
                    if j + 1 < end and text[j + 1] in 'ex':
                        return line + text.count('\n', i, j), \
                            f'the escape \\{text[j + 1]} (TOML 1.1)'
                    j += 2
                    continue
                if text[j] == '\n' and not triple:
                    break  # an unterminated string: the parser reports it
                j += 1
            if triple:  # up to two more quotes may close a multi-line string
                j += len(quote)
                while j < end and text[j] == ch:
                    j += 1
            else:
                j += 1
            line += text.count('\n', i, min(j, end))
            i = j
            last = ch
            continue
        if ch in '{[':
            # `[` opens an array only after `=`, `[` or `,`; otherwise it is a table header
            if ch == '{' or last in ('=', '[', ',') or stack:
                stack.append(ch)
        elif ch in '}]' and stack:
            if ch == '}' and last == ',':
                return line, 'a trailing comma in an inline table (TOML 1.1)'
            stack.pop()
        elif ch not in ' \t\r':
            match = time_without_seconds.match(text, i) if ch.isdigit() else None
            if match and (last in ('=', ',', '[') or last.isdigit() or last in '-TZ '):
                return line, 'a time without seconds (TOML 1.1)'
        if ch not in ' \t\r':
            last = ch
        i += 1
    return None
