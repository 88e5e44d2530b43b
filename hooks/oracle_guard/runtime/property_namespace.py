"""What a property test really calls, checked at call time (``oracle-guard ci``, OG714).

The properties are the human-owned oracle, and the audit proves that their own code ran.
But the code reaches the code under test through names: ``from calc import add`` binds
``add`` in the test module, which is then looked up when the test runs. An agent that may
not edit the property can still change what those names mean before the test is called:

* rebind the property module's global (``monkeypatch.setattr(request.module, "add", ...)``
  in a fixture-only conftest, ``sys.modules[...]`` from another test module at import, a
  plugin named by ``pytest_plugins`` in a test module);
* replace the function in the module under ``src`` (``calc.add = fixed`` from a test
  module collected before the property), or put a fake module in ``sys.modules``;
* shadow a builtin (``builtins.max = ...``) or add a global the file never binds.

So, just before a property runs, every name its file binds by an import or a ``def``/
``class`` must still be what that statement bound, the modules under ``src`` must hold no
function compiled from a file elsewhere in the repository (test code planted into the
production module), and no builtin may be replaced by code from the repository.
"""
from __future__ import annotations

import ast
import builtins
import os
import sys
import types
from typing import Any

# file -> (names bound by imports: name -> (module, attribute or None, level),
#          names bound by def/class, every name the module binds, star import present)
_BINDINGS: dict[str, tuple[dict[str, tuple[str, str | None, int]], set[str], set[str], bool]] = {}


def _module_statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """Statements run at module level, including those in if/try/with/for blocks."""
    found = []
    todo = list(body)
    while todo:
        node = todo.pop(0)
        found.append(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for name in ('body', 'orelse', 'finalbody'):
            todo.extend(getattr(node, name, None) or ())
        for handler in getattr(node, 'handlers', None) or ():
            todo.extend(handler.body)
    return found


def _bindings(path: str) -> tuple[dict[str, tuple[str, str | None, int]], set[str], set[str], bool]:
    cached = _BINDINGS.get(path)
    if cached is not None:
        return cached
    imports: dict[str, tuple[str, str | None, int]] = {}
    defined: set[str] = set()
    bound: set[str] = set()
    times: dict[str, int] = {}  # how many statements bind each name
    star = False
    try:
        with open(path, 'rb') as f:
            tree = ast.parse(f.read(), path)
    except (OSError, SyntaxError, ValueError):
        tree = None
    if tree is not None:
        for node in _module_statements(tree.body):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        imports[alias.asname] = (alias.name, None, 0)
                        bound.add(alias.asname)
                    else:
                        top = alias.name.split('.')[0]
                        imports[top] = (top, None, 0)
                        bound.add(top)
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name == '*':
                        star = True
                        continue
                    name = alias.asname or alias.name
                    imports[name] = (node.module or '', alias.name, node.level)
                    bound.add(name)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defined.add(node.name)
                bound.add(node.name)
        # Every other way a name can come to be bound at module level (assignments,
        # loops, `global` in a function, walrus): those names are left alone.
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                names = [node.id]
            elif isinstance(node, ast.Global):
                names = list(node.names)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names = [node.name]
            elif isinstance(node, ast.alias):
                names = [(node.asname or node.name).split('.')[0]]
            for name in names:
                bound.add(name)
                times[name] = times.get(name, 0) + 1
    # A name bound by more than one statement (an import in try/except ImportError, an
    # import then an assignment) has no single source to compare with.
    for name in list(imports):
        if times.get(name, 0) > 1:
            del imports[name]
    defined = {name for name in defined if times.get(name, 0) == 1}
    result = (imports, defined, bound, star)
    _BINDINGS[path] = result
    return result


def defining_file(value: Any) -> str | None:
    """The file whose code a function or class comes from (None: not Python code)."""
    value = getattr(value, '__func__', value)
    code = getattr(value, '__code__', None)
    if isinstance(code, types.CodeType):
        return code.co_filename
    if isinstance(value, type):
        module = sys.modules.get(getattr(value, '__module__', '') or '')
        file = getattr(module, '__file__', None)
        return file if isinstance(file, str) else None
    return None


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _installed_folders(root: str) -> tuple[str, ...]:
    """Where installed code lives: the interpreter's prefixes (a virtual environment made
    inside the repository, as ``python -m venv .venv`` does, included), unless the
    repository itself lies inside one."""
    folders = []
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix}:
        real = os.path.realpath(prefix)
        if not _inside(root, real):
            folders.append(real)
    return tuple(folders)


_UNSEEN = object()


def _plain(value: Any) -> str | None:
    """A file or module name as an exact ``str`` (None when it is not a string): the
    caches below are keyed by it, and a ``str`` subclass with its own ``__eq__`` and
    ``__hash__`` must not stand in for the name of another file."""
    if type(value) is str:
        return value
    return str.__str__(value) if isinstance(value, str) else None


class _Place:
    """The repository and its membership (``Config``), for files as the interpreter names
    them. Installed packages are never repository code, wherever the environment lives:
    a plain re-export of one (``from typing_extensions import override as override``)
    is not a test double.

    One per configuration and process (``place_of``): a property runs this check before
    every call, over every module in ``sys.modules``, so what a file name resolves to is
    looked up once (``os.path.realpath`` walks the file system). The objects bound to the
    names are read afresh on every call; only facts about file names are kept.
    """

    def __init__(self, cfg: Any) -> None:
        self.cfg = cfg
        self.root = os.path.realpath(cfg.root)
        self.installed = _installed_folders(self.root)
        self._repo: dict[str, str | None] = {}  # file name -> repository path or None
        self._owned: dict[str | None, bool] = {}
        self._outside: dict[str | None, bool] = {}
        self._src_module: dict[tuple[str, Any], bool] = {}
        self._src_names: set[str] | None = None

    def real(self, file: str) -> str:
        return os.path.realpath(file) if not file.startswith('<') else file

    def repo_path(self, file: str | None) -> str | None:
        """The repository-relative path of a file of the repository's own code, or None
        (not a file, outside the repository, or installed)."""
        file = _plain(file)
        if not file or file.startswith('<'):
            return None
        found = self._repo.get(file, _UNSEEN)
        if found is not _UNSEEN:
            return found  # type: ignore[return-value]
        real = self.real(file)
        rel: str | None = None
        if _inside(real, self.root) and not any(_inside(real, f) for f in self.installed):
            rel = os.path.relpath(real, self.root).replace(os.sep, '/')
            if any(part in ('site-packages', 'dist-packages') for part in rel.split('/')):
                rel = None
        self._repo[file] = rel
        return rel

    def owned(self, file: str | None) -> bool:
        """Code from the human-owned property tests."""
        file = _plain(file)
        found = self._owned.get(file)
        if found is None:
            rel = self.repo_path(file)
            found = self._owned[file] = rel is not None and self.cfg.is_property(rel)
        return found

    def outside_src(self, file: str | None) -> bool:
        """Code compiled from a file of the repository outside ``src`` (test code)."""
        file = _plain(file)
        found = self._outside.get(file)
        if found is None:
            rel = self.repo_path(file)
            found = self._outside[file] = rel is not None and not self.cfg.is_src(rel)
        return found

    def rel(self, file: str | None) -> str:
        if not file or file.startswith('<'):
            return file or '?'
        real = self.real(file)
        return os.path.relpath(real, self.root).replace(os.sep, '/') if _inside(
            real, self.root) else real

    def src_names(self) -> set[str]:
        if self._src_names is None:
            self._src_names = src_top_names(self.root, self.cfg.src_roots())
        return self._src_names

    def src_module(self, name: str, module: Any) -> bool:
        key = (_plain(name), _plain(getattr(module, '__file__', None)))
        found = self._src_module.get(key)
        if found is None:
            found = self._src_module[key] = self._judge_src_module(key[0] or '', key[1])
        return found

    def _judge_src_module(self, name: str, file: str | None) -> bool:
        rel = self.repo_path(file) if file is not None else None
        if rel is not None and self.cfg.is_src(rel):
            return True
        if name.split('.')[0] not in self.src_names():
            return False
        # A test module inside the package (pkg/tests/test_x.py imported as
        # pkg.tests.test_x) is test code, not a production module; a module of another
        # file put into sys.modules under a production name still is one.
        return rel is None or not self.cfg.is_test(rel) or not _names_file(name, rel)


_PLACES: dict[int, tuple[Any, _Place]] = {}


def place_of(cfg: Any) -> _Place:
    """The one ``_Place`` of this configuration object in this process."""
    kept = _PLACES.get(id(cfg))
    if kept is None or kept[0] is not cfg:
        kept = _PLACES[id(cfg)] = (cfg, _Place(cfg))
    return kept[1]


def _names_file(name: str, rel: str) -> bool:
    """Whether module ``name`` is the one the file ``rel`` defines (by its path)."""
    dotted = rel[:-3] if rel.endswith('.py') else rel
    if dotted.endswith('/__init__'):
        dotted = dotted[:-len('/__init__')]
    dotted = dotted.replace('/', '.')
    return dotted == name or dotted.endswith(f'.{name}')


def _resolve(module: Any, target: tuple[str, str | None, int]) -> tuple[bool, Any]:
    """(known, the object the import statement binds today)."""
    name, attribute, level = target
    if level:
        package = (getattr(module, '__package__', None) or '').split('.')
        if level - 1 > len(package):
            return False, None
        base = '.'.join(package[:len(package) - (level - 1)])
        name = f'{base}.{name}' if name and base else (name or base)
    source = sys.modules.get(name)
    if source is None:
        return False, None
    if attribute is None:
        return True, source
    if hasattr(source, attribute):
        return True, getattr(source, attribute)
    submodule = sys.modules.get(f'{name}.{attribute}')
    return (submodule is not None), submodule


def src_top_names(root: str, src_roots: tuple[str, ...]) -> set[str]:
    """Top-level module and package names under the ``src`` roots (literal folders)."""
    names = set()
    for src in src_roots:
        folder = os.path.join(root, src)
        if os.path.isfile(os.path.join(folder, '__init__.py')):
            # A flat layout names the package itself (src = ["pkg/"]).
            names.add(os.path.basename(os.path.normpath(folder)))
            continue
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        for entry in entries:
            if entry.endswith('.py'):
                names.add(entry[:-3])
            elif os.path.isfile(os.path.join(folder, entry, '__init__.py')):
                names.add(entry)
    return names


def replaced_names(module: Any, test_file: str, cfg: Any) -> list[str]:
    """One line per name of the property's module (or module under ``src``, or builtin)
    that no longer means what the property's source says. Replacements whose code lives
    among the properties (``cfg.is_property``) are the human owner's own test doubles
    and pass."""
    place = place_of(cfg)
    problems: list[str] = []
    namespace = getattr(module, '__dict__', {})
    imports, defined, bound, star = _bindings(test_file)
    for name, target in sorted(imports.items()):
        if name not in namespace:
            continue
        known, expected = _resolve(module, target)
        if known and namespace[name] is not expected and \
                not place.owned(defining_file(namespace[name])):
            where = place.rel(defining_file(namespace[name]))
            problems.append(f'{name!r} was rebound after the import that binds it (now '
                            f'{_describe(namespace[name])} from {where})')
    for name in sorted(defined):
        value = namespace.get(name)
        file = defining_file(value)
        # Library decorators may return their own code (or generated code); code from
        # another file of this repository is a replacement.
        if place.repo_path(file) is not None and not place.owned(file):
            problems.append(f'{name!r}, defined in the property file, was replaced by '
                            f'{_describe(value)} from {place.rel(file)}')
    if not star:
        for name, value in sorted(namespace.items()):
            if name in bound or name.startswith(('__', '@')):
                continue
            if place.owned(defining_file(value)):
                continue
            if isinstance(value, (types.FunctionType, types.ModuleType, type)) or \
                    name in vars(builtins):
                problems.append(f'{name!r} was added to the property\'s module from outside '
                                f'(a {_describe(value)} from {place.rel(defining_file(value))})')
    for modname, source in sorted(list(sys.modules.items()), key=lambda kv: kv[0]):
        if source is None or not place.src_module(modname, source):
            continue
        for attribute, value in list(vars(source).items()):
            if attribute.startswith('__') or not isinstance(value, (types.FunctionType, type)):
                continue
            file = defining_file(value)
            if place.outside_src(file) and not place.owned(file):
                problems.append(f'{modname}.{attribute} is {_describe(value)} from '
                                f'{place.rel(file)}, not code under src')
    for attribute, value in sorted(vars(builtins).items()):
        if isinstance(value, (types.FunctionType, type)):
            file = defining_file(value)
            if file is not None and not place.owned(file) and (
                    file.startswith('<') or place.repo_path(file) is not None):
                problems.append(f'builtins.{attribute} is {_describe(value)} from '
                                f'{place.rel(file)}')
    return problems


def _describe(value: Any) -> str:
    if isinstance(value, types.ModuleType):
        return f'module {value.__name__}'
    name = getattr(value, '__qualname__', None) or type(value).__name__
    return f'{"class" if isinstance(value, type) else "function"} {name}'
