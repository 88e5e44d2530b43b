"""What decides which tests run and how their outcomes count (rules 32 and 33).

Two kinds of file can switch tests off or turn failures green without a skip marker:

* pytest's configuration (``pytest.ini``, ``pyproject.toml``, ``tox.ini``, ``setup.cfg``,
  ``pytest.toml``): only the settings that change what is collected or how an outcome
  counts are oracle; markers, logging and output settings change with the code all the
  time (rule 33);
* a ``conftest.py`` or a tests ``__init__.py``: pytest imports it before any test, so a
  hook, a ``collect_ignore``, a patched module or a process exit there decides the run.
  It is judged by what the module can do, wherever in it that is written (rule 32).

Both are compared between the two sides of a change as data; a difference is an oracle
change (forbid-mixed-oracle-diff) and a line of the review report.
"""
from __future__ import annotations

import posixpath

from oracle_guard.reading import syntax as ast  # `ast` without its import cost

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from collections.abc import Iterable

# -- pytest configuration (rule 33) -------------------------------------------------------

# pytest's documented configuration options (``pytest --help``, "[pytest] configuration
# options") that change neither what is collected nor how an outcome counts: markers,
# logging, output, caching, strictness about typos. Every other key is oracle, including
# those a plugin adds (``env`` sets environment variables, ``timeout`` fails tests), so a
# setting nobody listed here is judged, not waved through.
NOT_ORACLE_SETTINGS = frozenset((
    'markers', 'minversion', 'strict_config', 'strict_markers', 'cache_dir',
    'console_output_style', 'verbosity_test_cases', 'verbosity_assertions',
    'verbosity_subtests', 'truncation_limit_lines', 'truncation_limit_chars',
    'assertion_text_diff_style', 'enable_assertion_pass_hook',
    'parametrize_long_str_id_strategy', 'tmp_path_retention_count',
    'tmp_path_retention_policy', 'junit_suite_name', 'junit_logging',
    'junit_log_passing_tests', 'junit_duration_report', 'junit_family', 'doctest_encoding',
    'log_level', 'log_format', 'log_date_format', 'log_cli', 'log_cli_level',
    'log_cli_format', 'log_cli_date_format', 'log_file', 'log_file_mode', 'log_file_level',
    'log_file_format', 'log_file_date_format', 'log_auto_indent', 'faulthandler_timeout',
))
# For the documentation: the documented options that ARE oracle.
ORACLE_SETTINGS = (
    'addopts', 'testpaths', 'norecursedirs', 'python_files', 'python_classes',
    'python_functions', 'collect_imported_tests', 'consider_namespace_packages',
    'pythonpath', 'usefixtures', 'required_plugins', 'xfail_strict', 'strict_xfail',
    'strict', 'strict_parametrization_ids', 'empty_parameter_set_mark', 'filterwarnings',
    'max_warnings', 'doctest_optionflags', 'faulthandler_exit_on_timeout',
    'disable_test_id_escaping_and_forfeit_all_rights_to_community_support',
)

# Files pytest reads its configuration from, in the order it prefers them within one
# folder; the value is where the settings sit (None: the file counts even without them).
PYTEST_FILES = ('pytest.ini', '.pytest.ini', 'pytest.toml', '.pytest.toml')
PYTEST_SECTIONS = {'tox.ini': 'pytest', 'setup.cfg': 'tool:pytest'}
CONFIG_NAMES = (*PYTEST_FILES, 'pyproject.toml', *PYTEST_SECTIONS)

Unreadable = tuple  # ('unreadable', raw bytes): compared byte for byte


def _oracle_part(settings: object) -> object:
    if not isinstance(settings, dict):
        return ('unreadable', repr(settings))
    return {k: v for k, v in settings.items() if str(k).lower() not in NOT_ORACLE_SETTINGS}


def _ini_section(raw: bytes, section: str) -> dict | Unreadable | None:
    import configparser

    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(raw.decode('utf-8-sig'))
    except (configparser.Error, UnicodeDecodeError):
        return ('unreadable', raw)
    return dict(parser[section]) if parser.has_section(section) else None


def _toml(raw: bytes) -> dict | Unreadable:
    from oracle_guard.config import parse_toml
    from oracle_guard.findings import ConfigError

    try:
        return parse_toml(raw.decode('utf-8-sig'))
    except (ConfigError, UnicodeDecodeError):
        return ('unreadable', raw)


def pytest_options(path: str, raw: bytes | None) -> object:
    """Every setting of the pytest configuration a file holds, as pytest reads it.

    None when the file is not a pytest configuration file (absent, or without a pytest
    section); otherwise the settings (a dict, pyproject.toml's pytest 9 native keys as
    ``native:NAME`` beside its ``ini_options``; an ini file's values are text), or
    ``('unreadable', raw)`` when it cannot be parsed.
    """
    if raw is None:
        return None
    name = posixpath.basename(path)
    if name in ('pytest.ini', '.pytest.ini'):
        # pytest uses a pytest.ini even when it has no [pytest] section.
        section = _ini_section(raw, 'pytest') if b'pytest' in raw else None
        return section or {}
    if name in ('pytest.toml', '.pytest.toml'):
        data = _toml(raw)
        return data if isinstance(data, tuple) else data.get('pytest', {})
    section_name = PYTEST_SECTIONS.get(name)
    if section_name:
        return _ini_section(raw, section_name) if section_name.encode() in raw else None
    if name == 'pyproject.toml':
        if b'pytest' not in raw:
            return None
        data = _toml(raw)
        if isinstance(data, tuple):
            return data
        tool = data.get('tool')
        table = tool.get('pytest') if isinstance(tool, dict) else None
        if table is None:
            return None
        if not isinstance(table, dict):
            return ('unreadable', raw)
        # [tool.pytest.ini_options], and pytest 9's native [tool.pytest] keys beside it.
        merged = {f'native:{k}': v for k, v in table.items() if k != 'ini_options'}
        merged.update(table.get('ini_options') or {})
        return merged
    return None


def pytest_settings(path: str, raw: bytes | None) -> object:
    """The oracle part of the pytest configuration a file holds (``pytest_options``):
    None, a dict of the settings that are oracle (possibly empty), or ``('unreadable',
    raw)``."""
    options = pytest_options(path, raw)
    return options if options is None or isinstance(options, tuple) else _oracle_part(options)


def _folders_up(path: str) -> list[str]:
    folders, folder = [], posixpath.dirname(path)
    while True:
        folders.append(folder)
        if not folder:
            return folders
        folder = posixpath.dirname(folder)


def displaced_configs(path: str, read: Callable[[str], bytes | None],
                      tracked: Callable[[list[str]], Iterable[str]]) -> list[str]:
    """Other pytest configuration files a new (or removed) one at ``path`` takes over
    from (or hands back to): pytest uses the first one it finds walking up from the
    tests, so a new file in the same folder or below another one replaces its settings.
    """
    candidates = [posixpath.join(folder, name) for folder in _folders_up(path)
                  for name in CONFIG_NAMES]
    others = [p for p in tracked([c for c in candidates if c != path]) if p != path]
    return sorted(p for p in others if pytest_settings(p, read(p)) is not None)


def config_change(path: str, base: bytes | None, new: bytes | None,
                  read_new: Callable[[str], bytes | None],
                  tracked: Callable[[list[str]], Iterable[str]]) -> bool:
    """Whether a touched file changes what pytest runs (rule 33: only oracle settings)."""
    if posixpath.basename(path) not in CONFIG_NAMES:
        return False
    before, after = pytest_settings(path, base), pytest_settings(path, new)
    if before == after:
        return False
    if before is None or after is None:
        # A configuration that appears or goes away: with only harmless settings it
        # changes nothing, unless it takes over from (or gives way to) another one.
        present = after if before is None else before
        return present != {} or bool(displaced_configs(path, read_new, tracked))
    return True


# -- conftest.py and tests __init__.py (rule 32) -----------------------------------------

# Builtins and modules through which a module can bind names it never spells, or reach
# objects it never imports by name: ``globals()['pytest_collection_modifyitems'] = f``,
# ``globals().setdefault('collect_ignore', [])``, ``setattr(sys.modules[__name__], ...)``.
DYNAMIC_NAMES = frozenset((
    'globals', 'vars', 'locals', 'exec', 'eval', 'compile', '__import__', 'setattr',
    'delattr', '__builtins__', 'builtins', 'sys.modules', 'importlib.import_module',
    'importlib.util', 'runpy',
))
# What ends the process before pytest writes its report, or makes it report success.
PROCESS_EXITS = frozenset((
    'os._exit', 'os.abort', 'os.kill', 'os.killpg', 'sys.exit', 'exit', 'quit',
    'pytest.exit', 'signal.raise_signal', 'signal.alarm', 'posix._exit', 'SystemExit',
))
_CONTROL_NAMES = ('pytest_', 'collect_ignore')


def _controls(name: str) -> bool:
    return name.startswith(_CONTROL_NAMES)


def is_run_control_file(path: str, tests: tuple[str, ...]) -> bool:
    """conftest.py anywhere (pytest loads them from every folder it visits) and the
    ``__init__.py`` of packages under the tests roots (imported before their tests)."""
    from oracle_guard.config import in_paths

    name = posixpath.basename(path)
    return name == 'conftest.py' or (name == '__init__.py' and in_paths(path, tests))


def registers_markers_only(node: ast.AST) -> bool:
    """A module-level ``def pytest_configure(config)`` whose body (after a docstring) is
    only ``config.addinivalue_line("markers", "...")`` calls with literal strings: it
    registers markers, as the ``markers`` setting of rule 33 does, and nothing else."""
    if not isinstance(node, ast.FunctionDef) or node.name != 'pytest_configure' or \
            node.decorator_list:
        return False
    args = node.args
    params = [a.arg for a in [*args.posonlyargs, *args.args]]
    if len(params) != 1 or args.vararg or args.kwarg or args.kwonlyargs or args.defaults:
        return False
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    if not body:
        return False

    def literal(arg: ast.AST) -> bool:
        return isinstance(arg, ast.Constant) and isinstance(arg.value, str)

    for stmt in body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr == 'addinivalue_line'
                and isinstance(call.func.value, ast.Name) and call.func.value.id == params[0]
                and len(call.args) == 2 and not call.keywords
                and literal(call.args[0]) and call.args[0].value == 'markers'  # type: ignore[attr-defined]
                and literal(call.args[1])):
            return False
    return True


class _ControlFinder:
    """Collects the statements of a module that can change what runs or how it counts."""

    def __init__(self, tree: ast.Module) -> None:
        from oracle_guard.reading.import_aliases import ImportAliases

        self.aliases = ImportAliases(tree)
        # Names bound by an import: attribute assignment through one patches a module.
        self.imported = set()
        self.defined = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                self.imported.update((a.asname or a.name).split('.')[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                self.imported.update(a.asname or a.name for a in node.names)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.defined.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self.defined.add(node.id)
        self.parts: list[tuple[str, str]] = []

    def _builtin(self, node: ast.AST) -> str | None:
        """The dotted name a reference means: an import, or a builtin nobody re-bound."""
        resolved = self.aliases.resolve(node)
        if resolved is not None:
            return resolved
        if isinstance(node, ast.Name) and node.id not in self.defined and \
                node.id not in self.imported:
            return node.id
        return None

    def _root_is_imported(self, node: ast.AST) -> bool:
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        return isinstance(node, ast.Name) and node.id in self.imported

    def why(self, node: ast.AST) -> str | None:
        """Why one expression node is test-run control, or None."""
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and \
                _controls(node.name):
            return f'defines {node.name}'
        if isinstance(node, ast.Name) and _controls(node.id):
            return f'binds or uses {node.id}'
        if isinstance(node, ast.alias):
            bound = (node.asname or node.name).split('.')[-1]
            if node.name == '*':
                return 'star import (may bring pytest_* hooks)'
            if _controls(bound):
                return f'imports {bound}'
        if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load):
            name = self._builtin(node)
            if name in DYNAMIC_NAMES:
                return f'uses {name} (binds names it does not spell)'
            if name in PROCESS_EXITS:
                return f'uses {name} (ends the process)'
        if isinstance(node, (ast.Attribute, ast.Subscript)) and \
                isinstance(node.ctx, (ast.Store, ast.Del)) and self._root_is_imported(node):
            target = node.value if isinstance(node, ast.Subscript) else node
            if isinstance(node, ast.Attribute) or (
                    isinstance(target, ast.Attribute) and target.attr == '__dict__'):
                return 'assigns to an attribute of an imported module'
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id == 'getattr' and 'getattr' not in self.defined and \
                len(node.args) >= 2 and not isinstance(node.args[1], ast.Constant) and \
                self._root_is_imported(node.args[0]):
            return 'getattr with a computed name on an imported module'
        return None

    def visit(self, node: ast.AST, statement: ast.AST) -> None:
        if registers_markers_only(node):
            return  # rule 53: marker registration (rule 33), not test-run control
        if isinstance(node, ast.stmt):
            statement = node
        why = self.why(node)
        if why is not None:
            import ast as standard  # ast.dump: only for a file that holds such a part

            self.parts.append((why, standard.dump(statement)))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                return  # the whole definition is one part
        for child in ast.iter_child_nodes(node):
            self.visit(child, statement)


def run_control(raw: bytes | None, keep: Callable[[str], bool] | None = None,
                ) -> list[tuple[str, str]] | Unreadable:
    """(why, statement) for every statement of a conftest or tests ``__init__.py`` that
    can decide which tests run or what their outcome is; [] for an absent file.
    ``keep`` narrows the list to the reasons it accepts.

    Fixtures and helpers change with the code all the time and are not listed. Compared
    as syntax (``ast.dump``, no line numbers), so moving code around is no change.
    """
    if raw is None:
        return []  # an absent file controls nothing: adding a fixture-only one is no change
    from oracle_guard.reading.scanner import parse_python
    from oracle_guard.reading.scanner import ScanError

    try:
        tree = parse_python(raw)
    except ScanError:
        return ('unparsable', raw)
    finder = _ControlFinder(tree)
    try:
        finder.visit(tree, tree)
    except RecursionError:
        return ('unparsable', raw)
    return sorted({part for part in finder.parts if keep is None or keep(part[0])})


def run_control_change(base: bytes | None, new: bytes | None,
                       keep: Callable[[str], bool] | None = None) -> list[str]:
    """Why the test-run control of a conftest or tests ``__init__.py`` differs, or []."""
    before, after = run_control(base, keep), run_control(new, keep)
    if before == after:
        return []
    if isinstance(before, tuple) or isinstance(after, tuple):
        return ['cannot be parsed']
    gone, added = set(before) - set(after), set(after) - set(before)
    return sorted({why for why, _ in gone | added})


# -- test modules that load plugins (rule 32) ---------------------------------------------

# pytest reads ``pytest_plugins`` from every test module it imports and loads what it
# names as plugins (``Module._importtestmodule`` -> ``consider_module``): a test module can
# bring test-run control from anywhere, src/ included. Only these reasons count for test
# modules; their other statements (patching, helpers) are the test's own business.
_PLUGIN_MARKERS = (b'pytest_plugins', b'import *', b'globals', b'vars')


def _loads_plugins(why: str) -> bool:
    return 'pytest_plugins' in why or why.startswith(('star import', 'uses globals', 'uses vars'))


def plugin_loading_change(base: bytes | None, new: bytes | None) -> list[str]:
    """Why what a test module makes pytest load as plugins differs, or []."""
    if not any(marker in raw for raw in (base, new) if raw for marker in _PLUGIN_MARKERS):
        return []  # a byte search decides most test modules without a parse
    return run_control_change(base, new, _loads_plugins)
