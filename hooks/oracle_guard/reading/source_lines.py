"""The lines of a module's text that can hold what a reader looks for: the lines a word is
written on as a whole word (``word_lines``), and the statements written on them
(``walk_lines``), so a walk skips every subtree none of whose lines holds one."""
from __future__ import annotations

import bisect

from oracle_guard.reading import syntax as ast  # `ast` without its import cost

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterable


def word_lines(text: str, words: Iterable[str]) -> list[int]:
    """Line numbers on which one of ``words`` is written as a whole word (``\\b`` of
    ``re`` on each side)."""
    import unicodedata

    if not text.isascii():  # identifiers are NFKC-normalised by the parser
        text = unicodedata.normalize('NFKC', text)
    # Count lines the way the parser does (\r\n, \r or \n), not like str.splitlines().
    if '\r' in text:
        text = text.replace('\r\n', '\n').replace('\r', '\n')
    unique = set(words)
    if not unique or not all(word.isidentifier() for word in unique):
        starts = _pattern_starts(text, unique)
    else:
        # Each word found with str.find: several times faster than one pattern of them all
        # on a long file. A whole word has a boundary on each side, as ``\\b`` means it;
        # two hits that overlap lie on one line (an identifier holds no line break), so
        # the lines are those the pattern finds.
        starts = []
        last = len(text)
        for word in unique:
            at = text.find(word)
            while at != -1:
                end = at + len(word)
                if (at > 0 and _is_word_char(text[at - 1])) != _is_word_char(text[at]) and \
                        _is_word_char(text[end - 1]) != (end < last and
                                                         _is_word_char(text[end])):
                    starts.append(at)
                at = text.find(word, at + 1)
        starts.sort()
    hits: list[int] = []
    line, pos = 1, 0
    for start in starts:
        line += text.count('\n', pos, start)
        pos = start
        if not hits or hits[-1] != line:
            hits.append(line)
    return hits


def _is_word_char(char: str) -> bool:
    """``re``'s ``\\w`` of a ``str`` pattern."""
    return char.isalnum() or char == '_'


def _pattern_starts(text: str, words: set[str]) -> list[int]:
    """Where a whole word of ``words`` starts, by one pattern (words that are not all
    identifiers)."""
    import re

    pattern = re.compile(r'\b(?:' + '|'.join(map(re.escape, sorted(words))) + r')\b')
    return [match.start() for match in pattern.finditer(text)]


def walk_lines(tree: ast.AST, hit_lines: list[int]) -> list[ast.AST]:
    """The nodes of ``tree`` that ``ast.walk`` yields, except those on lines holding no
    hit: a node is skipped with its subtree when none of its lines (a definition's
    decorators included) is in ``hit_lines``. (Expressions inside f-strings carry their
    real lines from Python 3.9 on: tests/test_scan_fast_path.py has such sites.)"""
    found: list[ast.AST] = []
    todo: list[ast.AST] = [tree]
    count = len(hit_lines)
    while todo:
        node = todo.pop()
        found.append(node)
        for child in ast.iter_child_nodes(node):
            first = getattr(child, 'lineno', None)
            if first is not None:
                for deco in getattr(child, 'decorator_list', ()):
                    first = min(first, deco.lineno)
                at = bisect.bisect_left(hit_lines, first)
                if at == count or hit_lines[at] > (getattr(child, 'end_lineno', None) or first):
                    continue
            todo.append(child)
    return found
