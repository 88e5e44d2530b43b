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
from oracle_guard.repo.gitrepo import TreeView

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


def _collect_ignores(source: bytes, folder: str) -> list[tuple[str, str]]:
    """('collect_ignore' or 'collect_ignore_glob', repository path) from one conftest.py."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    found = []

    def strings(node: ast.AST | None) -> list[str]:
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return [e.value for e in node.elts
                    if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        return []

    todo: list[ast.AST] = list(tree.body)
    while todo:  # module level, into if/try blocks, never into functions
        node = todo.pop()
        if isinstance(node, (ast.If, ast.Try, ast.With)):
            for name in ('body', 'orelse', 'finalbody', 'handlers'):
                todo.extend(getattr(node, name, []) or [])
            continue
        if isinstance(node, ast.ExceptHandler):
            todo.extend(node.body)
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
        if target in ('collect_ignore', 'collect_ignore_glob'):
            found.extend((target, posixpath.normpath(posixpath.join(folder, v)))
                         for v in values)
    return found


def excluded_tests(view: TreeView, cfg: Config) -> dict[str, str]:
    """nodeid -> what leaves it out, for every inventory test the configuration excludes."""
    from oracle_guard.reading.scanner import is_test_module
    from oracle_guard.reading.scanner import parse_python
    from oracle_guard.reading.scanner import ScanError
    from oracle_guard.reading.scanner import test_functions

    rules: list[tuple[str, str, str]] = []  # (how: deselect/path/glob, value, by)
    for text, where in _addopts(view):
        for option, value in _addopts_exclusions(text):
            how = {'--deselect': 'deselect', '--ignore': 'path', '--ignore-glob': 'glob'}[option]
            rules.append((how, value.strip('/').lstrip('./') if how != 'deselect' else value,
                          f'addopts {option} in {where}'))
    paths = view.paths()
    for path in paths:
        if posixpath.basename(path) != 'conftest.py':
            continue
        source = view.read(path)
        if source is None or b'collect_ignore' not in source:
            continue
        for name, value in _collect_ignores(source, posixpath.dirname(path)):
            rules.append(('glob' if name.endswith('_glob') else 'path', value,
                          f'{name} in {path}'))
    if not rules:
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
