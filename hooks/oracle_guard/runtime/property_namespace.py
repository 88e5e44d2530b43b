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
* shadow a builtin (``builtins.max = ...``, with a function or any other object) or add a
  global the file never binds.

So, just before a property runs, every name its file binds by an import or a ``def``/
``class`` must still be what that statement bound, the modules under ``src`` must hold no
function compiled from a file elsewhere in the repository (test code planted into the
production module), no builtin may be replaced by code from the repository, and no builtin
may hold another object than when the plugin loaded unless installed code or the property
folder's own code made it.
"""
from __future__ import annotations

import ast
import builtins
import operator
import os
import sys
import types
from typing import Any

from oracle_guard.runtime.source_code import BUILTINS_AT_START
from oracle_guard.runtime.source_code import from_source
from oracle_guard.runtime.source_code import impersonates

# This module judges what the code under test did to the builtins, and it is imported when
# the first property is called, after that code ran: its own code looks its builtins up in
# the copy taken when the plugin loaded, so a replaced ``sorted`` or ``isinstance`` does not
# answer for the judge (a module's code reads its globals' ``__builtins__``).
__builtins__ = (BUILTINS_AT_START or vars(builtins)).copy()  # type: ignore[assignment]

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
        # id(module) -> (module, name, file, verdict): the same three objects as the last
        # call make the same key, so the same verdict (held, so no id is reused)
        self._src_seen: dict[int, tuple[Any, Any, Any, bool]] = {}
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

    def owned_value(self, value: Any, file: str | None) -> bool:
        """A test double of the human owner's: code of a property file (``file``, the
        value's ``defining_file``) that this file compiles to. A function merely claiming
        the file (added by a planted cache, or built at run time under its name) is not
        (rule 45); a class, by the functions it defines that claim a property file."""
        if not self.owned(file):
            return False
        value = getattr(value, '__func__', value)
        if isinstance(value, type):
            members = getattr(value, '__dict__', {})
            return all(self._compiled_here(f) for f in list(members.values())
                       if type(f) is _FUNCTION and self.owned(f.__code__.co_filename))
        return self._compiled_here(value)

    def _compiled_here(self, function: Any) -> bool:
        # A Hypothesis wrapper (``@given``, a stateful rule) claims the file and line of
        # the function it wraps: that function is the code compiled there.
        for _ in range(8):
            inner = impersonates(function)
            if inner is None:
                break
            function = inner
        code = getattr(function, '__code__', None)
        if not isinstance(code, types.CodeType):
            return True  # no code of its own: the file it names is its module's
        return from_source(code, self.real(code.co_filename))

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
        file = getattr(module, '__file__', None)
        seen = self._src_seen.get(id(module))
        if seen is not None and seen[0] is module and seen[1] is name and seen[2] is file:
            return seen[3]
        key = (_plain(name), _plain(file))
        found = self._src_module.get(key)
        if found is None:
            found = self._src_module[key] = self._judge_src_module(key[0] or '', key[1])
        if len(self._src_seen) < 100_000:
            self._src_seen[id(module)] = (module, name, file, found)
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


def _exact_keys(*namespaces: dict[Any, Any]) -> bool:
    """Whether every key is an exact ``str``: then a key sort is the sort of the items
    (unique keys, one total order), and nothing a key defines runs."""
    return all(set(map(type, namespace)) <= {str} for namespace in namespaces)


_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement or type()
# id(static type) -> (the type, what it binds to __func__ or __code__ through its MRO or
# None, its __module__): a type compiled into the interpreter cannot be changed from Python.
_STATIC: dict[int, tuple[type, bool, Any]] = {}


def _static_type(value: type) -> tuple[type, bool, Any]:
    kept = _STATIC.get(id(value))
    if kept is None or kept[0] is not value:
        plain = getattr(value, '__func__', value) is value and \
            getattr(value, '__code__', None) is None
        kept = _STATIC[id(value)] = (value, plain, getattr(value, '__module__', '') or '')
    return kept


def _file_of(value: Any) -> str | None:
    """``defining_file(value)``, without its attribute look-ups for an exact function
    whose ``__dict__`` (an exact dict) holds no ``__func__``: the function type defines no
    ``__func__``, so the look-up finds none, and ``__code__`` is its own data descriptor,
    always a code object; and for a type compiled into the interpreter (``int``,
    ``ValueError``), whose attributes Python code cannot change, what its MRO binds to
    ``__func__`` and ``__code__`` and its ``__module__`` are read once."""
    kind = type(value)
    if kind is _FUNCTION:
        own = value.__dict__
        if type(own) is dict and '__func__' not in own:
            return value.__code__.co_filename
    elif kind is type and not value.__flags__ & _HEAPTYPE:
        _, plain, name = _static_type(value)
        if plain:  # defining_file's own steps for a class, its module read now
            file = getattr(sys.modules.get(name), '__file__', None)
            return file if isinstance(file, str) else None
    return defining_file(value)


_FUNCTION = types.FunctionType
_BY_NAME = operator.itemgetter(0)


def replaced_names(module: Any, test_file: str, cfg: Any) -> list[str]:
    """One line per name of the property's module (or module under ``src``, or builtin)
    that no longer means what the property's source says. Replacements whose code lives
    among the properties (``cfg.is_property``) are the human owner's own test doubles
    and pass.

    It runs before every property call (rule 45, OG714), so it is the same judgement as
    ``replaced_names_reference`` with less work per name: exact functions answer their
    file without ``defining_file``'s look-ups, the modules of ``sys.modules`` are judged
    in the order they come and their findings sorted, and the names of a namespace are
    sorted as keys. Any key that is not an exact ``str`` (where a sort could run code or
    fail), and anything that raises, takes the reference itself, so an error is the
    reference's. Every object is still read at every call.
    """
    try:
        found = _replaced_names_fast(module, test_file, cfg)
    except Exception:  # noqa: BLE001 -- the reference says what could not be checked
        _BUILTINS.clear()
        found = None
    return replaced_names_reference(module, test_file, cfg) if found is None else found


def _replaced_names_fast(module: Any, test_file: str, cfg: Any) -> list[str] | None:
    """``replaced_names``' own judgement; None where the reference must judge."""
    namespace = getattr(module, '__dict__', {})
    if type(namespace) is not dict or not _exact_keys(namespace):
        return None
    place = place_of(cfg)
    problems: list[str] = []
    imports, defined, bound, star = _bindings(test_file)
    for name in sorted(imports):
        if name not in namespace:
            continue
        known, expected = _resolve(module, imports[name])
        if known and namespace[name] is not expected and \
                not place.owned_value(namespace[name], defining_file(namespace[name])):
            where = place.rel(defining_file(namespace[name]))
            problems.append(f'{name!r} was rebound after the import that binds it (now '
                            f'{_describe(namespace[name])} from {where})')
    for name in sorted(defined):
        value = namespace.get(name)
        file = _file_of(value)
        # By its file alone: a name the property defines is its own code or a wrapper of
        # it, and that code is judged at the session's end (rule 45, OG737).
        if place.repo_path(file) is not None and not place.owned(file):
            problems.append(f'{name!r}, defined in the property file, was replaced by '
                            f'{_describe(value)} from {place.rel(file)}')
    if not star:
        owned = place.owned_value
        builtin_names = vars(builtins)
        names = dict(namespace)  # the reference's sorted items: a copy taken once
        for name in sorted(names):
            if name in bound or name.startswith(('__', '@')):
                continue
            value = names[name]
            if owned(value, _file_of(value)):
                continue
            if isinstance(value, (types.FunctionType, types.ModuleType, type)) or \
                    name in builtin_names:
                problems.append(f'{name!r} was added to the property\'s module from outside '
                                f'(a {_describe(value)} from {place.rel(defining_file(value))})')
    modules = list(sys.modules.items())  # where the reference lists them
    if not _exact_keys(dict(modules)):
        return None
    planted: list[tuple[str, list[str]]] = []
    is_src_module, outside_src = place.src_module, place.outside_src
    for modname, source in modules:
        if source is None or not is_src_module(modname, source):
            continue
        found = []
        for attribute, value in list(vars(source).items()):
            if attribute.startswith('__') or not isinstance(value, (types.FunctionType, type)):
                continue
            file = _file_of(value)
            if outside_src(file) and not place.owned_value(value, file):
                found.append(f'{modname}.{attribute} is {_describe(value)} from '
                             f'{place.rel(file)}, not code under src')
        if found:
            planted.append((modname, found))
    for _modname, found in sorted(planted, key=_BY_NAME):
        problems.extend(found)
    problems.extend(_builtin_problems(place))
    return problems


# The builtins as the last call judged them: (their values, the ids of those, their keys,
# the place, the modules the static types among them name as (name, module, __file__),
# (attribute, problem) of the static types, the attributes whose values are other
# functions or classes, judged again at every call).
_BUILTINS: list[Any] = []


def _replaced_builtins(namespace: dict[str, Any]) -> dict[str, Any]:
    """The builtins whose value is not the object they held when the plugin loaded, before
    any conftest or src ran (``source_code.BUILTINS_AT_START``), whatever its type: a
    callable object put in place of ``sorted`` through any alias: judging by type would let
    a callable instance or another builtin stand in.
    ``_`` is left out: the interpreter's display hook sets it (doctests); so is the
    builtins module's import metadata, which importlib sets when a meta path importer
    gives that module under another name (six's ``six.moves.builtins``), and which no name
    lookup in a module reaches (its globals hold their own)."""
    start = BUILTINS_AT_START
    if not start:
        return {}
    return {attribute: value for attribute, value in namespace.items()
            if attribute not in _NOT_LOOKED_UP and start.get(attribute, value) is not value}


_NOT_LOOKED_UP = frozenset({'_', '__spec__', '__loader__', '__package__'})


def _replacement_problem(place: _Place, attribute: str, value: Any) -> str | None:
    """A builtin replaced since the plugin loaded (rule 45, OG714): a finding unless the
    property folder's own code made it (the owner's test double: a function compiled from
    a property file, or an instance or class whose every method is one). Nothing else is
    asked of the object (its file, its module: what it says of itself can be chosen)."""
    if isinstance(value, types.MethodType):
        value = value.__func__
    kind = value if isinstance(value, type) else type(value)
    if isinstance(value, types.FunctionType):
        origin, file = value, value.__code__.co_filename
        owned = place.owned_value(value, file)
    elif kind.__flags__ & _HEAPTYPE:
        origin, file = kind, defining_file(kind)
        methods = [f for cls in kind.__mro__[:-1] if cls.__flags__ & _HEAPTYPE
                   for f in list(vars(cls).values()) if type(f) is _FUNCTION]
        owned = bool(methods) and all(place.owned_value(f, f.__code__.co_filename)
                                      for f in methods)
    else:
        origin, file, owned = value, defining_file(kind), False
    if owned:
        return None
    what = _describe(value) if origin is value and isinstance(value, (
        types.FunctionType, type)) else f'a {kind.__name__} object'
    return (f'builtins.{attribute} is {what} from '
            f'{place.rel(file) if file else "no Python file"}, not what it was when the run '
            'started')


def _builtin_problem(place: _Place, attribute: str, value: Any) -> str | None:
    file = _file_of(value)
    if file is not None and not place.owned_value(value, file) and (
            file.startswith('<') or place.repo_path(file) is not None):
        return f'builtins.{attribute} is {_describe(value)} from {place.rel(file)}'
    return None


def _builtin_problems(place: _Place) -> list[str]:
    """The reference's last loop: builtins replaced by code from the repository. A type
    compiled into the interpreter cannot change, so when the builtins hold the same
    objects as at the last call, and the modules their static types name are the same
    objects with the same ``__file__``, those types answer as before; every other
    function or class among them is judged again."""
    namespace = vars(builtins)
    if not _exact_keys(namespace):
        raise _Unsorted
    values = tuple(namespace.values())
    ids = tuple(map(id, values))
    # Judged afresh at every call (an object's class can be reassigned); the same values
    # make the same names, so the cache below, which leaves them out, still holds.
    replaced = _replaced_builtins(namespace)
    extra = [(attribute, problem) for attribute, problem in (
        (attribute, _replacement_problem(place, attribute, value))
        for attribute, value in replaced.items()) if problem is not None]
    if _BUILTINS:
        kept_values, kept_ids, kept_keys, kept_place, names, found, dynamic = _BUILTINS
        if kept_place is place and ids == kept_ids and tuple(namespace) == kept_keys and all(
                sys.modules.get(name) is module and
                getattr(module, '__file__', None) is file for name, module, file in names):
            pairs = list(found) + extra
            for attribute in dynamic:
                problem = _builtin_problem(place, attribute, namespace[attribute])
                if problem is not None:
                    pairs.append((attribute, problem))
            return [problem for _, problem in sorted(pairs, key=_BY_NAME)]
    builtin = dict(namespace)  # the reference's sorted items: a copy taken once
    pairs = list(extra)
    static: list[tuple[str, str]] = []
    dynamic = []
    modules: dict[str, None] = {}
    for attribute in sorted(builtin):
        value = builtin[attribute]
        if attribute in replaced or not isinstance(value, (types.FunctionType, type)):
            continue
        fixed = type(value) is type and not value.__flags__ & _HEAPTYPE and \
            _static_type(value)[1]
        if fixed:
            modules[_static_type(value)[2]] = None
        else:
            dynamic.append(attribute)
        problem = _builtin_problem(place, attribute, value)
        if problem is not None:
            pairs.append((attribute, problem))
            if fixed:
                static.append((attribute, problem))
    _BUILTINS.clear()
    if tuple(map(id, builtin.values())) == ids:  # nothing changed under the loop
        _BUILTINS.extend([values, ids, tuple(builtin), place,
                          [(name, sys.modules.get(name),
                            getattr(sys.modules.get(name), '__file__', None))
                           for name in modules], tuple(static), tuple(dynamic)])
    return [problem for _, problem in sorted(pairs, key=_BY_NAME)]


class _Unsorted(Exception):
    """A key that is not an exact ``str``: the reference judges."""


def replaced_names_reference(module: Any, test_file: str, cfg: Any) -> list[str]:
    """``replaced_names`` as plainly as it can be said, the reference its faster form is
    held to (tests/test_ci_property_namespace.py). One line per name of the property's module (or module under ``src``, or builtin)
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
                not place.owned_value(namespace[name], defining_file(namespace[name])):
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
            if place.owned_value(value, defining_file(value)):
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
            if place.outside_src(file) and not place.owned_value(value, file):
                problems.append(f'{modname}.{attribute} is {_describe(value)} from '
                                f'{place.rel(file)}, not code under src')
    replaced = _replaced_builtins(vars(builtins))
    for attribute, value in sorted(vars(builtins).items()):
        if attribute in replaced:
            problem = _replacement_problem(place, attribute, value)
            if problem is not None:
                problems.append(problem)
        elif isinstance(value, (types.FunctionType, type)):
            file = defining_file(value)
            if file is not None and not place.owned_value(value, file) and (
                    file.startswith('<') or place.repo_path(file) is not None):
                problems.append(f'builtins.{attribute} is {_describe(value)} from '
                                f'{place.rel(file)}')
    return problems


def _describe(value: Any) -> str:
    if isinstance(value, types.ModuleType):
        return f'module {value.__name__}'
    name = getattr(value, '__qualname__', None) or type(value).__name__
    return f'{"class" if isinstance(value, type) else "function"} {name}'
