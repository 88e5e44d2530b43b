"""What the distribution is built from: a change to it needs a person's approval (rule 54,
kind ``packaging``).

The gate judges the code under the ``src`` roots; what ships is what the build backend
takes, from wherever its configuration says. A change that points it elsewhere (a
``package-dir`` of another folder, a ``setup.py`` that copies files, another backend) ships
code no test of the oracle judged, so it is listed with the capabilities and needs the same
approval. Compared on both sides of the change: ``[build-system]`` and the backends' build
tables of ``pyproject.toml`` (``[tool.setuptools]``, ``[tool.hatch.build]``,
``[tool.poetry]``'s ``packages``/``include``/``exclude``/``build``, ``[tool.flit]``,
``[tool.pdm.build]``, ``[tool.maturin]``, ``[tool.scikit-build]``, ``[tool.meson-python]``),
``setup.cfg``'s ``[options]`` keys that say where modules come from and its
``[options.packages.find]``, and any change of ``setup.py`` (it is code the build runs).
Dependencies, versions and metadata are not compared here. A new top-level module or
package under a ``src`` root folder is one too: the distribution starts to ship an import
name, which could be another distribution's that the oracle imports (``src/numpy/``).
"""
from __future__ import annotations

import configparser
from typing import Any

from oracle_guard.config import Config
from oracle_guard.config import parse_toml
from oracle_guard.findings import ConfigError
from oracle_guard.reading.capabilities import Use
from oracle_guard.repo.changeset import ChangeSet

KIND = 'packaging'
BUILD_TABLES = ('setuptools', 'flit', 'maturin', 'scikit-build', 'meson-python')
SUBTABLES = {'hatch': ('build',), 'pdm': ('build',),
             'poetry': ('packages', 'include', 'exclude', 'build')}
SETUP_CFG_KEYS = ('packages', 'package_dir', 'py_modules', 'ext_modules', 'scripts')


def _pyproject(raw: bytes | None) -> dict[str, Any]:
    if raw is None:
        return {}
    try:
        data = parse_toml(raw.decode('utf-8-sig'))
    except (ConfigError, UnicodeDecodeError):
        return {'unreadable': raw}
    tool = data.get('tool') if isinstance(data.get('tool'), dict) else {}
    found: dict[str, Any] = {'[build-system]': data.get('build-system')}
    for name in BUILD_TABLES:
        found[f'[tool.{name}]'] = tool.get(name)
    for name, keys in SUBTABLES.items():
        table = tool.get(name) if isinstance(tool.get(name), dict) else {}
        for key in keys:
            found[f'[tool.{name}] {key}'] = table.get(key)
    return found


def _setup_cfg(raw: bytes | None) -> dict[str, Any]:
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
        if section.startswith(('options.packages.find', 'options.package_data',
                               'options.data_files')):
            found[f'[{section}]'] = dict(parser.items(section))
    return found


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


def packaging_uses(changes: ChangeSet, cfgs: list[Config]) -> list[tuple[str, Use]]:
    """(file, use) for each build setting the change makes different, and each top-level
    name it adds under a ``src`` root folder."""
    found: list[tuple[str, Use]] = []
    if any(p.endswith('.py') for p in changes.touched()):
        before = _top_names(changes, cfgs, base=True)
        if before:
            for name, path in sorted(_top_names(changes, cfgs, base=False).items()):
                if name not in before:
                    found.append((path, Use(1, KIND, f'new top-level module {name}')))
    touched = changes.touched()
    for path, read in (('pyproject.toml', _pyproject), ('setup.cfg', _setup_cfg)):
        if path not in touched:
            continue
        base, new = read(changes.read_base(path)), read(changes.read_new(path))
        for key in sorted(set(base) | set(new)):
            if base.get(key) != new.get(key):
                found.append((path, Use(1, KIND, key)))
    if 'setup.py' in touched and changes.read_base('setup.py') != changes.read_new('setup.py'):
        found.append(('setup.py', Use(1, KIND, 'setup.py')))
    return found
