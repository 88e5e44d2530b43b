"""The statements a module runs at its top level, those of its if/try/with blocks too.

pytest collects what the module's namespace holds when its import ends, so a test defined
in ``try: import hypothesis / except ImportError: ... / else:`` or under ``if HAVE_X:`` is
collected like one at the top; the static readers (the scanner, the property reader, the
lock) read the same statements, so they and the plugin agree on what the tests are.
"""
from __future__ import annotations

from oracle_guard.reading import syntax as ast


def module_statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """Module-level statements, including those inside module-level if/try/with."""
    found = []
    for stmt in body:
        found.append(stmt)
        if isinstance(stmt, (ast.If, ast.With, ast.Try)) or \
                type(stmt).__name__ == 'TryStar':
            for name in ('body', 'orelse', 'finalbody'):
                found.extend(module_statements(getattr(stmt, name, [])))
            for handler in getattr(stmt, 'handlers', []):
                found.extend(module_statements(handler.body))
    return found
