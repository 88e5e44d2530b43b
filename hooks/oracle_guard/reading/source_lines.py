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
    """Line numbers on which one of ``words`` is written as a whole word."""
    import re
    import unicodedata

    pattern = re.compile(r'\b(?:' + '|'.join(map(re.escape, sorted(words))) + r')\b')
    if not text.isascii():  # identifiers are NFKC-normalised by the parser
        text = unicodedata.normalize('NFKC', text)
    # Count lines the way the parser does (\r\n, \r or \n), not like str.splitlines().
    if '\r' in text:
        text = text.replace('\r\n', '\n').replace('\r', '\n')
    hits, line, pos = [], 1, 0
    for match in pattern.finditer(text):
        line += text.count('\n', pos, match.start())
        pos = match.start()
        if not hits or hits[-1] != line:
            hits.append(line)
    return hits


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
