"""The plugin's side of the gate's canaries (rule 45): tests planted into the run.

``oracle-guard ci`` writes canary modules into its own temporary folder (never into the
checkout) and a plan naming them in ``ORACLE_GUARD_CANARIES``. The plan gives each module
a place in the test tree that does not exist on disk (``tests/test_<secret>.py``): the
module is imported from the gate's folder, but pytest collects it as if it lived there, so
the conftests, autouse fixtures and hooks of that folder apply to it exactly as they apply
to the real tests next to it. A cheat that bends the run for the real tests bends the
canaries too, and the canaries' outcomes are known in advance.

The items go in among the collected ones (at places the secret picks) before any other
``pytest_collection_modifyitems`` hook sees the list: a hook that drops or reorders tests
does the same to them. The plugin's own checks (the ledger, the lock) leave them alone.
"""
from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any

try:  # pytest.hookimpl itself, without importing pytest into the gate's process
    from pluggy import HookimplMarker
    hookimpl = HookimplMarker('pytest')
except ImportError:  # pragma: no cover -- the gate reads the plan's name only
    def hookimpl(**_options: Any) -> Any:  # type: ignore[misc,no-redef]
        return lambda function: function

CANARY_ENV = 'ORACLE_GUARD_CANARIES'
# id() of every canary item of this process; the freeze guard and the lock check skip them.
PLANTED: set[int] = set()


def is_canary(item: Any) -> bool:
    return id(item) in PLANTED


def read_plan(path: str | None) -> list[dict[str, Any]]:
    if not path:
        return []
    try:
        with open(path, encoding='utf-8') as f:
            plan = json.load(f)
    except (OSError, ValueError):
        return []
    modules = plan.get('modules') if isinstance(plan, dict) else None
    return [m for m in modules or () if isinstance(m, dict)]


def _directory_node(session: Any, items: list[Any], folder: Path) -> Any:
    """The collector pytest built for ``folder`` (its conftests' fixtures hang on it)."""
    import pytest

    kinds = tuple(k for k in (getattr(pytest, 'Directory', None), getattr(pytest, 'Package', None))
                  if k is not None)
    best, depth = session, -1
    for item in items:
        for node in item.listchain():
            path = getattr(node, 'path', None)
            if path is None or not isinstance(node, kinds):
                continue
            if path == folder:
                return node
            if len(path.parts) > depth and folder.is_relative_to(path):
                best, depth = node, len(path.parts)
    return best


def _module_class() -> Any:
    import pytest

    class CanaryModule(pytest.Module):  # type: ignore[misc]
        """A test module collected at a place in the tree, imported from elsewhere."""

        og_real = ''
        og_name = ''
        og_twin = False  # a twin: run in a copy of its original module's namespace
        og_original: Any = None  # that module, when it was imported in this process

        @property
        def ihook(self) -> Any:
            return _folder_hooks(self)

        # The canaries are named test_*, whatever python_functions/python_classes say.
        def funcnamefilter(self, name: str) -> bool:
            return name.startswith('test_')

        def classnamefilter(self, name: str) -> bool:
            return False

        def _getobj(self) -> Any:
            if self.og_twin:
                return _twin_module(self)
            spec = importlib.util.spec_from_file_location(self.og_name, self.og_real)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            # Where it is collected: a twin's module-level Path(__file__).parent / "data"
            # finds the data its original finds.
            module.__file__ = str(self.path)
            sys.modules[self.og_name] = module
            try:
                # Compiled under the name of its place in the tree: code the twin copies from
                # a test module counts as that folder's code, as its original does.
                with open(self.og_real, 'rb') as f:
                    code = compile(f.read(), str(self.path), 'exec', dont_inherit=True)
                exec(code, module.__dict__)  # noqa: S102 -- the gate's own canary module
            except BaseException:
                del sys.modules[self.og_name]
                raise
            return module

    return CanaryModule


def _twin_namespace(original: Any) -> dict[str, Any]:
    """The original module's names, its tests and its pytest hooks left out: what its
    module-level code bound when it was imported, not run again."""
    return {name: value for name, value in vars(original).items()
            if not (name.startswith(('test', 'Test')) and callable(value))
            and not name.startswith('pytest_') and name != 'pytestmark'}


def _twin_module(node: Any) -> Any:
    """A twin (the gate's copy of a test, its ``==`` put to a sentinel) built in a copy of
    the namespace its original module was imported into: the same imports, helpers and
    data, resolved as pytest's import mode resolved them for the original (its folder on
    ``sys.path``, its package for a relative import), with nothing of the module run a
    second time. Only the twin's own function and sentinel are executed."""
    original = node.og_original
    if original is None:
        raise ImportError('its original module was not imported in this run')
    package = getattr(original, '__package__', None) or ''
    # Named after its place, as pytest names a test module there (``pkg.tests.test_<secret>``):
    # a module of the tests package, never one that looks planted under a production
    # package's name (the property namespace check judges those, OG714).
    name = f'{package}.{Path(str(node.path)).stem}' if package else node.og_name
    spec = importlib.util.spec_from_file_location(name, node.og_real)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(_twin_namespace(original))
    module.__name__, module.__spec__, module.__package__ = name, spec, package
    module.__loader__ = spec.loader
    module.__file__ = str(node.path)
    sys.modules[name] = module
    try:
        with open(node.og_real, 'rb') as f:
            code = compile(f.read(), str(node.path), 'exec', dont_inherit=True)
        exec(code, module.__dict__)  # noqa: S102 -- the gate's own canary module
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _original_module(items: list[Any], path: Path) -> Any:
    """The module object a collected test of ``path`` was imported as, or None."""
    for item in items:
        if getattr(item, 'path', None) == path:
            try:
                module = getattr(item, 'module', None)
            except Exception:  # noqa: BLE001 -- an item type of a plugin
                module = None
            if module is not None:
                return module
    wanted = os.path.realpath(str(path))
    for module in list(sys.modules.values()):
        file = getattr(module, '__file__', None)
        if isinstance(file, str) and os.path.realpath(file) == wanted:
            return module
    return None


def _folder_hooks(node: Any) -> Any:
    """The hooks pytest calls for a node of that folder: its conftests' too. (pytest looks
    conftests up by the folder of an existing file; the canary's file exists elsewhere.)"""
    return node.session.gethookproxy(Path(str(node.path)).parent)


_ITEM_CLASSES: dict[type, type] = {}


def _in_folder(item: Any) -> None:
    """Give a canary item its folder's hooks (``ihook`` is a property of the class)."""
    kind = type(item)
    if kind not in _ITEM_CLASSES:
        _ITEM_CLASSES[kind] = type(kind.__name__, (kind,), {
            'ihook': property(_folder_hooks), '__module__': kind.__module__})
    item.__class__ = _ITEM_CLASSES[kind]


def plant(session: Any, items: list[Any], plan_path: str | None
          ) -> tuple[list[Any], dict[str, str]]:
    """Collect the plan's modules and put their items in among ``items`` (in place):
    (the items planted, {module file name: why} of the optional modules that did not
    import). A twin is built in its original module's namespace, so it is left out when
    that module was not imported in this process, and otherwise only when something
    refused it (the reason starts "beside its original: ", and the gate fails the run);
    the gate's own canaries always import, or the run is broken."""
    planted: list[Any] = []
    dropped: dict[str, str] = {}
    modules = read_plan(plan_path)
    if not modules:
        return planted, dropped
    module_class = _module_class()
    rootpath = Path(str(session.config.rootpath))
    for entry in modules:
        virtual = Path(str(entry.get('virtual', '')))
        parent = _directory_node(session, items, virtual.parent)
        try:
            nodeid = virtual.relative_to(rootpath).as_posix()
        except ValueError:
            nodeid = os.path.relpath(virtual, rootpath).replace(os.sep, '/')
        module = module_class.from_parent(parent, path=virtual, nodeid=nodeid)
        module.og_real = str(entry.get('real', ''))
        module.og_name = str(entry.get('name', 'oracle_guard_canary'))
        if entry.get('original'):
            module.og_twin = True
            module.og_original = _original_module(items, Path(str(entry['original'])))
        if entry.get('optional'):
            try:
                module.obj  # noqa: B018 -- imported here, so a failure is not a collection error
            except Exception as exc:  # noqa: BLE001
                # Beside an imported original nothing honest fails (gate/canaries.py BESIDE).
                beside = 'beside its original: ' if module.og_original is not None else ''
                dropped[virtual.name] = f'{beside}{type(exc).__name__}: {exc}'[:300]
                continue
        found = list(session.genitems(module))
        fractions = [float(f) for f in entry.get('at', ())] or [1.0]
        for index, item in enumerate(found):
            _in_folder(item)
            PLANTED.add(id(item))
            at = int(fractions[index % len(fractions)] * (len(items) + 1))
            items.insert(min(at, len(items)), item)
            planted.append(item)
    return planted, dropped


class CacheScrub:
    """Keeps the canaries out of pytest's cache (``.pytest_cache`` is in the user's tree):
    takes their node ids out of what the last-failed and new-first plugins are about to
    write. Registered in every process of the run, the pytest-xdist controller too."""

    def __init__(self, modules: list[dict[str, Any]]) -> None:
        self.files = {os.path.basename(str(m.get('virtual', ''))) for m in modules}

    def planted(self, nodeid: str) -> bool:
        return os.path.basename(str(nodeid).split('::', 1)[0]) in self.files

    @hookimpl(tryfirst=True)  # before the cache plugins write what they hold
    def pytest_sessionfinish(self, session: Any) -> None:
        manager = session.config.pluginmanager
        failed = getattr(manager.get_plugin('lfplugin'), 'lastfailed', None)
        if isinstance(failed, dict):
            for nodeid in [n for n in failed if self.planted(n)]:
                del failed[nodeid]
        seen = getattr(manager.get_plugin('nfplugin'), 'cached_nodeids', None)
        if isinstance(seen, set):
            seen.difference_update({n for n in seen if self.planted(n)})


# What the log says of each failure of a canary planted to fail.
PLANTED_TO_FAIL = ('this test was planted by oracle-guard ci to fail (a canary): its failure '
                   'is expected and does not count; it shows the gate that a failing test '
                   'fails in this run')


class PlantedFailures:
    """Says of each failure of a canary planted to fail what it is, in the log a person
    reads (a section under its traceback, and its line of the short summary). Said at the
    session's end, after every outcome went to the gate and before pytest writes its
    summary: nothing in the run can tell the canaries by it while they run."""

    def __init__(self, modules: list[dict[str, Any]]) -> None:
        self.fail = {(os.path.basename(str(m.get('virtual', ''))), str(name))
                     for m in modules for name in m.get('fail', ()) or ()}

    def planted_to_fail(self, nodeid: str) -> bool:
        path, _, rest = str(nodeid).partition('::')
        return (os.path.basename(path), rest.split('[', 1)[0]) in self.fail

    def pytest_sessionfinish(self, session: Any) -> None:
        reporter = session.config.pluginmanager.get_plugin('terminalreporter')
        stats = getattr(reporter, 'stats', None)
        for report in (stats.get('failed', ()) if isinstance(stats, dict) else ()):
            if not self.planted_to_fail(getattr(report, 'nodeid', '')):
                continue
            if isinstance(getattr(report, 'sections', None), list):
                report.sections.append(('oracle-guard', PLANTED_TO_FAIL))
            crash = getattr(getattr(report, 'longrepr', None), 'reprcrash', None)
            try:
                crash.message = f'planted by oracle-guard to fail: {crash.message}'
            except AttributeError:
                pass  # no crash line: the section says it


def register_canary_plugins(config: Any) -> None:
    """In every process of a run with canaries (the pytest-xdist controller too): their
    node ids kept out of pytest's cache, their planted failures labelled in the log."""
    modules = read_plan(os.environ.get(CANARY_ENV))
    if modules and not config.pluginmanager.has_plugin('oracle-guard-canary-scrub'):
        config.pluginmanager.register(CacheScrub(modules), 'oracle-guard-canary-scrub')
        config.pluginmanager.register(PlantedFailures(modules), 'oracle-guard-canary-labels')
