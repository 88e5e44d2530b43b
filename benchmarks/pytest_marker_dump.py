"""A pytest plugin for benchmarks/real_suites.py: pytest's own view of skip/xfail markers.

Loaded with ``-p pytest_marker_dump`` during ``pytest --collect-only``; writes, to the
file named by ``OG_MARKER_DUMP``, every collected item with the skip/skipif/xfail
markers it carries (``item.iter_markers()``: decorators, ``pytestmark`` at module and
class level, ``pytest.param(marks=...)`` and markers added by conftest hooks), and
every file that failed to collect.
"""
from __future__ import annotations

import json
import os

SILENCING = ('skip', 'skipif', 'xfail')
_errors: list[dict[str, str]] = []


def pytest_collectreport(report):  # type: ignore[no-untyped-def]
    if report.failed:
        _errors.append({'nodeid': report.nodeid, 'error': str(report.longrepr)[-300:]})


def origin(item, mark) -> str:  # type: ignore[no-untyped-def]
    """Where a marker came from: the node that owns it, and for a test how it got there."""
    from _pytest.mark.structures import get_unpacked_marks

    for node in item.listchain():
        if any(m is mark for m in node.own_markers):
            if node is not item:
                return type(node).__name__.lower()  # 'class' or 'module' (pytestmark)
            break
    func = getattr(item, 'function', None)
    if func is not None and any(m == mark for m in get_unpacked_marks(func)):
        return 'function'  # a decorator on the test (maybe in a base class)
    callspec = getattr(item, 'callspec', None)
    if callspec is not None and any(m == mark for m in callspec.marks):
        return 'param'  # pytest.param(marks=...) of @parametrize or of a fixture
    return 'hook'  # item.add_marker() in a conftest hook or plugin


def pytest_collection_finish(session):  # type: ignore[no-untyped-def]
    items = []
    for item in session.items:
        silencing = [m for m in item.iter_markers() if m.name in SILENCING]
        marks = sorted({m.name for m in silencing})
        origins = sorted({origin(item, m) for m in silencing})
        items.append({'path': str(item.path), 'nodeid': item.nodeid, 'marks': marks,
                      'origins': origins})
    with open(os.environ['OG_MARKER_DUMP'], 'w') as f:
        json.dump({'items': items, 'errors': _errors}, f)
