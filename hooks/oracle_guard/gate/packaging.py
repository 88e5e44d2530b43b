"""What the distribution is built from: a change to it needs a person's approval (rule 54,
kind ``packaging``).

The gate judges the code under the ``src`` roots; what ships is what the build backend
takes, from wherever its configuration says. A change that points it elsewhere (a
``package-dir`` of another folder, a ``setup.py`` that copies files, another backend) ships
code no test of the oracle judged, so it is listed with the capabilities and needs the same
approval. Compared on both sides of the change: ``[build-system]``'s backend, backend path
and the names it requires (not their versions), the keys of the backends' tables that say
which code ships (``SUBTABLES``: ``[tool.setuptools]``'s ``packages``, ``package-dir``,
``cmdclass``..., ``[tool.hatch.build]``, Poetry's ``packages``, ``[tool.flit.module]``...),
``setup.cfg``'s ``[options]`` keys that say where modules come from and its
``[options.packages.find]``, and ``setup.py``'s code with its metadata constants blanked
(``_Shape``: a version or classifier edit is no change, a ``cmdclass`` or a
``package_dir`` is). Dependencies, versions, metadata, sdist lists and data files are not.
A new top-level module or package under a ``src`` root folder that the base's test code
imports is one too: it stands in for another distribution's module the oracle compares
with (``src/numpy/``).
"""
from __future__ import annotations

import ast
import configparser
import re
from typing import Any

from oracle_guard.config import Config
from oracle_guard.config import parse_toml
from oracle_guard.findings import ConfigError
from oracle_guard.reading.capabilities import Use
from oracle_guard.repo.changeset import ChangeSet

KIND = 'packaging'
# The keys of each backend's table that say which code goes into the distribution.
# Versions, metadata, dependencies, sdist-only lists and data files are left out.
SETUPTOOLS_KEYS = ('packages', 'package-dir', 'py-modules', 'ext-modules', 'cmdclass',
                   'script-files', 'namespace-packages')
SUBTABLES = {'setuptools': SETUPTOOLS_KEYS, 'hatch': ('build',), 'pdm': ('build',),
             'poetry': ('packages', 'include', 'exclude', 'build'),
             'flit': ('module',), 'maturin': ('python-source', 'python-packages', 'module-name'),
             'scikit-build': ('wheel',), 'meson-python': ('args',)}
SETUP_CFG_KEYS = ('packages', 'package_dir', 'py_modules', 'ext_modules', 'cmdclass',
                  'scripts')
# setup() keywords whose constants say which code ships (the rest is metadata).
SETUP_KEYWORDS = frozenset(('packages', 'package_dir', 'py_modules', 'ext_modules',
                            'cmdclass', 'scripts', 'namespace_packages'))


def _requirement_names(requires: object) -> object:
    """``[build-system] requires`` by distribution name: a version bump is not compared."""
    if not isinstance(requires, list):
        return requires
    return sorted({re.split(r'[\s\[<>=!~;@(]', str(r).strip(), maxsplit=1)[0].lower()
                   .replace('_', '-') for r in requires})


def pyproject_build_settings(raw: bytes | None) -> dict[str, Any]:
    if raw is None:
        return {}
    try:
        data = parse_toml(raw.decode('utf-8-sig'))
    except (ConfigError, UnicodeDecodeError):
        return {'unreadable': raw}
    tool = data.get('tool') if isinstance(data.get('tool'), dict) else {}
    system = data.get('build-system') if isinstance(data.get('build-system'), dict) else {}
    found: dict[str, Any] = {
        '[build-system] build-backend': system.get('build-backend'),
        '[build-system] backend-path': system.get('backend-path'),
        '[build-system] requires': _requirement_names(system.get('requires'))}
    for name, keys in SUBTABLES.items():
        table = tool.get(name) if isinstance(tool.get(name), dict) else {}
        for key in keys:
            found[f'[tool.{name}] {key}'] = table.get(key)
    flit = tool.get('flit') if isinstance(tool.get('flit'), dict) else {}
    metadata = flit.get('metadata') if isinstance(flit.get('metadata'), dict) else {}
    found['[tool.flit.metadata] module'] = metadata.get('module')
    return found


def setup_cfg_build_settings(raw: bytes | None) -> dict[str, Any]:
    if raw is None:
        return {}
    parser = configparser.RawConfigParser()
    try:
        parser.read_string(raw.decode('utf-8', 'replace'))
    except configparser.Error:
        return {'unreadable': raw}
    found: dict[str, Any] = {}
    if parser.has_section('options'):
        for key in SETUP_CFG_KEYS:
            found[f'[options] {key}'] = parser.get('options', key, fallback=None)
    for section in parser.sections():
        if section.startswith('options.packages.find'):
            found[f'[{section}]'] = dict(parser.items(section))
    return found


class _Shape(ast.NodeTransformer):
    """setup.py with its metadata constants blanked: a version, a classifier, a dependency
    list changes nothing; a constant under a keyword that says which code ships does."""

    def visit_keyword(self, node: ast.keyword) -> ast.AST:
        return node if node.arg in SETUP_KEYWORDS else self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        return ast.Constant(value=None)

    def _literal(self, node: ast.AST) -> ast.AST:
        elements = getattr(node, 'elts', None) or [*getattr(node, 'keys', []),
                                                   *getattr(node, 'values', [])]
        if all(isinstance(e, ast.Constant) or e is None for e in elements):
            return ast.Constant(value=None)
        return self.generic_visit(node)

    visit_List = visit_Tuple = visit_Set = visit_Dict = _literal


def setup_py_shape(raw: bytes | None) -> str | None:
    if raw is None:
        return None
    try:
        tree = ast.parse(raw)
    except (SyntaxError, ValueError):
        return raw.decode('utf-8', 'replace')
    return ast.dump(_Shape().visit(tree))


def _top_names(changes: ChangeSet, cfgs: list[Config], base: bool) -> dict[str, str]:
    """Top-level import name -> its first file, under the ``src`` root folders that are no
    package themselves (a root ``mypkg/`` has one name, its own), on one side."""
    view = changes.base_view if base else changes.new
    found: dict[str, str] = {}
    if view is None:
        return found
    roots = sorted({r for c in cfgs for r in c.src_roots() if r.strip('/.')})
    for root in roots:
        if view.read(f'{root}__init__.py') is not None:
            continue
        for path in view.paths([root]):
            rel = path[len(root):]
            if not path.endswith('.py') or any(c.is_test_code(path) for c in cfgs):
                continue
            name = rel.split('/', 1)[0].removesuffix('.py')
            if name.isidentifier():
                found.setdefault(name, path)
    return found


def _imported_by_the_tests(changes: ChangeSet, cfgs: list[Config],
                           names: dict[str, str]) -> set[str]:
    """The names the base revision's test code (the oracle included) imports: there a new
    module of src would stand in for what the tests meant (a module moved or renamed
    inside src is no such name)."""
    view = changes.base_view
    if not names or view is None:
        return set()
    roots = sorted({r for c in cfgs for r in c.test_roots()})
    words = {name: (f'import {name}'.encode(), f'from {name}'.encode()) for name in names}
    found: set[str] = set()
    for path in view.paths(roots):
        if not path.endswith('.py'):
            continue
        raw = view.read(path) or b''
        found.update(name for name, spelled in words.items() if any(w in raw for w in spelled))
    return found


def packaging_uses(changes: ChangeSet, cfgs: list[Config]) -> list[tuple[str, Use]]:
    """(file, use) for each build setting the change makes different, and each top-level
    name it adds under a ``src`` root folder."""
    found: list[tuple[str, Use]] = []
    if any(p.endswith('.py') for p in changes.touched()):
        before = _top_names(changes, cfgs, base=True)
        new = {name: path for name, path in _top_names(changes, cfgs, base=False).items()
               if name not in before}
        for name in sorted(_imported_by_the_tests(changes, cfgs, new)):
            found.append((new[name], Use(1, KIND, f'new top-level module {name}')))
    touched = changes.touched()
    for path, read in (('pyproject.toml', pyproject_build_settings), ('setup.cfg', setup_cfg_build_settings)):
        if path not in touched:
            continue
        base, new = read(changes.read_base(path)), read(changes.read_new(path))
        for key in sorted(set(base) | set(new)):
            if base.get(key) != new.get(key):
                found.append((path, Use(1, KIND, key)))
    if 'setup.py' in touched and setup_py_shape(changes.read_base('setup.py')) != \
            setup_py_shape(changes.read_new('setup.py')):
        found.append(('setup.py', Use(1, KIND, 'setup.py')))
    return found
