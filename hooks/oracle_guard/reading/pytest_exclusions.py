"""Tests the repository's own pytest configuration already leaves out.

At adoption the baseline records them (``excluded``), so the audit of the verified run
accepts exactly those: ``--deselect``/``--ignore``/``--ignore-glob`` in ``addopts`` (from
``[tool.pytest.ini_options]``, ``[tool.pytest]``, ``pytest.ini``, ``tox.ini`` or
``setup.cfg``) and ``collect_ignore``/``collect_ignore_glob`` in a tracked conftest.py,
literal strings only (a computed list is not followed: it stays a finding of the audit).
"""
from __future__ import annotations

import ast
import fnmatch
import posixpath
import shlex

from oracle_guard.config import Config
from oracle_guard.config import PYPROJECT
from oracle_guard.repo.tree_view import TreeView

_INI_SECTIONS = (('pytest.ini', 'pytest'), ('tox.ini', 'pytest'), ('setup.cfg', 'tool:pytest'))
_OPTIONS = ('--deselect', '--ignore', '--ignore-glob')


def _addopts(view: TreeView) -> list[tuple[str, str]]:
    """(addopts text, where it was read) from every configuration file pytest may use."""
    found: list[tuple[str, str]] = []
    raw = view.read(PYPROJECT)
    if raw is not None and b'pytest' in raw:
        from oracle_guard.config import parse_toml
        from oracle_guard.findings import ConfigError

        try:
            tool = parse_toml(raw.decode('utf-8-sig')).get('tool', {})
        except (ConfigError, UnicodeDecodeError):
            tool = {}
        pytest_table = tool.get('pytest') if isinstance(tool, dict) else None
        for table in (pytest_table, (pytest_table or {}).get('ini_options')
                      if isinstance(pytest_table, dict) else None):
            value = table.get('addopts') if isinstance(table, dict) else None
            if isinstance(value, list):
                value = ' '.join(shlex.quote(v) for v in value if isinstance(v, str))
            if isinstance(value, str):
                found.append((value, PYPROJECT))
    import configparser

    for name, section in _INI_SECTIONS:
        raw = view.read(name)
        if raw is None:
            continue
        parser = configparser.RawConfigParser(strict=False, interpolation=None)
        try:
            parser.read_string(raw.decode('utf-8', 'replace'))
        except configparser.Error:
            continue
        if parser.has_option(section, 'addopts'):
            found.append((parser.get(section, 'addopts'), name))
    return found


def _addopts_exclusions(text: str) -> list[tuple[str, str]]:
    """(option, value) for each --deselect/--ignore/--ignore-glob."""
    try:
        words = shlex.split(text)
    except ValueError:
        return []
    found = []
    for index, word in enumerate(words):
        option, eq, value = word.partition('=')
        if option not in _OPTIONS:
            continue
        if not eq:
            if index + 1 >= len(words):
                continue
            value = words[index + 1]
        found.append((option, value))
    return found


def _collect_ignores(source: bytes, folder: str) -> list[tuple[str, str, str, bool]]:
    """('collect_ignore' or 'collect_ignore_glob', repository path, the ``if`` conditions
    it sits under as text ('' for none), whether they hold in this interpreter) from one
    conftest.py. A condition that cannot be evaluated counts as holding."""
    from oracle_guard.reading.env_conditions import ConditionReader
    from oracle_guard.reading.env_conditions import holds_now

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    found = []
    reader: ConditionReader | None = None

    def strings(node: ast.AST | None) -> list[str]:
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return [e.value for e in node.elts
                    if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        return []

    # (node, the if conditions above it as (test, negated)): module level, into if/try
    # blocks, never into functions.
    todo: list[tuple[ast.AST, tuple[tuple[ast.expr, bool], ...]]] = [
        (node, ()) for node in tree.body]
    while todo:
        node, under = todo.pop()
        if isinstance(node, ast.If):
            todo.extend((n, under + ((node.test, False),)) for n in node.body)
            todo.extend((n, under + ((node.test, True),)) for n in node.orelse)
            continue
        if isinstance(node, (ast.Try, ast.With)):
            for name in ('body', 'orelse', 'finalbody', 'handlers'):
                todo.extend((n, under) for n in getattr(node, name, []) or [])
            continue
        if isinstance(node, ast.ExceptHandler):
            todo.extend((n, under) for n in node.body)
            continue
        target, values = None, []
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    target, values = t.id, strings(node.value)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and \
                isinstance(node.value.func, ast.Attribute) and \
                isinstance(node.value.func.value, ast.Name) and \
                node.value.func.attr in ('append', 'extend'):
            target = node.value.func.value.id
            for arg in node.value.args:
                values += strings(arg)
        if target not in ('collect_ignore', 'collect_ignore_glob') or not values:
            continue
        when, here = '', True
        if under:
            if reader is None:
                reader = ConditionReader.of_tree(tree)
            when = ' and '.join(f'not ({ast.unparse(test)})' if negated else ast.unparse(test)
                                for test, negated in under)
            here = all(holds_now(reader, [test], negated) is not False
                       for test, negated in under)
        found.extend((target, posixpath.normpath(posixpath.join(folder, v)), when, here)
                     for v in values)
    return found


# pytest's own default for norecursedirs (a configured value replaces it).
DEFAULT_NORECURSE = ('*.egg', '.*', '_darcs', 'build', 'CVS', 'dist', 'node_modules', 'venv',
                     '{arch}')
_SCOPE_KEYS = ('testpaths', 'norecursedirs')


def _words(value: object) -> list[str] | None:
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    if isinstance(value, str):
        return value.split()
    return None


def pytest_ini(view: TreeView) -> tuple[dict[str, list[str]], str]:
    """(testpaths and norecursedirs, the file they come from) as pytest reads them: from
    the first configuration file it would use (pytest.ini, .pytest.ini, pyproject.toml
    with a pytest table, tox.ini with [pytest], setup.cfg with [tool:pytest])."""
    import configparser

    def ini(name: str, section: str) -> dict[str, list[str]] | None:
        raw = view.read(name)
        if raw is None:
            return None
        parser = configparser.RawConfigParser(strict=False, interpolation=None)
        try:
            parser.read_string(raw.decode('utf-8', 'replace'))
        except configparser.Error:
            return None
        if not parser.has_section(section):
            return {} if name in ('pytest.ini', '.pytest.ini') else None
        return {k: _words(parser.get(section, k)) or [] for k in _SCOPE_KEYS
                if parser.has_option(section, k)}

    for name in ('pytest.ini', '.pytest.ini'):
        found = ini(name, 'pytest')
        if found is not None:
            return found, name
    raw = view.read(PYPROJECT)
    if raw is not None and b'pytest' in raw:
        from oracle_guard.config import parse_toml
        from oracle_guard.findings import ConfigError

        try:
            tool = parse_toml(raw.decode('utf-8-sig')).get('tool', {})
        except (ConfigError, UnicodeDecodeError):
            tool = {}
        table = tool.get('pytest') if isinstance(tool, dict) else None
        if isinstance(table, dict):
            options = table.get('ini_options', table)
            options = options if isinstance(options, dict) else {}
            return {k: _words(options[k]) or [] for k in _SCOPE_KEYS if k in options}, PYPROJECT
    for name, section in (('tox.ini', 'pytest'), ('setup.cfg', 'tool:pytest')):
        found = ini(name, section)
        if found is not None:
            return found, name
    return {}, ''


def _fnmatch_ex(pattern: str, path: str) -> bool:
    """pytest's fnmatch_ex: a pattern without '/' matches the last part, one with '/'
    the end of the path."""
    if '/' not in pattern:
        return fnmatch.fnmatch(path.rsplit('/', 1)[-1], pattern)
    pattern = pattern.strip('/')
    return fnmatch.fnmatch(path, pattern) or fnmatch.fnmatch(path, f'*/{pattern}')


class CollectionScope:
    """What pytest collects from the repository root: ``testpaths``, ``norecursedirs``,
    ``--ignore``/``--ignore-glob`` in ``addopts`` and literal ``collect_ignore`` entries."""

    def __init__(self, view: TreeView, paths: list[str] | None = None) -> None:
        options, where = pytest_ini(view)
        self.where = where
        self.testpaths = tuple(p.strip('/').lstrip('./') or '.' for p in options.get('testpaths', []))
        self.norecurse = tuple(options['norecursedirs']) if 'norecursedirs' in options \
            else DEFAULT_NORECURSE
        self.norecurse_by = f'norecursedirs in {where}' if 'norecursedirs' in options \
            else "pytest's default norecursedirs"
        self.elsewhere: set[str] = set()
        self.rules = _ignore_rules(view, view.paths() if paths is None else paths,
                                   self.elsewhere)

    def excluded_by(self, path: str) -> str | None:
        """What keeps pytest from collecting the file ``path``, or None."""
        if self.testpaths and not any(
                t == '.' or path == t or path.startswith(f'{t}/') or fnmatch.fnmatch(path, t)
                or fnmatch.fnmatch(path, f'{t}/*') for t in self.testpaths):
            return f'testpaths in {self.where}'
        parts = path.split('/')[:-1]
        for depth in range(1, len(parts) + 1):
            folder = '/'.join(parts[:depth])
            if any(_fnmatch_ex(pattern, folder) for pattern in self.norecurse):
                return self.norecurse_by
        # A collect_ignore under an ``if`` that is false in this interpreter leaves
        # nothing out here.
        return next((b for how, value, b in self.rules if b not in self.elsewhere and (
                     (how == 'path' and (path == value or path.startswith(value + '/')))
                     or (how == 'glob' and fnmatch.fnmatch(path, value)))), None)


def _ignore_rules(view: TreeView, paths: list[str], elsewhere: set[str] | None = None
                  ) -> list[tuple[str, str, str]]:
    """(how: deselect/path/glob, value, by) from addopts and every tracked conftest.py;
    ``elsewhere`` gets the ``by`` of the rules whose ``if`` is false in this interpreter
    (they leave tests out in other environments, so the record keeps them, with the
    condition in ``by``)."""
    rules: list[tuple[str, str, str]] = []
    for text, where in _addopts(view):
        for option, value in _addopts_exclusions(text):
            how = {'--deselect': 'deselect', '--ignore': 'path', '--ignore-glob': 'glob'}[option]
            rules.append((how, value.strip('/').lstrip('./') if how != 'deselect' else value,
                          f'addopts {option} in {where}'))
    for path in paths:
        if posixpath.basename(path) != 'conftest.py':
            continue
        source = view.read(path)
        if source is None or b'collect_ignore' not in source:
            continue
        for name, value, when, here in _collect_ignores(source, posixpath.dirname(path)):
            by = f'{name} in {path}' + (f' when {when}' if when else '')
            rules.append(('glob' if name.endswith('_glob') else 'path', value, by))
            if not here and elsewhere is not None:
                elsewhere.add(by)
    return rules


def excluded_tests(view: TreeView, cfg: Config) -> dict[str, str]:
    """nodeid -> what leaves it out, for every inventory test the configuration excludes."""
    from oracle_guard.reading.scanner import is_test_module
    from oracle_guard.reading.scanner import parse_python
    from oracle_guard.reading.scanner import ScanError
    from oracle_guard.reading.scanner import test_functions

    paths = view.paths()
    scope = CollectionScope(view, paths)
    rules = scope.rules
    # testpaths and a configured norecursedirs leave folders out, too (pytest's default
    # norecursedirs is what the audit's inventory already leaves out).
    configured = scope.testpaths or scope.norecurse != DEFAULT_NORECURSE
    if not rules and not configured:
        return {}
    found: dict[str, str] = {}
    for how, value, by in rules:
        if how == 'deselect' and '::' in value:
            found.setdefault(value, by)
    for path in paths:
        if not (cfg.is_test_code(path) and is_test_module(path)):
            continue
        by = next((b for how, value, b in rules
                   if (how == 'path' and (path == value or path.startswith(value + '/')))
                   or (how == 'glob' and fnmatch.fnmatch(path, value))
                   or (how == 'deselect' and '::' not in value and path == value)), None)
        if by is None and configured:
            by = scope.excluded_by(path)
            if by == "pytest's default norecursedirs":
                by = None
        if by is None:
            continue
        source = view.read(path)
        try:
            tree = parse_python(source, path) if source is not None else None
        except ScanError:
            tree = None
        for identity, _node in test_functions(tree) if tree else []:
            found.setdefault(f'{path}::{identity}', by)
    return found
