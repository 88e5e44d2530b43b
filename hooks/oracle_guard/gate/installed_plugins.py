"""The entry points pytest and Hypothesis load from the test environment (rule 46).

The change rules read the entry points a change declares in its files (``sealed.
added_entry_points``); ``setup.py`` is a program, and what it declares shows only once it has
run. So the gate also reads what the install step produced: the integrity probe
(``gate/integrity_probe.py --entry-points``, in the test interpreter with ``-I -S``, so
nothing of the environment runs) lists the ``pytest11`` and ``hypothesis`` entry points that
``importlib.metadata`` finds where a test run would look, before the install step and after
it:

OG738 an entry point of the two groups that is the project's own (its distribution is named
      as ``[project].name`` at the base or the head, or its ``direct_url.json``, its
      metadata folder or its module lies in the checkout where git tracks files, as an
      editable install's does; a virtual environment or tool cache inside the checkout
      that git does not track is installed code, and oracle-guard installed from a git or
      file URL outside the checkout is the gate's own)
      and that the base revision does not declare: pytest or Hypothesis loads the pull
      request's code before any test file is compiled, wherever its metadata lives; or one
      the install step added whose distribution the base revision does not name as a
      dependency (``[project]`` dependencies and optional dependencies, ``requirements*.txt``)
      and that none of those requires, as installed (``Requires-Dist``, extras included:
      anyio's plugin, installed for httpx, is a dependency's)

An entry point of the project's own that the base revision declares (a project that is a
pytest plugin) is a note: the pull request's plugin code runs before collection there,
which the gate cannot keep apart from the code under test. So is a ``.pth`` import line the
install step added or changed: the test command runs it at start-up, the gate's own runs
(started with ``-I -S``, ``gate/reference.py``) do not.
"""
from __future__ import annotations

import json
import os
import posixpath
import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass

from oracle_guard.findings import ConfigError
from oracle_guard.findings import Finding
from oracle_guard.repo.tree_view import TreeView

DECLARING = ('pyproject.toml', 'setup.cfg', 'setup.py')
# The test machinery's own plugins (rule 46 checks their files against RECORD, OG726):
# installed by the install step into an environment that lacked them, they are no plugin of
# the pull request's. Any other entry point of those distributions is judged like the rest.
MACHINERY = frozenset({
    ('oracle-guard', 'pytest11', 'oracle_guard', 'oracle_guard.runtime.pytest_plugin'),
    ('hypothesis', 'pytest11', 'hypothesispytest', '_hypothesis_pytestplugin'),
})
_NAME = re.compile(r'\s*([A-Za-z0-9][A-Za-z0-9._-]*)')


@dataclass(frozen=True)
class EntryPoint:
    group: str
    name: str
    value: str
    dist: str
    meta: str  # the metadata folder (real path)
    url: str  # direct_url.json's url, '' when none
    origin: str  # where its top-level module is found (real path), '' when nowhere

    @property
    def entry(self) -> str:
        return f'{self.name} = {self.value}'


@dataclass(frozen=True)
class Installed:
    """What the probe saw of the test environment at one moment."""

    entry_points: tuple[EntryPoint, ...]
    requires: dict[str, list[str]]  # a distribution -> the names it requires
    sites: tuple[str, ...] = ()  # the site folders read
    start_up: tuple[tuple[str, str], ...] = ()  # (a .pth file of them, an import line of it)

    def closure(self, names: Iterable[str]) -> set[str]:
        """``names`` and everything they require here, transitively (normalized)."""
        requires = {normalize(k): [normalize(n) for n in v] for k, v in self.requires.items()}
        found = {normalize(n) for n in names}
        todo = list(found)
        while todo:
            for name in requires.get(todo.pop(), ()):
                if name not in found:
                    found.add(name)
                    todo.append(name)
        return found


def installed(python: str, probe_source: str, root: str,
              sites: Iterable[str] | None = None, folders: Iterable[str] = ()) -> Installed:
    """The entry points of the two groups the test environment holds now, and what each
    distribution there requires. With ``sites`` (the site folders a look before the install
    step found), ``python`` is the gate's own interpreter: after the install step the test
    interpreter is the pull request's to replace, and its answer would be too. ``folders``:
    more folders a test run searches (``search_folders``, ``start_up_path``)."""
    where = ('--test-python', 0)
    extra = [json.dumps(list(sites) if sites is not None else None),
             json.dumps(list(folders))]
    try:
        proc = subprocess.run([python, '-I', '-S', '-c', probe_source, '--entry-points',
                               os.path.realpath(root), *extra], capture_output=True,
                              timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ConfigError(*where, f'cannot inspect the test environment of {python!r}: {exc}',
                          'name the interpreter of the test environment, e.g. '
                          '--test-python .venv/bin/python') from None
    try:
        facts = json.loads(proc.stdout)
        requires = {str(k): [str(n) for n in v] for k, v in facts['requires'].items()}
        return Installed(tuple(EntryPoint(*map(str, row)) for row in facts['entry_points']),
                         requires, tuple(str(f) for f in facts['sites']),
                         tuple((str(p), str(line)) for p, line in facts.get('start_up', ())))
    except (ValueError, KeyError, TypeError, AttributeError):
        tail = proc.stderr.decode(errors='replace').strip().splitlines()[-1:] or ['no output']
        raise ConfigError(*where, f'cannot inspect the test environment of {python!r} (its '
                          f'entry points): {tail[0]}', 'the test environment must be a Python '
                          '3.9+ interpreter whose site-packages can be read') from None


def start_up_notes(before: Installed, after: Installed) -> list[str]:
    """A note per ``.pth`` file with an ``import`` line that the install step added or
    changed (rule 46): start-up code that runs in the test command only."""
    earlier = set(before.start_up)
    added: dict[str, str] = {}
    for path, line in after.start_up:
        if (path, line) not in earlier:
            added.setdefault(path, line)
    return [f'oracle-guard ci: note: the install step added start-up code to the test '
            f'environment ({path}: {line if len(line) < 80 else line[:77] + "..."}): the test '
            'command runs it, the gate\'s own runs (the reference run, the evidence runs, the '
            'base collection) do not, so what only it makes importable is not importable there'
            for path, line in sorted(added.items())]


def search_folders(root: str, views: Iterable[TreeView | None],
                   tracked: Iterable[str]) -> list[str]:
    """Folders of the checkout that a test run in it puts on ``sys.path`` before Hypothesis
    is imported, besides the checkout itself: the ``pythonpath`` of every pytest
    configuration file at the root of each of ``views`` (the base's and the head's, read
    before the install step; pytest inserts them when it loads the first conftests), and
    every folder that holds a ``tracked`` test module or ``conftest.py``, with each folder
    above it (in its default ``prepend`` import mode pytest puts a test file's base folder,
    the one above its top package, first on ``sys.path`` before it imports the file).
    Hypothesis runs the ``hypothesis`` entry points of every distribution on ``sys.path``
    when it is imported (rule 46)."""
    from oracle_guard.reading.scanner import is_test_module

    found: list[str] = []
    for view in views:
        for entry in _pythonpath(view):
            found.append(entry if os.path.isabs(entry) else os.path.join(root, entry))
    for path in sorted(tracked):
        if posixpath.basename(path) == 'conftest.py' or is_test_module(path):
            folder = posixpath.dirname(path)
            while folder:
                found.append(os.path.join(root, *folder.split('/')))
                folder = posixpath.dirname(folder)
    return list(dict.fromkeys(os.path.normpath(f) for f in found))


def _pythonpath(view: TreeView | None) -> list[str]:
    """The ``pythonpath`` entries of every pytest configuration file at the root of
    ``view`` (pytest uses one of them: these are a superset of its list)."""
    from oracle_guard.reading.run_control import CONFIG_NAMES
    from oracle_guard.reading.run_control import pytest_options

    if view is None:
        return []
    found: list[str] = []
    for name in CONFIG_NAMES:
        raw = view.read(name)
        options = pytest_options(name, raw) if raw and b'pythonpath' in raw else None
        if not isinstance(options, dict):
            continue
        for key in ('pythonpath', 'native:pythonpath'):  # pytest 9's native table too
            value = options.get(key)
            if isinstance(value, str):
                found.extend(value.split())
            elif isinstance(value, list):
                found.extend(v for v in value if isinstance(v, str))
    return found


def start_up_path(python: str) -> list[str]:
    """The folders the test command starts with on ``sys.path`` besides the checkout and
    the site folders: the job's ``PYTHONPATH`` (the test command inherits the gate's
    environment and working folder), and ``sys.path`` of ``python -I`` once it has started (the ``site``
    module has run the ``.pth`` files' import lines, which may add folders of their own).
    Asked before the install step only, and isolated: the environment's start-up code is
    then the workflow's, and nothing of the checkout (a ``sitecustomize`` on
    ``PYTHONPATH``) runs to answer. Without an answer from the interpreter, the job's
    ``PYTHONPATH`` alone (the probe says why)."""
    found = [os.path.abspath(p) for p in os.environ.get('PYTHONPATH', '').split(os.pathsep)
             if p]
    try:
        proc = subprocess.run([python, '-I', '-c', 'import json, sys; '
                               'json.dump([p for p in sys.path if p], sys.stdout)'],
                              capture_output=True, timeout=300)
        paths = json.loads(proc.stdout)
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return found
    return found + ([str(p) for p in paths] if isinstance(paths, list) else [])


def normalize(name: str) -> str:
    return re.sub(r'[-_.]+', '-', name).lower()


def _inside(path: str, root: str) -> bool:
    return bool(path) and (path == root or path.startswith(root.rstrip(os.sep) + os.sep))


def local_path(url: str) -> str:
    """The folder a ``file:`` URL of ``direct_url.json`` names ('' for any other URL).
    pip writes ``file:///path`` and, for ``git+file://localhost/path``, ``file://localhost/
    path``: the host is part of the URL, never of the path."""
    from urllib.parse import unquote
    from urllib.parse import urlsplit

    if not url.startswith('file:'):
        return ''
    parts = urlsplit(url)
    if parts.netloc not in ('', 'localhost'):
        return ''  # a file on another host: not this checkout
    return os.path.realpath(unquote(parts.path)) if parts.path else ''


class Checkout:
    """The project's own files: the checkout, as far as git tracks it (at the base or the
    head). A virtual environment or a tool cache inside it that git does not track (the
    README's ``.venv``, ``.tox``, ``.eggs``) holds installed code, not the project's; what an
    install step writes there is judged as an addition to the test environment."""

    def __init__(self, root: str, tracked: Iterable[str]) -> None:
        self.root = os.path.realpath(root)
        self.files = set(tracked)
        self.folders = {posixpath.dirname(p) for p in self.files}
        for folder in list(self.folders):
            while folder:
                folder = posixpath.dirname(folder)
                self.folders.add(folder)

    def holds(self, path: str) -> str:
        """``path``'s place in the checkout ('' when it is not the project's): the checkout
        itself, a tracked file, or a folder that holds tracked files."""
        if not _inside(path, self.root):
            return ''
        rel = os.path.relpath(path, self.root).replace(os.sep, '/')
        if rel == '.' or rel in self.files or rel in self.folders:
            return rel
        return ''


def own_because(ep: EntryPoint, checkout: Checkout, names: Iterable[str]) -> str:
    """Why ``ep`` is the project's own code ('' when it is not)."""
    if normalize(ep.dist) in {normalize(n) for n in names if n}:
        return f'its distribution {ep.dist} is the project'
    if checkout.holds(local_path(ep.url)):
        return f'{ep.dist} was installed from the checkout'
    where = checkout.holds(ep.meta)
    if where:
        return f'its metadata is in the checkout ({where})'
    where = checkout.holds(ep.origin)
    if where:
        return f'its module is in the checkout ({where})'
    return ''


def project_names(*views: TreeView | None) -> set[str]:
    """``[project].name`` (and Poetry's name) on each side."""
    from oracle_guard.config import parse_toml

    names = set()
    for view in views:
        data = view.read('pyproject.toml') if view is not None else None
        if not data:
            continue
        try:
            doc = parse_toml(data.decode('utf-8', 'replace'))
        except ConfigError:
            continue
        for table in (doc.get('project'), (doc.get('tool') or {}).get('poetry')
                      if isinstance(doc.get('tool'), dict) else None):
            if isinstance(table, dict) and isinstance(table.get('name'), str):
                names.add(table['name'])
    return names


def declared(view: TreeView | None) -> set[tuple[str, str]]:
    """(group, ``name=value``) of what the revision's files declare, spaces taken out."""
    from oracle_guard.gate.sealed import entry_points_in

    found = set()
    for path in DECLARING:
        data = view.read(path) if view is not None else None
        if data:
            found.update((group, re.sub(r'\s+', '', entry))
                         for group, entry in entry_points_in(path, data))
    return found


def requirements(view: TreeView | None) -> set[str]:
    """The distributions the revision names as dependencies, normalized."""
    from oracle_guard.config import parse_toml

    if view is None:
        return set()
    lines: list[object] = []
    data = view.read('pyproject.toml')
    if data:
        try:
            doc = parse_toml(data.decode('utf-8', 'replace'))
        except ConfigError:
            doc = {}
        project = doc.get('project') if isinstance(doc.get('project'), dict) else {}
        lines += list(project.get('dependencies') or ())
        extras = project.get('optional-dependencies')
        for group in (extras.values() if isinstance(extras, dict) else ()):
            lines += list(group or ())
    for path in view.paths():
        if '/' not in path and path.startswith('requirements') and path.endswith('.txt'):
            lines += (view.read(path) or b'').decode('utf-8', 'replace').splitlines()
    found = set()
    for line in lines:
        match = _NAME.match(str(line)) if not str(line).lstrip().startswith(('#', '-')) \
            else None
        if match:
            found.add(normalize(match.group(1)))
    return found


def judged(before: Installed | None, after: Installed, root: str,
           names: Iterable[str], base_declares: set[tuple[str, str]],
           base_requires: set[str], tracked: Iterable[str] = ()
           ) -> tuple[list[Finding], list[str]]:
    """OG738 for the project's own entry points the base does not declare and for the ones
    the install step added from a distribution the base does not depend on (directly, or
    through what its dependencies require as installed); notes for the project's own the
    base declares. ``tracked``: the paths git tracks at the base and the head (what of the
    checkout is the project's)."""
    names = list(names)
    checkout = Checkout(root, tracked)
    earlier = {(ep.group, ep.name, ep.value, normalize(ep.dist))
               for ep in (before.entry_points if before is not None else ())}
    depended = after.closure(base_requires)
    findings: list[Finding] = []
    notes: list[str] = []
    tool = {'pytest11': 'pytest', 'hypothesis': 'Hypothesis'}
    for ep in sorted(set(after.entry_points), key=lambda e: (e.group, e.name, e.value, e.dist)):
        why = own_because(ep, checkout, names)
        where = os.path.relpath(ep.meta, os.path.realpath(root)).replace(os.sep, '/') \
            if _inside(ep.meta, os.path.realpath(root)) else '.'
        if why:
            if (ep.group, re.sub(r'\s+', '', ep.entry)) in base_declares:
                notes.append(f'oracle-guard ci: note: {tool[ep.group]} loads the project\'s '
                             f'own entry point {ep.entry} ({ep.group}), which the base '
                             'revision declares: the pull request\'s code in it runs before '
                             'any test file is compiled')
                continue
            findings.append(Finding(
                where, 1, 1, 'OG738', f'the test environment holds the project\'s own entry '
                f'point {ep.entry} in the {ep.group} group ({why}), which the base revision '
                f'does not declare: {tool[ep.group]} runs the pull request\'s code when it '
                'starts, before any test file is compiled',
                'a plugin of the test machinery is a change of its own that a maintainer '
                'makes, declared literally (pyproject.toml [project.entry-points])'))
            continue
        key = (ep.group, ep.name, ep.value, normalize(ep.dist))
        if before is not None and key not in earlier and normalize(ep.dist) not in depended \
                and (normalize(ep.dist), ep.group, ep.name, ep.value) not in MACHINERY:
            findings.append(Finding(
                where, 1, 1, 'OG738', f'the install step added the entry point {ep.entry} in '
                f'the {ep.group} group (of {ep.dist}, a distribution the base revision does '
                f'not name as a dependency): {tool[ep.group]} runs it when it starts, before '
                'any test file is compiled',
                'a new plugin of the test machinery is a change of its own that a maintainer '
                'makes (a dependency of the project)'))
    return findings, notes
