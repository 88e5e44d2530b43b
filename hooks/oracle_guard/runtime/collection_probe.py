"""What the repository's own pytest run collects and leaves out, for ``oracle-guard
baseline`` (rule 39b).

Loaded by that command alone, as ``-p oracle_guard.runtime.collection_probe`` in a
``pytest --collect-only`` run with the guard's plugin off; never in the verified run. It
writes one JSON file (the path in ``ORACLE_GUARD_COLLECTION_PROBE``) when collection ends:

* ``items``: every test the session kept, ``[nodeid, path]``;
* ``removed``: every test a ``pytest_collection_modifyitems`` implementation took out
  (``-m``/``-k``/``--deselect`` of pytest itself, a conftest hook, a plugin), with what
  took it out: the caller of ``pytest_deselected``, or "a pytest_collection_modifyitems
  hook" when the list was cut without saying so (``items[:] = ...``);
* ``problems``: collectors that failed or were skipped (their tests are not "left out by
  the configuration": an import error here is the environment, a module-level skip is a
  silence the baseline judges on its own);
* ``unskipped``: every kept test that carries a ``skipif`` mark of which no condition
  holds here, nor any ``skip`` mark: what this revision runs despite its ``skipif`` (the
  gate's base collection, rule 39b: a baselined ``skipif`` whose condition ``src``
  answers explains no skip of a test the base ran).
"""
from __future__ import annotations

import json
import os
import sys
from typing import Any

import pytest

OUTPUT = 'ORACLE_GUARD_COLLECTION_PROBE'
_HERE = os.path.normcase(os.path.abspath(__file__))


def _caller(config: Any) -> str:
    """What called ``pytest_deselected``: pytest's ``-m``, ``-k`` or ``--deselect``, or
    the hook function and the file it is defined in."""
    frame = sys._getframe(1)
    while frame is not None:
        name = os.path.normcase(os.path.abspath(frame.f_code.co_filename))
        if name != _HERE and f'{os.sep}pluggy{os.sep}' not in name:
            break
        frame = frame.f_back
    if frame is None:
        return 'a pytest_collection_modifyitems hook'
    function = frame.f_code.co_name
    if function == 'deselect_by_mark':
        return f'-m {config.option.markexpr!r}'
    if function == 'deselect_by_keyword':
        return f'-k {config.option.keyword!r}'
    filename = frame.f_code.co_filename
    if function == 'pytest_collection_modifyitems' and \
            filename.replace(os.sep, '/').endswith('_pytest/main.py'):
        return '--deselect'
    root = str(config.rootpath)
    try:
        shown = os.path.relpath(filename, root)
    except ValueError:
        shown = filename
    if shown.startswith('..'):
        shown = frame.f_globals.get('__name__', filename)
    return f'{function} in {shown.replace(os.sep, "/")}'


class CollectionProbe:
    def __init__(self, config: Any) -> None:
        self.config = config
        self.before: list[tuple[str, str]] = []
        self.removed: dict[str, tuple[str, str]] = {}
        self.problems: list[dict[str, str]] = []

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[Any]) -> Any:
        # The outermost wrapper sees the list before every implementation (conftests,
        # plugins, their own wrappers); what the session keeps is read when it finishes.
        self.before = [(item.nodeid, str(item.path)) for item in items]
        yield

    def pytest_deselected(self, items: Any) -> None:
        cause = _caller(self.config)
        for item in items:
            self.removed.setdefault(item.nodeid, (str(item.path), cause))

    def pytest_collectreport(self, report: Any) -> None:
        if report.outcome != 'passed':
            self.problems.append({'nodeid': report.nodeid, 'outcome': report.outcome,
                                  'path': str(getattr(report, 'fspath', '') or '')})

    def pytest_collection_finish(self, session: Any) -> None:
        kept = [(item.nodeid, str(item.path)) for item in session.items]
        ids = {nodeid for nodeid, _ in kept}
        removed = dict(self.removed)
        for nodeid, path in self.before:
            if nodeid not in ids:
                removed.setdefault(nodeid, (path, 'a pytest_collection_modifyitems hook'))
        data = {'rootdir': str(session.config.rootpath), 'items': kept,
                'removed': [[nodeid, path, cause] for nodeid, (path, cause)
                            in sorted(removed.items()) if nodeid not in ids],
                'problems': self.problems, 'unskipped': unskipped(session.items)}
        with open(os.environ[OUTPUT], 'w', encoding='utf-8') as f:
            json.dump(data, f)


def unskipped(items: list[Any]) -> list[list[str]]:
    """[nodeid, path] of the tests with a ``skipif`` mark that pytest would run here: no
    ``skipif`` condition holds and no ``skip`` mark applies (pytest's own evaluation, the
    one it makes at set-up; a condition that cannot be evaluated is left out)."""
    try:
        from _pytest.skipping import evaluate_skip_marks
    except ImportError:  # pragma: no cover -- pytest < 6
        return []
    found = []
    for item in items:
        if item.get_closest_marker('skipif') is None:
            continue
        try:
            held = evaluate_skip_marks(item)
        except (Exception, pytest.fail.Exception):  # noqa: BLE001 -- pytest reports it at set-up
            continue
        if held is None:
            found.append([item.nodeid, str(item.path)])
    return found


def pytest_configure(config: Any) -> None:
    if os.environ.get(OUTPUT):
        config.pluginmanager.register(CollectionProbe(config), 'oracle-guard-collection-probe')
