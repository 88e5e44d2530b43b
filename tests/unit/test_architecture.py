"""The package's layering (docs/architecture.md): no import cycle, arrows point down.

Every import counts, also one inside a function (a lazy import still ties two modules
together); only imports under ``if TYPE_CHECKING:`` do not, since they never run.
And the package's seams: no module over 800 lines, no private name (``_x``) used across
modules, no hook module importing another, at most eight modules at the root.
"""
from __future__ import annotations

import ast
import functools
import os
from collections.abc import Mapping
from collections.abc import Set as AbstractSet

import pytest

import oracle_guard

PACKAGE = os.path.dirname(os.path.abspath(oracle_guard.__file__))

# folder -> folders (and root modules) it must never import.
UPPER = {'hooks', 'commands', 'gate', 'runtime', 'cli', 'runner', 'report'}
FORBIDDEN = {
    'oracle': UPPER | {'reading'},  # reading/ uses oracle/ (the silence judge), never the reverse
    'reading': UPPER,
    'repo': UPPER,
    'hooks': {'commands', 'gate', 'cli'},
    'runtime': {'commands', 'gate', 'cli', 'hooks'},
    'gate': {'commands', 'cli'},
    'commands': {'cli'},
}
# The folders every module must live in; the root holds only the shared machinery.
ROOT_MODULES = {'__init__', 'cli', 'config', 'context', 'findings', 'history', 'report',
                'runner'}
MAX_ROOT_MODULES = 8
MAX_LINES = 800


def module_names() -> dict[str, str]:
    found = {}
    for folder, _, files in os.walk(PACKAGE):
        for name in files:
            if name.endswith('.py'):
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, PACKAGE)[:-3].replace(os.sep, '.')
                module = 'oracle_guard' if rel == '__init__' else 'oracle_guard.' + rel
                found[module.removesuffix('.__init__')] = path
    return found


def _type_checking_only(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and isinstance(node.test, ast.Name) and \
        node.test.id == 'TYPE_CHECKING'


def imported(module: str, path: str, known: set[str]) -> set[str]:
    with open(path, encoding='utf-8') as f:
        tree = ast.parse(f.read(), path)
    package = module if path.endswith('__init__.py') else module.rpartition('.')[0]
    targets: set[str] = set()

    def visit(node: ast.AST) -> None:
        if _type_checking_only(node):
            for child in node.orelse:  # type: ignore[attr-defined]
                visit(child)
            return
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split('.')[:len(package.split('.')) - node.level + 1]
                base = '.'.join(parts + ([node.module] if node.module else []))
            else:
                base = node.module or ''
            for alias in node.names:
                full = f'{base}.{alias.name}'
                targets.add(full if full in known else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    deps = set()
    for target in targets:
        while target and target not in known:
            target = target.rpartition('.')[0]
        # `from oracle_guard import __version__` reads the package itself: not an arrow.
        if target and target != module and target != 'oracle_guard':
            deps.add(target)
    return deps


@functools.lru_cache(maxsize=None)
def import_graph() -> dict[str, frozenset[str]]:
    """The package's imports, read once per test process (nine tests ask; none changes it)."""
    modules = module_names()
    return {m: frozenset(imported(m, p, set(modules))) for m, p in modules.items()}


def _role(module: str) -> str:
    parts = module.split('.')
    return parts[1] if len(parts) > 1 else ''


def cycles(graph: Mapping[str, AbstractSet[str]]) -> list[list[str]]:
    """Every elementary cycle's module list, found by depth-first search (small graph)."""
    found, seen = [], set()
    for start in sorted(graph):
        stack = [(start, [start])]
        while stack:
            node, path = stack.pop()
            for dep in sorted(graph.get(node, ())):
                if dep == start:
                    key = frozenset(path)
                    if key not in seen:
                        seen.add(key)
                        found.append(path + [start])
                elif dep not in path and dep > start:
                    stack.append((dep, path + [dep]))
    return found


def test_the_import_reader_sees_lazy_imports_and_ignores_type_checking(tmp_path):
    source = tmp_path / 'm.py'
    source.write_text(
        'TYPE_CHECKING = False\n'
        'if TYPE_CHECKING:\n    from oracle_guard.cli import main\n'
        'def f():\n    from oracle_guard.reading import scanner\n')
    deps = imported('oracle_guard.x', str(source), {'oracle_guard.cli',
                                                     'oracle_guard.reading',
                                                     'oracle_guard.reading.scanner'})
    assert deps == {'oracle_guard.reading.scanner'}


def test_the_cycle_finder_finds_a_two_module_cycle():
    assert cycles({'a': {'b'}, 'b': {'a'}, 'c': {'a'}}) == [['a', 'b', 'a']]


def test_the_package_has_no_import_cycle():
    assert cycles(import_graph()) == []


@pytest.mark.parametrize('role', sorted(FORBIDDEN))
def test_arrows_point_down(role):
    wrong = sorted(f'{module} imports {dep}'
                   for module, deps in import_graph().items() if _role(module) == role
                   for dep in deps if _role(dep) in FORBIDDEN[role])
    assert wrong == []


def test_the_package_root_holds_only_the_shared_machinery():
    root = {m.split('.')[1] for m in module_names() if m.count('.') == 1}
    folders = {name for name in os.listdir(PACKAGE)
               if os.path.isdir(os.path.join(PACKAGE, name)) and name != '__pycache__'}
    assert root - folders == ROOT_MODULES - {'__init__'}
    assert folders == {'commands', 'gate', 'hooks', 'oracle', 'reading', 'repo', 'runtime'}


def long_modules(paths: dict[str, str], limit: int = MAX_LINES) -> list[str]:
    """``module: N lines`` for each module longer than ``limit`` lines."""
    found = []
    for module, path in sorted(paths.items()):
        with open(path, encoding='utf-8') as f:
            count = sum(1 for _ in f)
        if count > limit:
            found.append(f'{module}: {count} lines')
    return found


def private_uses(module: str, path: str, known: set[str]) -> list[str]:
    """``module uses other._name`` for each private name of another module of the package
    that ``module`` imports (``from other import _name``) or reaches through an imported
    module (``other._name``), lazy and ``TYPE_CHECKING`` imports included."""
    with open(path, encoding='utf-8') as f:
        tree = ast.parse(f.read(), path)
    package = module if path.endswith('__init__.py') else module.rpartition('.')[0]
    found, aliases = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split('.')[:len(package.split('.')) - node.level + 1]
                base = '.'.join(parts + ([node.module] if node.module else []))
            else:
                base = node.module or ''
            for alias in node.names:
                full = f'{base}.{alias.name}'
                if full in known:
                    aliases[alias.asname or alias.name] = full
                elif base in known and base != module and alias.name.startswith('_') and \
                        not alias.name.startswith('__'):
                    found.append(f'{module} uses {base}.{alias.name}')
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known and alias.asname:
                    aliases[alias.asname] = alias.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.value.id in aliases and aliases[node.value.id] != module and \
                node.attr.startswith('_') and not node.attr.startswith('__'):
            found.append(f'{module} uses {aliases[node.value.id]}.{node.attr}')
    return sorted(set(found))


def test_the_line_counter_flags_a_module_over_the_limit(tmp_path):
    short, long = tmp_path / 'short.py', tmp_path / 'long.py'
    short.write_text('x = 1\n' * MAX_LINES)
    long.write_text('x = 1\n' * (MAX_LINES + 1))
    assert long_modules({'a.short': str(short), 'a.long': str(long)}) == \
        [f'a.long: {MAX_LINES + 1} lines']


def test_no_module_is_over_800_lines():
    assert long_modules(module_names()) == []


def test_the_private_name_reader_sees_imports_and_attributes(tmp_path):
    source = tmp_path / 'm.py'
    source.write_text(
        'from oracle_guard.a import _hidden, shown\n'
        'from oracle_guard import b as other\n'
        'def f():\n    from oracle_guard.a import __version__\n    return other._inner\n'
        'def _own():\n    return 1\n')
    known = {'oracle_guard', 'oracle_guard.a', 'oracle_guard.b', 'oracle_guard.m'}
    assert private_uses('oracle_guard.m', str(source), known) == [
        'oracle_guard.m uses oracle_guard.a._hidden', 'oracle_guard.m uses oracle_guard.b._inner']


def test_no_private_name_is_used_across_modules():
    modules = module_names()
    assert [use for module, path in modules.items()
            for use in private_uses(module, path, set(modules))] == []


def test_no_hook_module_imports_another():
    """A hook's module is its hook id's; what two hooks share lives below them."""
    hooks = {m for m in module_names() if m.startswith('oracle_guard.hooks.')}
    assert sorted(f'{module} imports {dep}' for module, deps in import_graph().items()
                  if module in hooks for dep in deps if dep in hooks) == []


def test_the_package_root_holds_at_most_eight_modules():
    root = [m for m, path in module_names().items()
            if os.path.dirname(path) == PACKAGE]
    assert len(root) <= MAX_ROOT_MODULES, sorted(root)
    assert len(ROOT_MODULES) <= MAX_ROOT_MODULES
