"""What the names of a test module stand for (``ImportAliases``): every import and
re-binding of pytest, unittest and Hypothesis under any alias, resolved to the canonical
spelling the scanner's table of silences (``SILENCES``) uses; and whether a resolved name is
the test runner's own object."""
from __future__ import annotations

from oracle_guard.reading import syntax as ast  # `ast` without its import cost

# Where the real objects live, so that `from _pytest.outcomes import skip` and
# `from unittest.case import SkipTest` resolve like their public spellings.
_CANONICAL_PREFIXES = (
    ('_pytest.outcomes.', 'pytest.'),
    ('_pytest.mark.', 'pytest.mark.'),
    ('unittest.case.', 'unittest.'),
)


SILENCES = {
    'pytest.mark.skip': 'skip',
    'pytest.mark.skipif': 'skipif',
    'pytest.mark.xfail': 'xfail',
    'pytest.skip': 'skip',
    'pytest.skip.Exception': 'skip',
    'pytest.xfail': 'xfail',
    'pytest.xfail.Exception': 'xfail',
    'pytest.importorskip': 'importorskip',
    # The exceptions pytest.skip() and pytest.xfail() raise, raised directly.
    'pytest.Skipped': 'skip',
    'pytest.XFailed': 'xfail',
    'unittest.skip': 'unittest-skip',
    'unittest.skipIf': 'unittest-skip',
    'unittest.skipUnless': 'unittest-skip',
    'unittest.expectedFailure': 'expectedFailure',
    'unittest.SkipTest': 'SkipTest',
}


# Names that `from pytest import *` brings in.
_PYTEST_STAR = ('mark', 'skip', 'xfail', 'importorskip', 'param')


# The silences among what `from unittest import *` brings in.
_UNITTEST_STAR = ('skip', 'skipIf', 'skipUnless', 'expectedFailure', 'SkipTest')


# Calls that build a decorator: ``xfail_arm = pytest.mark.xfail(reason=...)`` silences
# nothing until ``@xfail_arm`` is applied, and then silences that test.
_DECORATOR_FACTORIES = ('unittest.skip', 'unittest.skipIf', 'unittest.skipUnless')


# The dotted-name form of a helper module under the tests roots, by its path
# (``reading/helper_modules``): no module name has a colon or a slash.
HELPER = 'oracle-guard-helper:'


# A class of a helper module whose attributes pass a silence on: HELPER + path + CLASS_IN +
# the class's name.
CLASS_IN = '::class:'


class ImportAliases:
    """Local name -> dotted name of what it refers to, from imports and assignments.

    With ``helpers`` (a ``reading.helper_modules`` view of the importing file), a name
    imported from a helper module under the tests roots means what that module binds it
    to (rule 14: ``from tests.harness import skip`` after ``skip = unittest.skip`` there
    is ``unittest.skip``); without it, such a name is ``tests.harness.skip``."""

    def __init__(self, tree: ast.Module, helpers=None) -> None:  # type: ignore[no-untyped-def]
        self.names: dict[str, str] = {}
        # name -> the call it is bound to, for marks named at module or class level
        self.named_marks: dict[str, ast.Call] = {}
        self.helpers = helpers
        # `import tests.harness` (no `as`): dotted module name -> the helper's path
        self.helper_modules: dict[str, str] = {}
        self.uses_helpers = False  # a name was bound through a helper module
        assignments = []
        statements = all_statements(tree)
        owner_class = {id(item): node.name for node in statements
                       if isinstance(node, ast.ClassDef) for item in node.body}
        for node in statements:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if helpers is not None and self._import_helper(alias):
                        continue
                    if alias.asname:
                        self.names[alias.asname] = _canonical(alias.name)
                    else:
                        top = alias.name.split('.')[0]
                        self.names[top] = top
            elif isinstance(node, ast.ImportFrom) and helpers is not None and \
                    (node.level or node.module):
                self._from_helper(node)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    if alias.name == '*':
                        self._runner_star(node.module)
                        continue
                    self.names[alias.asname or alias.name] = _canonical(
                        f'{node.module}.{alias.name}',
                    )
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and \
                    isinstance(node.value, _RESOLVABLE) and _binds_a_name(node):
                assignments.append(node)  # the others bind nothing `resolve` can name
        # `m = pytest.mark`, then `s = m.skip`: resolve chains of plain re-bindings.
        for _ in range(3):
            changed = False
            for node in assignments:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                value = self.resolve(node.value)
                if value is None:
                    continue
                for target in targets:
                    if isinstance(target, ast.Name) and self.names.get(target.id) != value:
                        self.names[target.id] = value
                        changed = True
            if not changed:
                break
        # `class H: later = unittest.skip`, then `@H.later(...)` here or in a module that
        # imports H: the class's attribute under the dotted name `H.later`, so a silence kept
        # on a class is still seen.
        for node in assignments:
            owner = owner_class.get(id(node))
            if owner is None:
                continue
            value = self.resolve(node.value)
            if value is None or not (is_runner_object(value) or value.startswith(HELPER)):
                continue
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                if isinstance(target, ast.Name):
                    self.names[f'{owner}.{target.id}'] = value
        for node in _outside_functions(tree):
            if _is_named_mark(node, self):
                self.named_marks[node.targets[0].id] = node.value  # type: ignore[attr-defined]

    def _runner_star(self, module: str) -> None:
        """``from pytest import *`` and friends: the silences a star import of a runner
        module binds (``from unittest import *``, in a test or a helper), which no name spells."""
        if module == 'pytest':
            for name in _PYTEST_STAR:
                self.names.setdefault(name, f'pytest.{name}')
        elif module in ('unittest', 'unittest.case'):  # in unittest's __all__ since 3.1
            for name in _UNITTEST_STAR:
                self.names.setdefault(name, f'unittest.{name}')
        elif module.startswith('_pytest.'):
            # No _pytest module declares __all__ but _pytest.mark (MARK_GEN); the outcome
            # functions are imported into many of them (_pytest.python has skip): bind what
            # any may bring in.
            for name in (*_PYTEST_OUTCOMES, 'MARK_GEN'):
                self.names.setdefault(name, _canonical(f'{module}.{name}'))

    def _import_helper(self, alias: ast.alias) -> bool:
        """``import tests.harness [as h]`` of a helper module: bound to its path."""
        path = self.helpers.module(alias.name, 0)
        if path is None:
            return False
        self.uses_helpers = True
        if alias.asname or '.' not in alias.name:
            self.names[alias.asname or alias.name] = HELPER + path
        else:
            top = alias.name.split('.')[0]
            self.names[top] = top
            self.helper_modules[alias.name] = path
        return True

    def _from_helper(self, node: ast.ImportFrom) -> None:
        """``from M import n`` (relative too) where M, or M.n, is a helper module."""
        helpers = self.helpers
        base = helpers.module(node.module, node.level)
        if base is not None:  # whatever it binds now: what the helper says may change
            self.uses_helpers = True
        for alias in node.names:
            if alias.name == '*':
                if base is not None:
                    self.uses_helpers = True
                    self.names.update(helpers.star(base))
                elif node.module and not node.level:
                    self._runner_star(node.module)
                continue
            target = helpers.export(base, alias.name) if base is not None else None
            if target is None and base is not None and helpers.owns(base, alias.name):
                target = f'{HELPER}{base}{CLASS_IN}{alias.name}'  # a class, its members kept
            if target is None:
                inner = f'{node.module}.{alias.name}' if node.module else alias.name
                sub = helpers.module(inner, node.level)
                target = None if sub is None else HELPER + sub
            if target is not None:
                self.uses_helpers = True
                self.names[alias.asname or alias.name] = target
            elif node.module and not node.level:
                self.names[alias.asname or alias.name] = _canonical(
                    f'{node.module}.{alias.name}')

    def _member(self, base: str, attr: str) -> str:
        """``base.attr``: the public spelling, or what a helper module binds ``attr`` to."""
        if self.helpers is not None:
            if base.startswith(HELPER):
                path, owner = base[len(HELPER):], ''
                if CLASS_IN in path:
                    path, _, owner = path.rpartition(CLASS_IN)
                    return self.helpers.export(path, f'{owner}.{attr}') or f'{base}.{attr}'
                found = self.helpers.export(path, attr)
                if found is None and self.helpers.owns(path, attr):
                    return f'{base}{CLASS_IN}{attr}'
                return found or f'{base}.{attr}'
            name = f'{base}.{attr}'
            if name in self.helper_modules:
                return HELPER + self.helper_modules[name]
        return _canonical(f'{base}.{attr}')

    def resolve(self, node: ast.AST) -> str | None:
        """``pt.mark.skip`` -> ``pytest.mark.skip`` when ``pt`` is pytest."""
        if isinstance(node, ast.Name):
            return self.names.get(node.id)
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name):
                member = self.names.get(f'{node.value.id}.{node.attr}')  # a class attribute
                if member is not None:
                    return member
            base = self.resolve(node.value)
            return self._member(base, node.attr) if base else None
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[-1], ast.Constant) \
                and isinstance(node.args[-1].value, str):
            # Indirection that still names its target: __import__('pytest'),
            # importlib.import_module('pytest'), getattr(pytest.mark, 'skip').
            func = node.func
            text = node.args[-1].value
            if isinstance(func, ast.Name) and func.id == '__import__' and \
                    func.id not in self.names and len(node.args) == 1:
                return text.split('.')[0]
            if self.resolve(func) == 'importlib.import_module' and len(node.args) == 1:
                return _canonical(text)
            if isinstance(func, ast.Name) and func.id == 'getattr' and \
                    func.id not in self.names and len(node.args) == 2:
                base = self.resolve(node.args[0])
                return self._member(base, text) if base else None
        return None


# What ``ImportAliases.resolve`` may name; any other value resolves to None.
_RESOLVABLE = (ast.Name, ast.Attribute, ast.Call)


def _binds_a_name(node: ast.Assign | ast.AnnAssign) -> bool:
    """Whether an assignment binds a plain name (the only targets aliases follow)."""
    if isinstance(node, ast.AnnAssign):
        return isinstance(node.target, ast.Name)
    return any(isinstance(target, ast.Name) for target in node.targets)


def all_statements(tree: ast.Module) -> list[ast.stmt]:
    """Every statement at any depth; imports and assignments never hide in expressions.

    Walking statement lists only, not every expression node, is what keeps alias
    collection cheap on large test files (``ast.walk`` visits ten times as many nodes);
    a statement that holds no statement list (most of them) is not looked into.
    """
    found: list[ast.stmt] = []
    todo: list[ast.AST] = [tree]
    blocks = _BLOCKS
    while todo:
        node = todo.pop()
        kind = type(node)
        names = blocks.get(kind)
        if names is None:
            names = blocks[kind] = tuple(n for n in _BLOCK_NAMES if n in kind._fields)
        for name in names:
            block = getattr(node, name, None)
            if isinstance(block, list):
                for child in block:
                    if isinstance(child, ast.stmt):
                        found.append(child)
                    if blocks.get(type(child)) != ():
                        todo.append(child)  # an except handler or match case holds a body
    return found


# The fields that hold statement lists, in the order all_statements reads them, and
# for each node class met so far, those it has.
_BLOCK_NAMES = ('body', 'orelse', 'finalbody', 'handlers', 'cases')
_BLOCKS: dict[type, tuple[str, ...]] = {}


def _outside_functions(tree: ast.Module) -> list[ast.AST]:
    """Module- and class-level statements (and except handlers and match cases, which
    hold them), without descending into function bodies, in the order a walk of every
    node there meets them (an expression holds no statement, so none is looked into)."""
    found: list[ast.AST] = []
    todo: list[ast.AST] = [tree]
    holders = (ast.stmt, ast.excepthandler, ast.match_case) if hasattr(ast, 'match_case') \
        else (ast.stmt, ast.excepthandler)
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    while todo:
        node = todo.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, holders) and not isinstance(child, functions):
                found.append(child)
                todo.append(child)
    return found


def _is_named_mark(node: ast.AST, aliases: ImportAliases) -> bool:
    """``name = pytest.mark.xfail(...)``: a silence waiting to be applied by name."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Call)):
        return False
    if node.targets[0].id == 'pytestmark':  # applied to the module or class right here
        return False
    name = aliases.resolve(node.value.func) or ''
    return name in SILENCES and (name.startswith('pytest.mark.') or
                                 name in _DECORATOR_FACTORIES)


# pytest's outcome functions and exceptions, re-exported by many ``_pytest`` modules
# (``_pytest.python.skip``, ``_pytest.runner.Skipped``): under any ``_pytest.*`` module
# they mean the public name. ``MARK_GEN`` is the object ``pytest.mark`` is.
_PYTEST_OUTCOMES = frozenset(('skip', 'xfail', 'importorskip', 'Skipped', 'XFailed'))


def _canonical(name: str) -> str:
    if name.startswith('_pytest.'):
        parts = name.split('.')
        for i, part in enumerate(parts[1:], 1):
            if part == 'MARK_GEN':
                return '.'.join(('pytest.mark', *parts[i + 1:]))
            if part in _PYTEST_OUTCOMES:
                return '.'.join(('pytest', *parts[i:]))
    for prefix, replacement in _CANONICAL_PREFIXES:
        if name.startswith(prefix):
            return replacement + name[len(prefix):]
    return name


RUNNER_ROOTS = ('pytest', '_pytest', 'unittest')


def is_runner_object(name: str | None) -> bool:
    """``pytest``, ``_pytest``, ``unittest`` or a name inside one of them."""
    return name is not None and (name in RUNNER_ROOTS or
                                 name.startswith(tuple(f'{r}.' for r in RUNNER_ROOTS)))
