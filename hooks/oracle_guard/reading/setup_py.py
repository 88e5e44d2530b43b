"""``setup.py`` read without running it: the keywords of its ``setup()`` call whose values
are literal.

A value is read when it is a literal (a string, number, list, tuple, set or dict of them,
``dict(k=...)``, ``+`` of two such), a module-level name bound once to one, a call of
``find_packages``/``find_namespace_packages`` with such arguments (a ``Find``), or an
``Extension(name, sources=[...])`` (an ``Extension``). Anything else (a path joined at run
time, a list built in a loop, ``**kwargs`` of a computed dict) leaves the keyword unread:
``SetupCall.unread`` names it, and the caller says so rather than guessing.
"""
from __future__ import annotations

import ast
from typing import NamedTuple


class Find(NamedTuple):
    """``find_packages(where, exclude, include)``: the packages under ``where`` (folders
    with an ``__init__.py``, or any folder of modules for ``namespace``)."""
    where: str
    exclude: tuple[str, ...]
    include: tuple[str, ...]
    namespace: bool = False


class Extension(NamedTuple):
    name: str
    sources: tuple[str, ...]


class SetupCall(NamedTuple):
    found: bool  # a setup() call is there
    keywords: dict[str, object]  # the keywords read, by name
    unread: tuple[str, ...]  # the keywords whose value is computed ('**' for **kwargs)
    strings: frozenset[str]  # every string constant of the file
    commands: tuple[str, ...] = ()  # the commands ``cmdclass`` replaces ('*': unknown)
    writes: bool = False  # the file copies, moves or writes files when it runs


class _Unread(Exception):
    pass


FINDERS = frozenset(('find_packages', 'find_namespace_packages'))
# Calls that put files in place when setup.py runs: module.function, or a method of any
# object (a path's ``write_text``), or ``open`` for writing.
FILE_FUNCTIONS = frozenset(('shutil.copy', 'shutil.copy2', 'shutil.copyfile', 'shutil.copytree',
                            'shutil.move', 'os.rename', 'os.replace', 'os.symlink', 'os.link',
                            'dir_util.copy_tree', 'file_util.copy_file'))
FILE_METHODS = frozenset(('write_text', 'write_bytes', 'symlink_to', 'hardlink_to'))
EXTENSIONS = frozenset(('Extension', 'Library'))


def _name_of(func: ast.AST) -> str | None:
    return getattr(func, 'id', None) or getattr(func, 'attr', None)


class _Reader:
    def __init__(self, tree: ast.Module) -> None:
        self.bound: dict[str, ast.AST | None] = {}
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
            for target in targets:
                if isinstance(target, ast.Name):
                    # bound twice (or added to): not one value
                    again = target.id in self.bound or isinstance(node, ast.AugAssign)
                    self.bound[target.id] = None if again else node.value
        self.seen: set[str] = set()

    def value(self, node: ast.AST | None) -> object:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            if any(isinstance(e, ast.Starred) for e in node.elts):
                raise _Unread
            return [self.value(e) for e in node.elts]
        if isinstance(node, ast.Dict):
            if any(k is None for k in node.keys):
                raise _Unread
            return {self.value(k): self.value(v) for k, v in zip(node.keys, node.values)}
        if isinstance(node, ast.Name) and node.id not in self.seen:
            bound = self.bound.get(node.id)
            if bound is None:
                raise _Unread
            self.seen.add(node.id)
            try:
                return self.value(bound)
            finally:
                self.seen.discard(node.id)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.value(node.left), self.value(node.right)
            if isinstance(left, (list, str)) and type(left) is type(right):
                return left + right  # type: ignore[operator]
        if isinstance(node, ast.Call):
            return self.call(node)
        raise _Unread

    def call(self, node: ast.Call) -> object:
        name = _name_of(node.func)
        if any(isinstance(a, ast.Starred) for a in node.args) or \
                any(k.arg is None for k in node.keywords):
            raise _Unread
        args = [self.value(a) for a in node.args]
        kwargs = {k.arg: self.value(k.value) for k in node.keywords}
        if name == 'dict' and not args:
            return kwargs
        if name in FINDERS:
            names = ('where', 'exclude', 'include')
            given = {**dict(zip(names, args)), **kwargs}
            where = given.get('where', '.')
            exclude, include = given.get('exclude', ()), given.get('include', ('*',))
            if not isinstance(where, str) or not _strings(exclude) or not _strings(include):
                raise _Unread
            return Find(where, tuple(exclude), tuple(include),  # type: ignore[arg-type]
                        name == 'find_namespace_packages')
        if name in EXTENSIONS:
            given = {**dict(zip(('name', 'sources'), args)), **kwargs}
            sources = given.get('sources', ())
            if not isinstance(given.get('name'), str) or not _strings(sources):
                raise _Unread
            return Extension(str(given['name']), tuple(sources))  # type: ignore[arg-type]
        raise _Unread


def _writes(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute):
            owner = getattr(func.value, 'id', None) or getattr(func.value, 'attr', None)
            if f'{owner}.{func.attr}' in FILE_FUNCTIONS or func.attr in FILE_METHODS:
                return True
        elif getattr(func, 'id', None) == 'open':
            mode = node.args[1] if len(node.args) > 1 else next(
                (k.value for k in node.keywords if k.arg == 'mode'), None)
            if isinstance(mode, ast.Constant) and isinstance(mode.value, str) and \
                    set(mode.value) & set('wax'):
                return True
            if mode is not None and not isinstance(mode, ast.Constant):
                return True
    return False


def _command_names(reader: _Reader, node: ast.AST) -> tuple[str, ...]:
    """The keys of a ``cmdclass`` (its classes are setup.py's own code, not read)."""
    while isinstance(node, ast.Name) and reader.bound.get(node.id) is not None:
        node = reader.bound[node.id]  # type: ignore[assignment]
    if isinstance(node, ast.Dict) and all(isinstance(k, ast.Constant) for k in node.keys):
        return tuple(str(k.value) for k in node.keys)  # type: ignore[union-attr]
    if isinstance(node, ast.Call) and _name_of(node.func) == 'dict' and not node.args and \
            all(k.arg for k in node.keywords):
        return tuple(str(k.arg) for k in node.keywords)
    return ('*',)


def _strings(value: object) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)


def read_setup_py(raw: bytes, wanted: frozenset[str]) -> SetupCall | None:
    """The ``wanted`` keywords of the ``setup()`` call of ``raw`` (None when it is not
    Python); the others are neither read nor named unread."""
    try:
        tree = ast.parse(raw)
    except (SyntaxError, ValueError):
        return None
    strings = frozenset(n.value for n in ast.walk(tree)
                        if isinstance(n, ast.Constant) and isinstance(n.value, str))
    call = next((n for n in ast.walk(tree) if isinstance(n, ast.Call)
                 and _name_of(n.func) == 'setup'), None)
    writes = _writes(tree)
    if call is None:
        return SetupCall(False, {}, (), strings, (), writes)
    reader = _Reader(tree)
    keywords: dict[str, object] = {}
    unread: list[str] = []
    commands: tuple[str, ...] = ()
    for keyword in call.keywords:
        if keyword.arg == 'cmdclass':
            commands = _command_names(reader, keyword.value)
        if keyword.arg is not None and keyword.arg not in wanted:
            continue
        try:
            value = reader.value(keyword.value)
        except (_Unread, TypeError, RecursionError):
            unread.append(keyword.arg or '**')
            continue
        if keyword.arg is not None:
            keywords[keyword.arg] = value
        elif isinstance(value, dict):  # **CONFIG of a literal dict
            keywords.update((str(k), v) for k, v in value.items() if k in wanted)
        else:
            unread.append('**')
    return SetupCall(True, keywords, tuple(unread), strings, commands, writes)
