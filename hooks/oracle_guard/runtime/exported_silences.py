"""Silences a test receives from a helper module: ``requires_network =
unittest.skip("no network")`` in ``tests/support.py`` (or a ``pytest.mark.skip(...)``
bound there), applied as ``@requires_network`` in a test module.

The scanner cannot follow such a binding to where it is applied, so it judges it where it
is written: a silence of the helper module itself, which the baseline holds there (or an
FZ id names). At run time the plugin sees the marker on the test; it accepts it when the
test's module binds the very object a helper module of the test roots binds, and that
helper holds an accepted silence of the same kind and reason.
"""
from __future__ import annotations

import os
import sys
from typing import Any

# The objects worth matching: the decorators unittest's skip factories return, and
# pytest's marks; never plain values a test module happens to share with a helper.
_DECORATOR_TYPES = ('function', 'MarkDecorator', 'Mark')


def reason_of_mark(mark: Any) -> str | None:
    """The literal reason a pytest mark carries (``reason=`` or its first argument)."""
    reason = mark.kwargs.get('reason')
    if reason is None:
        reason = next((a for a in mark.args if isinstance(a, str)), None)
    return reason if isinstance(reason, str) else None


class HelperSilences:
    """Per test module: the helper modules of the test roots it shares a decorator with."""

    def __init__(self, root: str, is_test_code: Any) -> None:
        self.root = os.path.realpath(root)
        self.is_test_code = is_test_code
        self._helpers: dict[int, tuple[Any, list[str]]] = {}

    def _relpath(self, module: Any) -> str | None:
        file = getattr(module, '__file__', None)
        if not isinstance(file, str) or not file.endswith('.py'):
            return None
        rel = os.path.relpath(os.path.realpath(file), self.root).replace(os.sep, '/')
        return None if rel.startswith('../') or not self.is_test_code(rel) else rel

    def helpers_of(self, module: Any) -> list[str]:
        """Paths of the test-root modules (not ``module``) binding a decorator that
        ``module`` binds too: the helpers its silences may come from."""
        kept = self._helpers.get(id(module))
        if kept is not None and kept[0] is module:
            return kept[1]
        namespace = getattr(module, '__dict__', None)
        shared = {id(value) for value in (namespace or {}).values()
                  if type(value).__name__ in _DECORATOR_TYPES}
        found = []
        for other in list(sys.modules.values()):
            if other is module or not shared:
                continue
            values = getattr(other, '__dict__', None)
            if type(values) is not dict or not any(id(v) in shared for v in values.values()):
                continue
            rel = self._relpath(other)
            if rel is not None:
                found.append(rel)
        self._helpers[id(module)] = (module, sorted(set(found)))
        return self._helpers[id(module)][1]
