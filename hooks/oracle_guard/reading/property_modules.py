"""The modules check-generator-lock reads: the test files under the test roots (and the
pathspecs git greps them with), a module's bytes and its properties, its settings profiles,
and whether a file may import a module."""
from __future__ import annotations

from oracle_guard.findings import Finding
from oracle_guard.reading.profile_files import CONFIG_DIRS
from oracle_guard.reading.profile_files import CONFIG_FILES
from oracle_guard.reading.profile_files import is_config_file
from oracle_guard.reading.property_prefilter import is_conftest
from oracle_guard.reading.property_prefilter import mentions_profile_words
from oracle_guard.reading.property_prefilter import might_hold_properties
from oracle_guard.repo.changeset import ALL_FILES
from oracle_guard.repo.changeset import NO_BASE

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    import ast
    from collections.abc import Sequence
    from typing import Any

    from oracle_guard.config import Config
    from oracle_guard.context import RunContext
    from oracle_guard.oracle.domain_lock import DomainLock
    from oracle_guard.reading.property_reader import ProfileSources
    from oracle_guard.reading.property_reader import PropertyTest
    from oracle_guard.repo.tree_view import Entry
    from oracle_guard.repo.tree_view import TreeView


def root_pathspecs(cfg: Config) -> list[str]:
    return [f':(literal){root.rstrip("/") or "."}' for root in cfg.test_roots()]


def python_files(cfg: Config) -> list[str]:
    """The ``*.py`` files below the test roots, as pathspecs: git then reads no fixture,
    data file or snapshot it would grep only for the caller to drop. A glob entry whose
    parts git's glob magic reads as the configuration does (``**`` alone between slashes,
    ``*`` and ``?`` inside a part) is its own pathspec: ``sympy/**/tests/`` greps the test
    folders, not all of ``sympy/`` below its literal root."""
    from oracle_guard.config import is_file_entry
    from oracle_guard.config import is_glob
    from oracle_guard.config import scan_roots

    specs, roots = [], []
    for entry in (*cfg.tests, *cfg.properties):
        if is_glob(entry) and _same_glob_for_git(entry):
            specs.append(f':(glob){entry}' if is_file_entry(entry) else
                         f':(glob){entry.rstrip("/")}/**/*.py')
        else:
            roots.append(entry)
    for root in scan_roots(tuple(roots)):
        if is_file_entry(root):
            specs.append(f':(literal){root}')
            continue
        folder = root if root.endswith('/') or not root else root + '/'
        escaped = ''.join('\\' + c if c in '*?[\\' else c for c in folder)
        specs.append(f':(glob){escaped}**/*.py')
    return specs


def _same_glob_for_git(entry: str) -> bool:
    """Whether git's ``:(glob)`` matches what ``config.entry_matches`` does for ``entry``:
    each part ``**`` or free of ``**`` and of classes (``[...]``, which the two read
    differently), nothing git's glob would take for an escape."""
    return all(part == '**' or ('**' not in part and not any(c in part for c in '[]\\'))
               for part in entry.rstrip('/').split('/'))


def profile_pathspecs(cfg: Config) -> list[str]:
    """Where a profile can be registered, loaded or selected: test roots, every
    conftest.py, the pytest and CI config files."""
    return [*root_pathspecs(cfg), ':(glob)**/conftest.py',
            *(f':(literal){p}' for p in (*CONFIG_FILES, *CONFIG_DIRS))]


def grep(view: TreeView, words: Sequence[str], pathspecs: Sequence[str], *,
          whole_words: bool = False, kept: Any = None) -> list[str]:
    """Tracked paths on this side of the change that contain one of ``words``: one
    ``git grep``, so commit mode stays proportional to the change. The pathspecs carry
    their own magic (``:(glob)**/conftest.py``, ``:(literal)…``); ``kept``: see
    ``TreeView.grep``."""
    return view.grep(words, pathspecs, whole_words=whole_words, magic=True, kept=kept)


def full_scope(ctx: RunContext, cfg: Config) -> bool:
    changes = ctx.changes
    if ctx.all_files or changes.mode in (ALL_FILES, NO_BASE):
        return True
    return any(p == cfg.domain_lock or is_conftest(p) or is_config_file(p)
               for p in changes.touched())


def read_lock(view: TreeView, cfg: Config) -> DomainLock:
    from oracle_guard.oracle.domain_lock import read_lock_bytes
    return read_lock_bytes(view.read_document(cfg.domain_lock), cfg.domain_lock)


def readable(entry: Entry | None) -> bool:
    return entry is not None and not (entry.is_symlink or entry.is_submodule)


def module_source(view: TreeView, cfg: Config) -> Any:
    """The helper modules a property's strategies may import: Python files under the tests
    roots on this side of the change (``strategy_reader.ModuleSource``)."""
    from oracle_guard.reading.scanner import parse_python
    from oracle_guard.reading.scanner import ScanError

    from oracle_guard.reading.strategy_reader import module_candidates

    parsed: dict[str, ast.Module | None] = {}
    roots = list(cfg.test_roots())

    def find(importer: str, module: str, level: int) -> tuple[str, ast.Module] | None:
        for path in module_candidates(importer, module, level, roots):
            if not cfg.is_test_code(path):
                continue
            if path not in parsed:
                raw = view.read(path)
                try:
                    parsed[path] = None if raw is None else parse_python(raw, path)
                except ScanError:
                    parsed[path] = None  # reported when the file itself is read
            tree = parsed[path]
            if tree is not None:
                return path, tree
        return None

    return find


def module_names(path: str) -> list[str]:
    """Names an import of this file may use: ``strategies`` for tests/strategies.py."""
    parts = path[:-3].split('/') if path.endswith('.py') else path.split('/')
    if parts[-1] == '__init__':
        parts = parts[:-1]
    return [parts[-1]] if parts else []


def may_import(raw: bytes | None, path: str, names: Sequence[str]) -> bool:
    """Whether a file the grep found for a module name may import that module: an import
    statement (or text shaped like one: ``helper_paths.imports_of``) names it as a part
    of a dotted module or as an imported name, or the file cannot be read here. A file
    that names the module only in a string or a comment (sympy's skip reasons name test
    modules), or imports it by a computed name (``import_module("...")``, which neither
    the import closure nor the strategy reader follows), is no link to a property."""
    if raw is None:
        return True
    from oracle_guard.reading.helper_paths import imports_of

    imports = imports_of(raw, path)
    if imports is None:
        return True
    wanted = set(names)
    return any(wanted.intersection(module.split('.') if module else ()) or
               wanted.intersection(imported) for _level, module, imported in imports)


def read_module(view: TreeView, path: str, sources: ProfileSources,
                 props: list[PropertyTest] | None, profiles: bool = True,
                 modules: Any = None, parsed: dict[str, ast.Module] | None = None
                 ) -> list[Finding]:
    from oracle_guard.reading.property_reader import read_profiles
    from oracle_guard.reading.property_reader import read_properties
    from oracle_guard.reading.scanner import parse_python
    from oracle_guard.reading.scanner import ScanError

    raw = view.read(path)
    if raw is None:
        return []
    wants_profiles = profiles and mentions_profile_words(raw)
    wants_props = props is not None and might_hold_properties(raw)
    if not (wants_profiles or wants_props):
        return []
    try:
        tree = parse_python(raw, path)
    except ScanError as exc:
        return [Finding(path, exc.line, exc.col, 'OG608', f'test file {exc.message}',
                        'make the file valid Python 3 (UTF-8): properties nobody can read '
                        'cannot be checked against the lock')]
    if parsed is not None:
        parsed[path] = tree
    if wants_profiles:
        read_profiles(path, tree, sources)
    if wants_props:
        props.extend(read_properties(path, tree, modules))  # type: ignore[union-attr]
    return []
