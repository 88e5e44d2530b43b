"""The test roots' code compiled from source, in the gate's runs (rule 45, OG737).

The gate compares the sha256 of the bytes each module of the oracle was compiled from with
the bytes it expects (the committed blobs, or what it wrote into a reference tree). That
holds only if every such module is compiled from bytes the plugin reads, in this run:

* pytest's assertion rewriter first looks for its own cache of a rewritten module
  (``__pycache__/<name>.<tag>-pytest-<version>.pyc``, or under ``sys.pycache_prefix``) and
  runs it without compiling when its header matches the source (pytest 9: the first 8
  bytes of the source's hash; pytest 8: its size and mtime). Anyone who can write the
  run's tree can write that header. ``ignore_rewriter_cache`` makes its ``_read_pyc``
  find nothing for the test roots, so ``exec_module`` calls ``_rewrite_test`` (whose
  wrapper in ``run_recorder`` sends the digest);
* a module the rewriter does not take (a helper beside the property, a package's
  ``__init__``, every module under ``--assert=plain``) is loaded by Python's own
  ``SourceFileLoader``, which trusts ``__pycache__`` the same way. ``SourceFinder``, first
  on ``sys.meta_path``, gives every such module under the test roots a loader that always
  compiles the bytes it read and reports them; so does ``importlib.util.
  spec_from_file_location``, through which pytest's ``importlib`` import mode loads a
  package's ``__init__.py``.

Both are installed when the plugin loads, before any conftest is imported. The code each
compile produced is kept (``COMPILED``): it is what a function that claims one of these
files must come from (``from_source``), for the code check at the end and for the property
namespace check (OG714).

What is under a module name of the test roots is held to the same hook (``impostors``): a
module the code under test puts in ``sys.modules`` under a helper's name is what the
oracle's ``import`` binds, and Python never reads the helper's file.
Every module the hook loads (``SourceLoader.exec_module``, pytest's rewriter's
``exec_module``) is kept by identity under its name (``LOADED``); the builtins as they were
when the plugin loaded are kept too (``BUILTINS_AT_START``, for OG714's builtins check).
"""
from __future__ import annotations

import builtins
import hashlib
import importlib.machinery
import os
import sys
import types
import weakref
from collections.abc import Callable
from typing import Any

# real path -> the module code compiled in this run from the bytes whose digest was sent
COMPILED: dict[str, types.CodeType] = {}
# Called with (real path, the bytes read, the module code) for each module compiled here.
_REPORT: list[Callable[[str, bytes, types.CodeType], None]] = []
# (root, is_src) of the test roots: files under root, outside src and installed code.
_SCOPE: list[Any] = []
# module name -> (the real path it was loaded from, id -> a weak reference to each module
# the hook loaded under that name): what may stand in sys.modules there (``impostors``)
LOADED: dict[str, tuple[str, dict[int, Any]]] = {}
# sys.modules and the builtins when the plugin loaded, before any conftest or src ran
_MODULES_AT_START: dict[str, Any] = {}
BUILTINS_AT_START: dict[str, Any] = {}
_compile = compile  # taken before any conftest can rebind the builtin
# Imported when the plugin loads, before any conftest or src ran: this module's code looks
# its builtins up in a copy taken now, so one replaced later (``sorted``) does not answer for
# the checks below.
__builtins__ = vars(builtins).copy()  # type: ignore[assignment]
_SourceFileLoader = importlib.machinery.SourceFileLoader


def constant_text(const: object) -> str:
    """A constant's repr with every frozenset in sorted order: a frozenset's repr follows
    the hash order of the process that built it (the same measure as
    ``gate/integrity_probe.py``'s)."""
    if isinstance(const, frozenset):
        return 'frozenset({' + ', '.join(sorted(constant_text(e) for e in const)) + '})'
    if isinstance(const, tuple):
        return '(' + ''.join(constant_text(e) + ', ' for e in const) + ')'
    return repr(const)


def code_fingerprint(code: types.CodeType) -> str:
    """What a code object does, without where it was compiled (file name, line table)."""
    digest = hashlib.sha256()

    def feed(c: types.CodeType) -> None:
        digest.update(c.co_code)
        digest.update(repr((c.co_names, c.co_varnames, c.co_freevars, c.co_cellvars,
                            c.co_argcount, c.co_kwonlyargcount, c.co_flags)).encode())
        for const in c.co_consts:
            if isinstance(const, types.CodeType):
                feed(const)
            else:
                digest.update(constant_text(const).encode('utf-8', 'backslashreplace'))
                digest.update(b'\0')

    feed(code)
    return digest.hexdigest()


def codes_by_place(module_code: types.CodeType) -> dict[tuple[str, int], list[types.CodeType]]:
    """(name, first line) -> every code object compiled in a module."""
    found: dict[tuple[str, int], list[types.CodeType]] = {}
    todo = [module_code]
    while todo:
        code = todo.pop()
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                todo.append(const)
                found.setdefault((const.co_name, const.co_firstlineno), []).append(const)
    return found


# -- where: the test roots ---------------------------------------------------------------
def set_scope(root: str, is_src: Callable[[str], bool] | None) -> None:
    """The test roots are the files under ``root`` outside ``is_src`` and installed code."""
    _SCOPE[:] = [os.path.realpath(root), is_src, _installed()]


def _installed() -> tuple[str, ...]:
    return tuple({os.path.realpath(p) + os.sep for p in (sys.prefix, sys.base_prefix,
                                                         sys.exec_prefix)})


def in_scope(path: str) -> bool:
    """Whether ``path`` (a real path) is a Python file of the test roots."""
    if not path.endswith('.py'):
        return False
    if not _SCOPE:  # before the configuration is read: the working folder
        set_scope(os.getcwd(), None)
    root, is_src, installed = _SCOPE
    if not path.startswith(root + os.sep):
        return False
    if path.startswith(installed) and not root.startswith(installed):
        return False  # a virtual environment made inside the repository
    rel = path[len(root) + 1:].replace(os.sep, '/')
    if any(part in ('site-packages', 'dist-packages') for part in rel.split('/')):
        return False
    return is_src is None or not is_src(rel)


# -- how: every compile from the bytes read ------------------------------------------------
class SourceLoader(_SourceFileLoader):
    """``SourceFileLoader`` that never reads a bytecode cache: the module runs the code
    compiled from the bytes read now, and those bytes are reported first."""

    def exec_module(self, module: types.ModuleType) -> None:
        loaded(module, self.path)
        super().exec_module(module)

    def get_code(self, fullname: str) -> types.CodeType:
        path = self.get_filename(fullname)
        data = self.get_data(path)
        code = _compile(data, path, 'exec', dont_inherit=True)
        noted(path, data, code)
        return code


def noted(path: str, data: bytes, code: types.CodeType) -> None:
    """One module compiled here from ``data``: kept, and reported before it runs."""
    try:
        real = os.path.realpath(path)
    except (TypeError, ValueError, OSError):
        return
    COMPILED[real] = code
    for report in _REPORT:
        report(real, data, code)


class SourceFinder:
    """First on ``sys.meta_path``: asks the finders after it, as the import system would,
    and gives a module of the test roots that Python's own ``SourceFileLoader`` would load
    a ``SourceLoader`` instead. pytest's rewriter, which is inserted before the plugin
    loads, answers for test files and conftests and is left alone."""

    _oracle_guard = True

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        for finder in list(sys.meta_path):
            if finder is self:
                continue
            find = getattr(finder, 'find_spec', None)
            if find is None:
                return None  # a legacy finder: the import system's own fallback decides
            spec = find(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        return _in_scope_spec(spec)

    def invalidate_caches(self) -> None:
        pass


def _in_scope_spec(spec: Any) -> Any:
    """``spec`` with a ``SourceLoader`` where Python's own ``SourceFileLoader`` would load a
    module of the test roots."""
    loader = getattr(spec, 'loader', None)
    if type(loader) is _SourceFileLoader and isinstance(spec.origin, str) and \
            in_scope(os.path.realpath(spec.origin)):
        spec.loader = SourceLoader(loader.name, loader.path)
    return spec


def hook_file_locations() -> None:
    """``importlib.util.spec_from_file_location`` gives a module of the test roots a
    ``SourceLoader`` too. pytest's ``importlib`` import mode asks ``sys.meta_path`` for a
    package's ``__init__.py`` with the package's own folder as the path to search, which
    holds no module of that name, and then loads it through this function: without the
    hook it would run from a ``__pycache__`` file, unseen."""
    import importlib.util

    original = importlib.util.spec_from_file_location
    if getattr(original, '_oracle_guard', False):
        return

    def spec_from_file_location(*args: Any, **kwargs: Any) -> Any:
        return _in_scope_spec(original(*args, **kwargs))

    spec_from_file_location._oracle_guard = True  # type: ignore[attr-defined]
    spec_from_file_location.__doc__ = original.__doc__
    importlib.util.spec_from_file_location = spec_from_file_location


def install(report: Callable[[str, bytes, types.CodeType], None]) -> None:
    """Every part, once per process, before any conftest: ``report`` hears every compile."""
    _REPORT[:] = [report]
    if not _MODULES_AT_START:
        _MODULES_AT_START.update(sys.modules)
        BUILTINS_AT_START.update(vars(builtins))
    if not any(getattr(f, '_oracle_guard', False) for f in sys.meta_path):
        sys.meta_path.insert(0, SourceFinder())
    hook_file_locations()
    ignore_rewriter_cache()
    record_rewriter_loads()


# -- who: the modules under the test roots' names -----------------------------------------
def loaded(module: Any, path: str) -> None:
    """``module`` was loaded by the hook from ``path``: it may stand under its name."""
    name = getattr(module, '__name__', None)
    if type(name) is not str:
        return
    try:
        real = os.path.realpath(path)
        ref = weakref.ref(module)
    except (TypeError, ValueError, OSError):
        return
    kept = LOADED.get(name)
    if kept is None or kept[0] != real:
        kept = LOADED[name] = (real, {})
    refs = kept[1]
    for key in [key for key, old in refs.items() if old() is None]:
        del refs[key]  # a module gone: its id may be reused
    refs[id(module)] = ref


def module_file(namespace: Any) -> str | None:
    """The real path of the module of the test roots whose globals ``namespace`` is, one
    the hook loaded (``LOADED``, by identity), or None when it is no such module's: a copy,
    a dict made by hand, whatever ``__file__`` it holds: generated code may run in a copy
    of a test module's globals to pass for the test's own call."""
    name = namespace.get('__name__') if type(namespace) is dict else None
    kept = LOADED.get(name) if type(name) is str else None
    if kept is None:
        return None
    for ref in list(kept[1].values()):
        module = ref()
        if module is not None and getattr(module, '__dict__', None) is namespace:
            return kept[0]
    return None


def record_rewriter_loads() -> None:
    """pytest's rewriter's ``exec_module`` tells ``loaded`` of the test roots' modules it
    runs (test files, conftests): pytest 8.4 and 9 look it up on the class at each import."""
    try:
        from _pytest.assertion.rewrite import AssertionRewritingHook
    except ImportError:  # pragma: no cover -- the plugin runs inside pytest
        return
    original = AssertionRewritingHook.__dict__.get('exec_module')
    if original is None or getattr(original, '_oracle_guard', False):
        return

    def exec_module(self: Any, module: Any) -> Any:
        origin = getattr(getattr(module, '__spec__', None), 'origin', None)
        if type(origin) is str and in_scope(os.path.realpath(origin)):
            loaded(module, origin)
        return original(self, module)

    exec_module._oracle_guard = True  # type: ignore[attr-defined]
    exec_module.__name__ = exec_module.__qualname__ = original.__name__
    exec_module.__doc__ = original.__doc__
    AssertionRewritingHook.exec_module = exec_module  # type: ignore[method-assign]


# (the scope it was walked for, the real paths of the test roots' Python files)
_FILES: list[Any] = []
# (sys.path as last seen, module name -> the real path of the test roots' file it names)
_NAMES: list[Any] = []


def _test_root_files() -> list[str]:
    """Every Python file of the test roots (``in_scope``), walked once per scope."""
    if not _SCOPE:
        set_scope(os.getcwd(), None)
    if _FILES and _FILES[0] is _SCOPE[0]:
        return _FILES[1]
    root = _SCOPE[0]
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith('.') and d not in (
            '__pycache__', 'node_modules', 'site-packages', 'dist-packages') and
            not os.path.isfile(os.path.join(folder, d, 'pyvenv.cfg'))]
        for file in files:
            if file.endswith('.py'):
                real = os.path.realpath(os.path.join(folder, file))
                if in_scope(real):
                    found.append(real)
    _FILES[:] = [_SCOPE[0], found]
    return found


def root_module_names() -> dict[str, str]:
    """Module name -> the file of the test roots it names, by every entry of ``sys.path``
    (``tests/properties/_expected.py`` is ``_expected`` with its folder on the path, and
    ``tests.properties._expected`` with the root); kept while ``sys.path`` is the same."""
    path = tuple(p for p in sys.path if type(p) is str)
    if _NAMES and _NAMES[0] == path:
        return _NAMES[1]
    files = _test_root_files()
    names: dict[str, str] = {}
    for entry in path:
        try:
            folder = os.path.realpath(entry or os.getcwd()) + os.sep
        except (TypeError, ValueError, OSError):
            continue
        for real in files:
            if not real.startswith(folder):
                continue
            parts = real[len(folder):-3].split(os.sep)
            if parts[-1] == '__init__':
                parts.pop()
            if parts and all(part.isidentifier() for part in parts):
                names.setdefault('.'.join(parts), real)
    _NAMES[:] = [path, names]
    return names


def impostors() -> dict[str, str]:
    """Module name -> file of the test roots, for each name of a file of the test roots
    (or of a module the hook loaded) under which ``sys.modules`` holds a module the hook
    did not load: put there by other code, it is what an import of the name binds (rule
    45, OG737). What stood there when the plugin loaded, before any conftest or ``src``
    ran (a standard module a test helper happens to share a name with), is not one."""
    names = root_module_names()
    modules = sys.modules
    found: dict[str, str] = {}
    for name in (*names, *(n for n in LOADED if n not in names)):
        module = modules.get(name)
        if module is None or _MODULES_AT_START.get(name) is module:
            continue
        kept = LOADED.get(name)
        if kept is not None:
            ref = kept[1].get(id(module))
            if ref is not None and ref() is module:
                continue
        found[name] = names.get(name) or kept[0]  # type: ignore[index]
    return found


def ignore_rewriter_cache() -> None:
    """pytest's ``_read_pyc`` finds nothing for a file of the test roots: every module
    there that it rewrites is compiled from its source (pytest 8.4 and 9 look the function
    up in their module at each import, in ``AssertionRewritingHook.exec_module``). The
    installed plugins' modules it rewrites (Hypothesis's whole package) keep their cache:
    compiling them in every process would cost more than the tests of a small project."""
    try:
        from _pytest.assertion import rewrite
    except ImportError:  # pragma: no cover -- the plugin runs inside pytest
        return
    original = getattr(rewrite, '_read_pyc', None)
    if original is None or getattr(original, '_oracle_guard', False):
        return

    def read_pyc(*args: Any, **kwargs: Any) -> Any:
        source = args[0] if args else kwargs.get('source')
        try:
            real = os.path.realpath(str(source))
        except (TypeError, ValueError, OSError):
            return None
        if in_scope(real):
            return None
        return original(*args, **kwargs)

    read_pyc._oracle_guard = True  # type: ignore[attr-defined]
    read_pyc.__name__ = read_pyc.__qualname__ = original.__name__
    read_pyc.__doc__ = original.__doc__
    rewrite._read_pyc = read_pyc


# -- what: the code a file compiles to ---------------------------------------------------
# real path -> (the module codes it is compared with, ids of their code objects,
#               fingerprints by place); built once per file
_REFERENCE: dict[str, tuple[list[types.CodeType], set[int], dict[tuple[str, int], set[str]]]] = {}


def _reference(real: str) -> tuple[list[types.CodeType], set[int],
                                   dict[tuple[str, int], set[str]]]:
    kept = _REFERENCE.get(real)
    fresh = COMPILED.get(real)
    if kept is not None and (fresh is None or any(m is fresh for m in kept[0])):
        return kept
    modules = [fresh] if fresh is not None else _compiled_from_disk(real)
    ids: set[int] = set()
    places: dict[tuple[str, int], set[str]] = {}
    for module in modules:
        for place, codes in codes_by_place(module).items():
            for code in codes:
                ids.add(id(code))
                places.setdefault(place, set()).add(code_fingerprint(code))
    kept = _REFERENCE[real] = (modules, ids, places)
    return kept


def _compiled_from_disk(real: str) -> list[types.CodeType]:
    """A file no compile of this run saw: its bytes on disk, compiled plain and as pytest's
    rewriter does (either may be what a test module ran)."""
    try:
        with open(real, 'rb') as f:
            source = f.read()
    except OSError:
        return []
    found = []
    try:
        found.append(_compile(source, real, 'exec', dont_inherit=True))
    except (SyntaxError, ValueError):
        return []
    try:
        import ast

        from _pytest.assertion.rewrite import rewrite_asserts

        tree = ast.parse(source, filename=real)
        rewrite_asserts(tree, source, real, None)
        found.append(_compile(tree, real, 'exec', dont_inherit=True))
    except Exception:  # noqa: BLE001 -- pytest internals of another version: plain only
        pass
    return found


def impersonates(function: Any) -> Any:
    """The function ``function`` stands in for when it is Hypothesis's wrapper of it: a
    function of Hypothesis's (its module's name says so) whose code claims the wrapped
    function's file and first line (``reflection.impersonate``: ``@given``, ``proxies`` for
    stateful rules and strategy definitions). None for any other function."""
    inner = getattr(getattr(function, 'hypothesis', None), 'inner_test', None)
    wrapped = inner if inner is not None else getattr(function, '__dict__', {}).get(
        '__wrapped__')
    code = getattr(function, '__code__', None)
    target = getattr(wrapped, '__code__', None)
    if not isinstance(code, types.CodeType) or not isinstance(target, types.CodeType):
        return None
    module = getattr(function, '__globals__', {}).get('__name__')
    if type(module) is not str or not module.startswith('hypothesis') or \
            code.co_filename != target.co_filename or \
            code.co_firstlineno != target.co_firstlineno:
        return None
    return wrapped


def from_source(code: types.CodeType, real: str) -> bool:
    """Whether ``code`` is code that the file ``real`` compiles to: one of the code objects
    of this run's compile of it (or of its bytes on disk), or the same code at the same
    place. A function added to a module by a forged cache, or built at run time under the
    file's name, is not."""
    _modules, ids, places = _reference(real)
    if id(code) in ids:
        return True
    wanted = places.get((code.co_name, code.co_firstlineno))
    return bool(wanted) and code_fingerprint(code) in wanted
