"""Where the distribution's code comes from: a new source outside the ``src`` roots needs a
person's approval (rule 54, kind ``packaging``).

The gate judges the code under the ``src`` roots; what ships is what the build backend
takes, from wherever its configuration says. So the build configuration of each side
(``pyproject.toml``, ``setup.cfg``, ``setup.py`` read statically: ``reading/setup_py``) is
turned into the source locations it names, with the backend the ``[build-system]`` table
picks: setuptools' ``package-dir``, ``packages`` (a list, or a ``find`` and its ``where``),
``py-modules``, extension sources, ``cmdclass`` modules and the code among its data files
(a ``.py``, a ``.pth`` start-up hook); flit's module; hatch's ``packages``, ``sources``,
``only-include``, ``force-include`` and ``include``; Poetry's ``packages``
(``from``/``include``) and ``include``; pdm's ``package-dir`` and ``includes``; uv's
``module-root``/``module-name``; maturin's ``python-source``; scikit-build's
``wheel.packages``; an in-tree backend's ``backend-path``. A backend's default (the
project's name under the root or ``src/``) counts as named. A folder a search starts from
stands for the packages and modules in it.

A location is a use when it holds code, lies outside the ``src`` roots and the base side
named neither it nor a folder holding it: a ``package-dir`` pointing at another folder
ships code no test of the oracle judged. The tests an include list ships under their own
names cannot stand in for the package and are none; Poetry's sdist-only entries are not
read. A build-system migration whose new backend ships the same folders, a ``packages``
list that gains a subpackage, a version bump or a ``setup.py`` refactor names no new
place. What cannot be read statically (a ``setup.py`` computing its paths, replacing a
build command with its own class, or copying or writing files when it runs; an unknown
backend, meson) is said in the review report (``build_review``'s notes) rather than
flagged, unless a string of that ``setup.py`` names a folder or ``.py`` file outside the
``src`` roots that the base side did not name.

An edit of the base's in-tree backend (a code file under its ``backend-path``) is one too:
that code decides what ships. So is a new top-level module or package under a ``src`` root
folder that the base's test code imports: it stands in for another distribution's module
the oracle compares with (``src/numpy/``).
"""
from __future__ import annotations

import configparser
import fnmatch
import posixpath
import re
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from typing import Any
from typing import NamedTuple

from oracle_guard.config import Config
from oracle_guard.config import in_paths
from oracle_guard.config import parse_toml
from oracle_guard.findings import ConfigError
from oracle_guard.reading.capabilities import Use
from oracle_guard.reading.setup_py import Extension
from oracle_guard.reading.setup_py import Find
from oracle_guard.reading.setup_py import read_setup_py
from oracle_guard.reading.setup_py import SetupCall
from oracle_guard.repo.changeset import ChangeSet

KIND = 'packaging'
FILES = ('pyproject.toml', 'setup.cfg', 'setup.py')
# build-backend -> the backend whose configuration says where code comes from
BACKENDS = {'setuptools.build_meta': 'setuptools', 'setuptools.build_meta:__legacy__':
            'setuptools', 'flit_core.buildapi': 'flit', 'flit.buildapi': 'flit',
            'poetry.core.masonry.api': 'poetry', 'poetry.masonry.api': 'poetry',
            'hatchling.build': 'hatch', 'pdm.backend': 'pdm', 'pdm.pep517.api': 'pdm',
            'uv_build': 'uv', 'maturin': 'maturin', 'scikit_build_core.build': 'scikit-build'}
# What setuptools' automatic discovery and a search from the root leave out (its flat
# layout's exclusions): folders and modules that are no part of the package.
NOT_SHIPPED = frozenset((
    'ci', 'bin', 'debian', 'doc', 'docs', 'documentation', 'manpages', 'news',
    'newsfragments', 'changelog', 'test', 'tests', 'testing', 'unit_test', 'unit_tests',
    'example', 'examples', 'scripts', 'tools', 'util', 'utils', 'python', 'build', 'dist',
    'venv', 'env', 'requirements', 'tasks', 'fabfile', 'site_scons', 'benchmark',
    'benchmarks', 'benchmarking', 'exercise', 'exercises', 'htmlcov', 'setup', 'conftest',
    'toxfile', 'noxfile', 'pavement', 'dodo', 'conanfile', 'manage'))
# setup() keywords that say where code comes from
SETUP_KEYWORDS = frozenset(('package_dir', 'packages', 'py_modules', 'ext_modules',
                            'data_files'))
# Commands that put code into the distribution: a cmdclass replacing one is build code
# setup.py runs, not read here (a test or lint command is none).
BUILD_COMMANDS = frozenset(('build', 'build_py', 'build_ext', 'build_clib', 'build_scripts',
                            'install', 'install_lib', 'install_data', 'install_scripts',
                            'egg_info', 'sdist', 'bdist', 'bdist_wheel', 'bdist_egg',
                            'develop', 'editable_wheel', 'dist_info'))
CODE_SUFFIXES = ('.py', '.pyx', '.pxd', '.pyi', '.c', '.cc', '.cpp', '.h', '.rs', '.so',
                 '.pyd', '.pth')


class Location(NamedTuple):
    path: str  # repository path, '' for the root
    file: str  # the configuration file that names it
    key: str  # the setting: '[tool.setuptools] package-dir'
    # shipped at its own path (an include list): under the tests roots it ships the tests,
    # importable by their own names only
    keeps_path: bool = False


class BuildSources(NamedTuple):
    settings: dict[str, Any]  # what the locations are read from, compared first
    locations: list[Location]
    unread: list[tuple[str, str]]  # (file, what was not read statically)
    strings: frozenset[str]  # the string constants of a setup.py not read statically


def _table(data: object, *keys: str) -> dict[str, Any]:
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else {}


def _norm(path: object) -> str | None:
    if not isinstance(path, str):
        return None
    path = posixpath.normpath(path.strip().replace('\\', '/')).lstrip('/')
    return '' if path == '.' else None if path.startswith('..') else path


def _glob_prefix(pattern: str) -> str | None:
    """The folder part of a pattern before its first glob character."""
    literal = re.split(r'[*?\[]', pattern.lstrip('/'), maxsplit=1)[0]
    if literal != pattern.lstrip('/'):
        literal = literal.rsplit('/', 1)[0] if '/' in literal else ''
    return _norm(literal)


class _Tree:
    """The paths of one side, asked once."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.paths = sorted(paths)
        self.files = set(self.paths)

    def below(self, folder: str) -> list[str]:
        prefix = f'{folder}/' if folder else ''
        return [p for p in self.paths if p.startswith(prefix)]

    def holds_code(self, path: str) -> bool:
        if path in self.files:
            return path.endswith(CODE_SUFFIXES)
        return any(p.endswith(CODE_SUFFIXES) for p in self.below(path))

    def module(self, name: str, roots: Sequence[str] = ('', 'src')) -> str:
        """Where a backend finds a module by its name: ``NAME/`` or ``NAME.py``, at the root
        or under ``src/``."""
        spelled = name.replace('.', '/')
        for root in roots:
            path = f'{root}/{spelled}' if root else spelled
            if self.holds_code(path) and path not in self.files:
                return path
            if f'{path}.py' in self.files:
                return f'{path}.py'
        return spelled

    def spread(self, path: str) -> list[str]:
        """A file or package as itself, a folder of them as what it holds."""
        if path in self.files or f'{path}/__init__.py' in self.files:
            return [path]
        return self.contents(path)

    def contents(self, folder: str, exclude: Sequence[str] = (),
                 include: Sequence[str] = ('*',), modules: bool = True,
                 init: bool = False) -> list[str]:
        """The packages (and ``modules``) a search from ``folder`` finds (the tests, docs
        and tools setuptools leaves out are left out; ``init``: a package has an
        ``__init__.py``)."""
        found = set()
        prefix = f'{folder}/' if folder else ''
        for path in self.below(folder):
            rest = path[len(prefix):]
            top, _, deeper = rest.partition('/')
            if deeper and (deeper == '__init__.py' if init else path.endswith('.py')):
                found.add(top)
            elif modules and not deeper and top.endswith('.py'):
                found.add(top)
        kept = []
        for top in sorted(found):
            name = top.removesuffix('.py')
            if name in NOT_SHIPPED or name.startswith(('.', '_')) or not name.isidentifier():
                continue
            # a dotted pattern ("*.tests", "dd.*") is about subpackages: it excludes no
            # top-level name, and includes the top-level one it is under
            if any(fnmatch.fnmatchcase(name, p) for p in exclude if '.' not in p) or \
                    not any(fnmatch.fnmatchcase(name, p.split('.', 1)[0]) for p in include):
                continue
            kept.append(f'{prefix}{top}')
        return kept


def _lines(value: str) -> list[str]:
    return [v.strip() for v in re.split(r'[\n,]', value) if v.strip()]


def _cfg_mapping(value: str) -> dict[str, str]:
    """setup.cfg's ``package_dir`` (``= src`` and ``pkg = lib/pkg`` lines)."""
    found = {}
    for line in value.splitlines():
        if '=' in line:
            key, _, folder = line.partition('=')
            found[key.strip()] = folder.strip()
    return found


class _Setuptools(NamedTuple):
    """setuptools' settings gathered from the three files: (value, file, key) each."""
    package_dir: tuple[object, str, str] | None
    packages: tuple[object, str, str] | None
    py_modules: tuple[object, str, str] | None
    extensions: list[tuple[object, str, str]]
    cmdclass: list[tuple[object, str, str]]
    data_files: list[tuple[object, str, str]]  # each file installed as data


def _data_files(pyproject_tool: dict[str, Any], cfg: configparser.RawConfigParser | None,
                setup: dict[str, Any]) -> list[tuple[object, str, str]]:
    """setuptools' data files (a ``.py`` or ``.pth`` among them is code it installs)."""
    found: list[tuple[object, str, str]] = []
    for files in _table(pyproject_tool, 'data-files').values():
        found += ((f, 'pyproject.toml', '[tool.setuptools] data-files')
                  for f in (files if isinstance(files, list) else ()))
    if cfg is not None and cfg.has_section('options.data_files'):
        for _, files in cfg.items('options.data_files'):
            found += ((f, 'setup.cfg', '[options.data_files]') for f in _lines(files))
    entries = setup.get('data_files')
    for entry in entries if isinstance(entries, list) else ():
        files = entry[1] if isinstance(entry, list) and len(entry) == 2 else [entry]
        found += ((f, 'setup.py', 'setup() data_files')
                  for f in (files if isinstance(files, list) else ()))
    return found


def _setuptools_settings(pyproject: dict[str, Any], cfg: configparser.RawConfigParser | None,
                         setup: dict[str, Any]) -> _Setuptools:
    tool = _table(pyproject, 'tool', 'setuptools')
    options = dict(cfg.items('options')) if cfg is not None and cfg.has_section('options') \
        else {}
    given: dict[str, tuple[object, str, str] | None] = {}
    for name, cfg_key, toml_key in (('package_dir', 'package_dir', 'package-dir'),
                                    ('packages', 'packages', 'packages'),
                                    ('py_modules', 'py_modules', 'py-modules')):
        value: tuple[object, str, str] | None = None
        if name in setup:
            value = (setup[name], 'setup.py', f'setup() {name}')
        elif cfg_key in options:
            raw = options[cfg_key]
            read: object = _cfg_mapping(raw) if name == 'package_dir' else _lines(raw)
            if name == 'packages' and raw.strip() in ('find:', 'find_namespace:'):
                find = dict(cfg.items('options.packages.find')) if cfg is not None and \
                    cfg.has_section('options.packages.find') else {}
                read = Find(find.get('where', '.').strip() or '.',
                            tuple(_lines(find.get('exclude', ''))),
                            tuple(_lines(find.get('include', '')) or ['*']),
                            raw.strip() == 'find_namespace:')
            value = (read, 'setup.cfg', f'[options] {cfg_key}')
        elif toml_key in tool:
            read = tool[toml_key]
            if name == 'packages' and isinstance(read, dict):
                find = _table(read, 'find') or _table(read, 'find-namespace')
                wheres = find.get('where', ['.'])
                read = [Find(w, tuple(find.get('exclude', ())), tuple(find.get('include', ['*'])),
                             find.get('namespaces', True) is not False)
                        for w in (wheres if isinstance(wheres, list) else [wheres])]
            value = (read, 'pyproject.toml', f'[tool.setuptools] {toml_key}')
        given[name] = value
    extensions = [(e, 'setup.py', 'setup() ext_modules') for e in setup.get('ext_modules') or ()
                  if isinstance(setup.get('ext_modules'), list)]
    for e in tool.get('ext-modules') or ():
        if isinstance(e, dict):
            extensions.append((Extension(str(e.get('name')), tuple(e.get('sources', ()))),
                               'pyproject.toml', '[tool.setuptools] ext-modules'))
    cmdclass = [(v, 'pyproject.toml', '[tool.setuptools] cmdclass')
                for v in _table(tool, 'cmdclass').values()]
    cmdclass += [(v, 'setup.cfg', '[options] cmdclass')
                 for v in _cfg_mapping(options.get('cmdclass', '')).values()]
    return _Setuptools(given['package_dir'], given['packages'], given['py_modules'],
                       extensions, cmdclass, _data_files(tool, cfg, setup))


def _setuptools_locations(tree: _Tree, st: _Setuptools, config: str) -> list[Location]:
    """The locations setuptools takes code from (``config``: the file its automatic
    discovery is told of)."""
    mapping = st.package_dir[0] if st.package_dir and isinstance(st.package_dir[0], dict) \
        else {}
    pd_file, pd_key = st.package_dir[1:] if st.package_dir else ('', '')
    found: list[Location] = []

    def where(name: str) -> tuple[str | None, bool]:
        """The folder of a package by the ``package_dir`` mapping (and whether it says so)."""
        parts = name.split('.')
        for n in range(len(parts), -1, -1):
            key = '.'.join(parts[:n])
            if key in mapping:
                folder = _norm(mapping[key])
                if folder is None:
                    return None, True
                return posixpath.join(folder, *parts[n:]) if parts[n:] else folder, True
        return '/'.join(parts), False

    def add(path: str | None, mapped: bool, file: str, key: str) -> None:
        if path is not None:
            found.append(Location(path, pd_file, pd_key) if mapped else
                         Location(path, file, key))

    for package, folder in mapping.items():
        if package and isinstance(folder, str):
            add(_norm(folder), True, pd_file, pd_key)
    packages, file, key = st.packages or (None, '', '')
    finds = [packages] if isinstance(packages, Find) else \
        [p for p in packages if isinstance(p, Find)] if isinstance(packages, list) else []
    for name in packages if isinstance(packages, list) else ():
        if isinstance(name, str):
            add(*where(name), file, key)
    for find in finds:
        folder = _norm(find.where)
        for path in tree.contents(folder, find.exclude, find.include, modules=False,
                                  init=not find.namespace) if folder is not None else ():
            # the names found, where package_dir puts them (the search's folder else)
            mapped, by_mapping = where(path[len(folder):].lstrip('/'))  # type: ignore[arg-type]
            add(mapped if by_mapping else path, by_mapping, file, key)
    modules, file, key = st.py_modules or (None, '', '')
    for name in modules if isinstance(modules, list) else ():
        if isinstance(name, str):
            path, mapped = where(name)
            add(f'{path}.py' if path is not None else None, mapped, file, key)
    if packages is None and modules is None:
        # automatic discovery: from the package-dir's folder, else src/ if it holds code,
        # else the root
        root = _norm(mapping.get('')) if '' in mapping else 'src' \
            if tree.holds_code('src') else ''
        for path in tree.contents(root) if root is not None else ():
            add(path, '' in mapping, config, 'setuptools discovery')
    for ext, file, key in st.extensions:
        for source in ext.sources if isinstance(ext, Extension) else ():
            add(_norm(source), False, file, key)
    for value, file, key in st.cmdclass:
        if isinstance(value, str) and '.' in value:
            add(tree.module(value.rsplit('.', 1)[0], ('',)), False, file, key)
    for value, file, key in st.data_files:
        pattern = _norm(value)
        for path in [p for p in tree.paths if fnmatch.fnmatchcase(p, pattern)] \
                if pattern else ():
            add(path, False, file, key)  # the files a path or pattern names
    return found


def _project_module(pyproject: dict[str, Any]) -> str | None:
    name = _table(pyproject, 'project').get('name') or \
        _table(pyproject, 'tool', 'poetry').get('name')
    return re.sub(r'[-.]+', '_', name).lower() if isinstance(name, str) else None


def _backend_locations(tree: _Tree, backend: str, pyproject: dict[str, Any]
                       ) -> list[Location]:
    """The locations a backend other than setuptools takes its code from."""
    found: list[Location] = []
    default = _project_module(pyproject)

    def add(path: str | None, key: str, keeps_path: bool = False) -> None:
        if path is not None:
            found.append(Location(path, 'pyproject.toml', key, keeps_path))

    def wheel(entry: object) -> bool:
        """A Poetry entry that goes into the wheel (not one of ``format = "sdist"``)."""
        formats = entry.get('format', 'wheel') if isinstance(entry, dict) else 'wheel'
        return 'wheel' in (formats if isinstance(formats, list) else [formats])

    if backend == 'flit':
        name = _table(pyproject, 'tool', 'flit', 'module').get('name') or \
            _table(pyproject, 'tool', 'flit', 'metadata').get('module') or default
        if isinstance(name, str):
            add(tree.module(name), '[tool.flit.module] name')
    elif backend == 'uv':
        table = _table(pyproject, 'tool', 'uv', 'build-backend')
        root = _norm(table.get('module-root', 'src'))
        names = table.get('module-name', default)
        for name in names if isinstance(names, list) else [names]:
            if isinstance(name, str) and root is not None:
                add(tree.module(name, (root,)), '[tool.uv.build-backend] module-root')
    elif backend == 'poetry':
        poetry = _table(pyproject, 'tool', 'poetry')
        packages = poetry.get('packages')
        for entry in packages if isinstance(packages, list) else ():
            if isinstance(entry, dict) and isinstance(entry.get('include'), str) and \
                    wheel(entry):
                prefix = _glob_prefix(entry['include'])
                source = _norm(entry.get('from', ''))
                if prefix is not None and source is not None:
                    add(posixpath.join(source, prefix) if source else prefix,
                        '[tool.poetry] packages')
        if not isinstance(packages, list) and default:
            add(tree.module(default), '[tool.poetry] name')
        for entry in poetry.get('include') or ():
            path = entry.get('path') if isinstance(entry, dict) else entry
            if wheel(entry):
                add(_glob_prefix(path) if isinstance(path, str) else None,
                    '[tool.poetry] include', keeps_path=True)
    elif backend == 'hatch':
        named = False
        tables = [_table(pyproject, 'tool', 'hatch', *key.split('.'))
                  for key in ('build', 'build.targets.wheel')]
        remapped = any(table.get('sources') for table in tables)
        for key in ('build', 'build.targets.wheel'):
            table = _table(pyproject, 'tool', 'hatch', *key.split('.'))
            label = f'[tool.hatch.{key}]'
            for setting in ('packages', 'only-include', 'include'):
                for entry in table.get(setting) or ():
                    named = True
                    path = _glob_prefix(entry) if isinstance(entry, str) else None
                    if setting == 'packages' or path is None:
                        add(path, f'{label} {setting}')
                    else:
                        for inner in tree.spread(path):
                            add(inner, f'{label} {setting}', keeps_path=not remapped)
            sources = table.get('sources')
            for entry in sources if isinstance(sources, (list, dict)) else ():
                folder = _norm(entry)
                for path in tree.spread(folder) if folder is not None else ():
                    add(path, f'{label} sources')
            for entry in _table(table, 'force-include'):
                add(_norm(entry), f'{label} force-include')
        if not named and default:
            add(tree.module(default), '[project] name')
    elif backend == 'pdm':
        table = _table(pyproject, 'tool', 'pdm', 'build')
        folder = _norm(table.get('package-dir', 'src' if tree.holds_code('src') else ''))
        for entry in table.get('includes') or ():
            add(_glob_prefix(entry) if isinstance(entry, str) else None,
                '[tool.pdm.build] includes')
        if not table.get('includes') and folder is not None:
            for path in tree.contents(folder):
                add(path, '[tool.pdm.build] package-dir')
    elif backend == 'maturin':
        table = _table(pyproject, 'tool', 'maturin')
        folder = _norm(table.get('python-source', ''))
        for path in tree.contents(folder) if folder is not None else ():
            add(path, '[tool.maturin] python-source')
    elif backend == 'scikit-build':
        for entry in _table(pyproject, 'tool', 'scikit-build', 'wheel').get('packages') or ():
            add(_norm(entry), '[tool.scikit-build] wheel.packages')
    return found


def _setup_py_unread(call: SetupCall) -> str:
    """What of setup.py decides where code comes from when it runs ('' for nothing)."""
    said = [] if call.found else ['no setup() call']
    if call.unread:
        said.append(f'setup() computes {", ".join(call.unread)} at run time')
    built = sorted(c for c in call.commands if c in BUILD_COMMANDS or c == '*')
    if built:
        said.append(f'setup() replaces the {", ".join(built)} command')
    if call.writes:
        said.append('setup.py copies or writes files when it runs')
    return '; '.join(said)


def build_sources(read: Callable[[str], bytes | None], paths: Iterable[str]) -> BuildSources:
    """The source locations one side's build configuration names (the module docstring)."""
    tree = _Tree(paths)
    raw = {name: read(name) for name in FILES}
    settings: dict[str, Any] = {}
    unread: list[tuple[str, str]] = []
    pyproject: dict[str, Any] = {}
    if raw['pyproject.toml'] is not None:
        try:
            pyproject = parse_toml(raw['pyproject.toml'].decode('utf-8-sig'))
        except (ConfigError, UnicodeDecodeError):
            unread.append(('pyproject.toml', 'not TOML'))
    system = _table(pyproject, 'build-system')
    name = system.get('build-backend')
    backend = BACKENDS.get(name.strip(), name) if isinstance(name, str) else 'setuptools'
    settings['backend'] = backend
    settings['project'] = _project_module(pyproject)
    locations = [Location(_norm(p) or '', 'pyproject.toml', '[build-system] backend-path')
                 for p in system.get('backend-path') or () if _norm(p) is not None]
    strings: frozenset[str] = frozenset()
    if backend == 'setuptools':
        cfg = None
        if raw['setup.cfg'] is not None:
            cfg = configparser.RawConfigParser(strict=False, interpolation=None)
            try:
                cfg.read_string(raw['setup.cfg'].decode('utf-8', 'replace'))
            except configparser.Error:
                cfg = None
                unread.append(('setup.cfg', 'not an INI file'))
        setup: dict[str, Any] = {}
        if raw['setup.py'] is not None:
            call = read_setup_py(raw['setup.py'], SETUP_KEYWORDS)
            missing = 'not Python' if call is None else _setup_py_unread(call)
            if call is not None:
                setup = call.keywords
            if missing:
                strings = call.strings if call is not None else frozenset()
                unread.append(('setup.py', missing))
                settings['setup.py'] = raw['setup.py']  # any edit of it may move the sources
        st = _setuptools_settings(pyproject, cfg, setup)
        settings['setuptools'] = st
        config = next((f for f in ('setup.py', 'setup.cfg') if raw[f] is not None),
                      'pyproject.toml')
        locations += _setuptools_locations(tree, st, config)
    elif backend in BACKENDS.values():
        settings['tool'] = _table(pyproject, 'tool')
        locations += _backend_locations(tree, backend, pyproject)
    else:
        settings['tool'] = _table(pyproject, 'tool')  # what that backend may read
        if not locations:
            unread.append(('pyproject.toml',
                           f'build-backend {backend}, not one the gate reads'))
    settings['backend-path'] = system.get('backend-path')
    return BuildSources(settings, locations, unread, strings)


def _inside(cfgs: Sequence[Config], path: str) -> bool:
    """Under a ``src`` root (a folder that is one, or a file of one)."""
    return any(in_paths(path, c.src) or in_paths(f'{path}/', c.src) for c in cfgs)


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


def new_sources(base: BuildSources, head: BuildSources, head_paths: Iterable[str],
                inside: Callable[[str], bool], tested: Callable[[str], bool] = lambda p: False
                ) -> tuple[list[tuple[str, Use]], list[tuple[str, str]]]:
    """(file, use) for each location the head names outside the ``src`` roots that the
    base did not (``tested``: under the tests roots, where an include list that keeps
    paths ships the tests under their own names); (file, note) for what the head's
    configuration leaves unread."""
    if base.settings == head.settings:
        return [], []
    tree = _Tree(head_paths)
    named = {loc.path for loc in base.locations}

    def new(path: str) -> bool:
        return not inside(path) and tree.holds_code(path) and path not in base.strings and \
            not any(path == b or (b and path.startswith(f'{b}/')) for b in named)

    found: list[tuple[str, Use]] = []
    seen = set()
    for loc in head.locations:
        if loc.keeps_path and tested(loc.path):
            continue
        if loc.path not in seen and new(loc.path):
            seen.add(loc.path)
            found.append((loc.file, Use(1, KIND, f'{loc.key} {loc.path or "."}')))
    notes = []
    for file, what in head.unread:
        spelled = sorted({p for p in (_norm(s) for s in head.strings if len(s) < 300)
                          if p and p not in seen and p.rsplit('/', 1)[-1].removesuffix('.py')
                          not in NOT_SHIPPED and new(p) and not any(
                              s == p or s.startswith(f'{p}/') or p.startswith(f'{s}/')
                              for s in seen)}) if file == 'setup.py' else []
        for path in spelled:
            seen.add(path)
            found.append((file, Use(1, KIND, f'setup.py names {path}')))
        if not spelled:
            notes.append((file, what))
    return found, notes


def build_review(changes: ChangeSet, cfgs: list[Config]
                 ) -> tuple[list[tuple[str, Use]], list[tuple[str, str]]]:
    """(file, use) for each new source of the build outside the ``src`` roots, and each
    file of the base's in-tree backend (``backend-path``) the change touches: its code
    decides what ships; (file, what) for the head's build configuration that could not be
    read statically. Only a change that touches a build file or that backend is compared."""
    touched = changes.touched()
    if changes.base_view is None:
        return [], []
    backend = [p for p in (_norm(p) for p in _backend_path(changes.read_base('pyproject.toml')))
               if p is not None]
    edited = sorted(p for p in touched if p.endswith(CODE_SUFFIXES) and p not in FILES and any(
        not b or p.startswith(f'{b}/') for b in backend) and not _inside(cfgs, p) and not any(
        c.is_test(p) for c in cfgs))
    found = [(p, Use(1, KIND, f'in-tree backend {p}')) for p in edited]
    if not set(FILES) & touched:
        return found, []
    base = build_sources(changes.read_base, changes.base_view.paths())
    head_paths = changes.new.paths()
    head = build_sources(changes.read_new, head_paths)
    uses, notes = new_sources(base, head, head_paths, lambda p: _inside(cfgs, p),
                              lambda p: any(c.is_test(p) or c.is_test(f'{p}/') for c in cfgs))
    return [*found, *uses], notes


def _backend_path(raw: bytes | None) -> list[object]:
    """``[build-system] backend-path`` of a pyproject.toml (none when unreadable)."""
    if raw is None or b'backend-path' not in raw:
        return []
    try:
        paths = _table(parse_toml(raw.decode('utf-8-sig')), 'build-system').get('backend-path')
    except (ConfigError, UnicodeDecodeError):
        return []
    return paths if isinstance(paths, list) else []


def packaging_uses(changes: ChangeSet, cfgs: list[Config]) -> list[tuple[str, Use]]:
    """(file, use) for each new source outside the ``src`` roots and each new top-level
    name under a ``src`` root folder that the base's tests import."""
    found: list[tuple[str, Use]] = []
    if any(p.endswith('.py') for p in changes.touched()):
        before = _top_names(changes, cfgs, base=True)
        new = {name: path for name, path in _top_names(changes, cfgs, base=False).items()
               if name not in before}
        for name in sorted(_imported_by_the_tests(changes, cfgs, new)):
            found.append((new[name], Use(1, KIND, f'new top-level module {name}')))
    return [*found, *build_review(changes, cfgs)[0]]
