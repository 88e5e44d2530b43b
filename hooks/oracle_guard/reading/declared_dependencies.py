"""What the project declares it needs: ``requires-python`` and its dependencies (rule 41).

``pytest.importorskip("yaml")`` skips when PyYAML is missing. That is an honest
environment skip when the project declares PyYAML somewhere a test environment is built
from (``[project] dependencies``, ``optional-dependencies``, ``[dependency-groups]``,
Poetry's dependency tables, ``setup.cfg``'s ``install_requires``/``extras_require``,
``setup.py``'s ``install_requires``/``extras_require`` where they are literal
(``reading/setup_py``), or a tracked ``*requirements*.txt``/``.in`` file or one in a
``requirements/`` folder), or lists the module in ``optional-modules``.
An import nobody declared is a silence in disguise: the test never runs anywhere.

Import names and distribution names differ; both are compared after PEP 503
normalisation (lower case, runs of ``-``, ``_``, ``.`` become ``-``), the module's top-level
name first, then through the table of well-known differences below, then with the
``python-``/``py`` prefixes many distributions add (``dateutil`` <- ``python-dateutil``,
``yaml`` <- ``pyyaml``).
"""
from __future__ import annotations

import re
from collections.abc import Iterable

from oracle_guard.config import Config
from oracle_guard.config import PYPROJECT
from oracle_guard.repo.tree_view import TreeView
from oracle_guard.oracle.records import FrozenRecord

# Top-level import name -> distributions that provide it, where the names differ beyond
# normalisation and a python-/py prefix.
IMPORT_DISTRIBUTIONS: dict[str, tuple[str, ...]] = {
    'PIL': ('pillow',),
    'yaml': ('pyyaml',),
    'cv2': ('opencv-python', 'opencv-python-headless', 'opencv-contrib-python'),
    'sklearn': ('scikit-learn',),
    'skimage': ('scikit-image',),
    'bs4': ('beautifulsoup4',),
    'attr': ('attrs',),
    'dateutil': ('python-dateutil',),
    'dotenv': ('python-dotenv',),
    'google': ('protobuf', 'google-api-core', 'google-cloud-core'),
    'Crypto': ('pycryptodome', 'pycrypto'),
    'Cryptodome': ('pycryptodomex',),
    'OpenSSL': ('pyopenssl',),
    'jwt': ('pyjwt',),
    'serial': ('pyserial',),
    'usb': ('pyusb',),
    'git': ('gitpython',),
    'zmq': ('pyzmq',),
    'docx': ('python-docx',),
    'magic': ('python-magic',),
    'MySQLdb': ('mysqlclient',),
    'psycopg2': ('psycopg2', 'psycopg2-binary'),
    'fitz': ('pymupdf',),
    'win32api': ('pywin32',),
    'win32con': ('pywin32',),
    'pythoncom': ('pywin32',),
    'pkg_resources': ('setuptools',),
    'mpl_toolkits': ('matplotlib',),
    'IPython': ('ipython',),
    'Levenshtein': ('python-levenshtein', 'levenshtein'),
    'lzo': ('python-lzo',),
    'snappy': ('python-snappy',),
    'zstd': ('zstd', 'zstandard'),
    'brotli': ('brotli', 'brotlicffi', 'brotlipy'),
    'nacl': ('pynacl',),
    'tables': ('tables', 'pytables'),
    'xdist': ('pytest-xdist',),
    'hypothesis': ('hypothesis',),
    'sortedcontainers': ('sortedcontainers',),
    'pytest_asyncio': ('pytest-asyncio',),
    'typing_extensions': ('typing-extensions',),
    'importlib_metadata': ('importlib-metadata',),
    'importlib_resources': ('importlib-resources',),
    'ruamel': ('ruamel-yaml',),
    'jose': ('python-jose',),
    'multipart': ('python-multipart',),
    'socks': ('pysocks',),
    'markdown': ('markdown',),
    'gi': ('pygobject',),
    'wx': ('wxpython',),
    'cairo': ('pycairo',),
    'kiwisolver': ('kiwisolver',),
}
_NAME = re.compile(r'^\s*([A-Za-z0-9][A-Za-z0-9._-]*)')
_REQUIREMENTS_FILE = re.compile(r'(^|/)([^/]*requirements[^/]*|requirements/[^/]+)\.(txt|in)$',
                                re.I)


def normalize(name: str) -> str:
    """PEP 503: ``Ruamel.YAML`` and ``ruamel_yaml`` are ``ruamel-yaml``."""
    return re.sub(r'[-_.]+', '-', name).lower()


def requirement_name(spec: object) -> str | None:
    """The distribution a requirement string names (``"pyyaml>=5; python_version<'4'"``)."""
    if not isinstance(spec, str):
        return None
    match = _NAME.match(spec)
    return normalize(match.group(1)) if match else None


def distributions_of(module: str) -> tuple[str, ...]:
    """Normalised distribution names that may provide ``import module``."""
    top = module.split('.', 1)[0]
    names = [normalize(top), *(normalize(d) for d in IMPORT_DISTRIBUTIONS.get(top, ()))]
    names += [f'python-{normalize(top)}', f'py{normalize(top)}']
    if '.' in module:  # namespace packages: ruamel.yaml, google.protobuf, zope.interface
        names.append(normalize(module))
    return tuple(dict.fromkeys(names))


class ProjectFacts(FrozenRecord):
    __slots__ = ('requires_python', 'distributions', 'optional_modules')
    requires_python: str | None
    distributions: frozenset[str]  # normalised
    optional_modules: frozenset[str]

    def __init__(self, requires_python: str | None, distributions: frozenset[str],
                 optional_modules: frozenset[str]) -> None:
        self._set(requires_python=requires_python, distributions=distributions,
                  optional_modules=optional_modules)

    def declares(self, module: str) -> bool:
        top = module.split('.', 1)[0]
        if module in self.optional_modules or top in self.optional_modules:
            return True
        return any(name in self.distributions for name in distributions_of(module))


def _names_in(values: Iterable[object]) -> set[str]:
    found = set()
    for value in values:
        name = requirement_name(value)
        if name:
            found.add(name)
    return found


def _from_pyproject(data: dict) -> tuple[str | None, set[str]]:  # type: ignore[type-arg]
    found: set[str] = set()
    project = data.get('project')
    requires_python = None
    if isinstance(project, dict):
        if isinstance(project.get('requires-python'), str):
            requires_python = project['requires-python']
        deps = project.get('dependencies')
        found |= _names_in(deps if isinstance(deps, list) else ())
        extras = project.get('optional-dependencies')
        for group in (extras.values() if isinstance(extras, dict) else ()):
            found |= _names_in(group if isinstance(group, list) else ())
    groups = data.get('dependency-groups')  # PEP 735; {include-group = ...} entries skip
    for group in (groups.values() if isinstance(groups, dict) else ()):
        found |= _names_in(group if isinstance(group, list) else ())
    tool = data.get('tool')
    poetry = tool.get('poetry') if isinstance(tool, dict) else None
    if isinstance(poetry, dict):
        tables = [poetry.get('dependencies'), poetry.get('dev-dependencies')]
        poetry_groups = poetry.get('group')
        for group in (poetry_groups.values() if isinstance(poetry_groups, dict) else ()):
            tables.append(group.get('dependencies') if isinstance(group, dict) else None)
        for table in tables:
            if isinstance(table, dict):
                found |= {normalize(name) for name in table if name != 'python'}
        python = (poetry.get('dependencies') or {}).get('python')
        if requires_python is None and isinstance(python, str) and \
                not python.startswith(('^', '~')):
            requires_python = python
    return requires_python, found


def _from_setup_cfg(text: str) -> set[str]:
    import configparser

    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return set()
    lines: list[str] = []
    if parser.has_option('options', 'install_requires'):
        lines += parser.get('options', 'install_requires').splitlines()
    if parser.has_section('options.extras_require'):
        for _key, value in parser.items('options.extras_require'):
            lines += value.splitlines()
    for section in ('options', 'options.extras_require'):
        if parser.has_option(section, 'tests_require'):
            lines += parser.get(section, 'tests_require').splitlines()
    return _names_in(line.split('#', 1)[0] for line in lines)


SETUP_DEPENDENCIES = frozenset(('install_requires', 'extras_require'))


def _requirement_lines(value: object) -> list[object]:
    """A requirements keyword's value: a list of strings, or one string of lines."""
    if isinstance(value, str):
        return [line.split('#', 1)[0] for line in value.splitlines()]
    return list(value) if isinstance(value, list) else []


def _from_setup_py(raw: bytes) -> set[str]:
    """``setup.py``'s ``install_requires`` and ``extras_require``, read without running it:
    literal lists and strings only (a list built at run time declares nothing here)."""
    from oracle_guard.reading.setup_py import read_setup_py

    call = read_setup_py(raw, SETUP_DEPENDENCIES)
    if call is None:
        return set()
    lines = _requirement_lines(call.keywords.get('install_requires'))
    extras = call.keywords.get('extras_require')
    for group in extras.values() if isinstance(extras, dict) else ():
        lines += _requirement_lines(group)
    return _names_in(lines)


def _from_requirements(text: str) -> set[str]:
    lines = []
    for line in text.splitlines():
        line = line.split(' #', 1)[0].strip()
        if not line or line.startswith(('#', '-', 'git+', 'http:', 'https:', '.', '/')):
            continue
        lines.append(line)
    return _names_in(lines)


def _candidate_paths(view: TreeView) -> list[str]:
    """Tracked paths; outside a git repository (a test run from an unpacked sdist) the
    working tree's top two levels, where requirements files live."""
    import os

    from oracle_guard.repo.gitrepo import GitError

    try:
        return view.paths()
    except GitError:
        if view.rev is not None:
            raise
    found = []
    for top, dirs, names in os.walk(view.root):
        rel = os.path.relpath(top, view.root).replace(os.sep, '/')
        depth = 0 if rel == '.' else rel.count('/') + 1
        if depth >= 1:
            dirs[:] = []
        found.extend(name if rel == '.' else f'{rel}/{name}' for name in names)
    return found


def read_requires_python(view: TreeView) -> str | None:
    """``requires-python`` on one side of the change: ``pyproject.toml``, else
    ``setup.cfg``'s ``python_requires``. What an environment condition is judged against
    (rule 40) needs no requirements file, so this reads neither them nor the listing of
    every tracked path that finds them (``read_project_facts``), nor setup.cfg's
    dependencies (``configparser``): setup.cfg only when pyproject.toml names none."""
    from oracle_guard.config import parse_toml
    from oracle_guard.findings import ConfigError

    raw = view.read(PYPROJECT)
    if raw is not None:
        try:
            requires_python = _from_pyproject(parse_toml(raw.decode('utf-8-sig')))[0]
        except (ConfigError, UnicodeDecodeError):
            requires_python = None  # the configuration loader reports it
        if requires_python is not None:
            return requires_python
    raw = view.read('setup.cfg')
    return _setup_cfg_python(raw) if raw is not None else None


def _setup_cfg_python(raw: bytes) -> str | None:
    """setup.cfg's ``python_requires``, as read with its dependencies."""
    match = re.search(r'^python_requires\s*=\s*(.+)$', raw.decode('utf-8', 'replace'), re.M)
    return match.group(1).strip() if match else None


def read_project_facts(view: TreeView, cfg: Config) -> ProjectFacts:
    """The facts on one side of the change (the side the run judges)."""
    requires_python, found = _declared_in_project_files(view)
    for path in _candidate_paths(view):
        if _REQUIREMENTS_FILE.search(path):
            raw = view.read(path)
            if raw is not None:
                found |= _from_requirements(raw.decode('utf-8', 'replace'))
    return ProjectFacts(requires_python, frozenset(found), frozenset(cfg.optional_modules))


def _declared_in_project_files(view: TreeView) -> tuple[str | None, set[str]]:
    """(requires-python, declared distributions) of ``pyproject.toml``, ``setup.cfg`` and
    ``setup.py``."""
    from oracle_guard.config import parse_toml
    from oracle_guard.findings import ConfigError

    requires_python, found = None, set()
    raw = view.read(PYPROJECT)
    if raw is not None:
        try:
            requires_python, found = _from_pyproject(parse_toml(raw.decode('utf-8-sig')))
        except (ConfigError, UnicodeDecodeError):
            pass  # the configuration loader reports a broken pyproject.toml
    raw = view.read('setup.cfg')
    if raw is not None:
        found |= _from_setup_cfg(raw.decode('utf-8', 'replace'))
        if requires_python is None:
            requires_python = _setup_cfg_python(raw)
    raw = view.read('setup.py')
    if raw is not None:
        found |= _from_setup_py(raw)
    return requires_python, found
