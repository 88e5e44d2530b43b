"""Interpreter capabilities a module of production code uses (rule 54).

Code the test process runs can tell that it is tested and act on it, and no run can tell
such code from a fix: ``faulthandler.is_enabled()`` is true in every pytest process, a frame
walk finds a caller under ``tests/``, ``object.__subclasses__()`` reaches pytest's classes.
What this reader finds is not a trick but the capability each trick needs, in seven kinds:

* ``frames``: ``sys._getframe``, ``inspect.currentframe``/``stack``/``getouterframes``/
  ``trace``, ``traceback.walk_stack``/``extract_stack``, ``.f_back`` of anything;
* ``interpreter-state``: ``sys.flags``, ``sys.getrecursionlimit``, ``sys.gettrace``/
  ``getprofile``, ``sys.orig_argv``, ``faulthandler``, a string naming ``/proc/self``,
  the ``__main__`` module, ``warnings.filters``, ``sys.unraisablehook``,
  ``threading.excepthook``;
* ``object-graph``: ``gc``, ``sys.modules`` (but ``sys.modules[__name__]``, the module
  itself), an item written into the ``vars()`` or ``__dict__`` of an imported module or
  class, and ``__subclasses__`` of a root that reaches every class: a builtin class by name
  (``object.__subclasses__()``, ``type.__subclasses__(c)``) or an imported one, also when
  such a root is passed to a function of the module that walks subclasses (``walk(object)``);
* ``code-and-imports``: ``exec``, ``eval``, ``compile``, a write of ``__code__``,
  ``__globals__``, ``__closure__``, ``__defaults__`` or ``__kwdefaults__``,
  ``types.CodeType``/``FunctionType``, ``sys.meta_path``/``path_hooks``, and
  ``importlib.import_module``/``__import__`` of a name that is not a constant (but one
  that begins with a dot: the package's own submodule, loaded lazily);
* ``process-control``: ``atexit``, ``os._exit``, ``signal``, ``os.dup2``, ``os.close``
  of a descriptor it did not open (a number or a ``fileno()``);
* ``foreign-attribute``: an attribute assigned, set or deleted on a module or class imported
  from the standard library or another distribution (``json.JSONEncoder.iterencode = f``,
  ``setattr(socket.socket, ...)``); the project's own modules (relative imports, the
  top-level names ``own`` gives) are not foreign;
* ``builtins``: an attribute or item of ``builtins``/``__builtins__`` written.

Each is found spelled directly or through a computed name (``getattr(sys, "_get" +
"frame")``, ``importlib.import_module("g" "c")``) and through names bound to the module or
object (``import sys as s``, ``f = sys._getframe``): the alias and folding machinery of
rule 43's reader (``reading/test_run_reach``). A use is ``(line, kind, expression)``; two
sides of a change are compared by kind and expression (``identity``, ``new_uses``;
``reading/moved_uses`` across the files of a change), so an edit elsewhere in a module
that already used ``sys.modules`` adds nothing.
"""
from __future__ import annotations

import ast
from collections.abc import Iterable
from typing import NamedTuple

from oracle_guard.reading.moved_uses import unvouched
from oracle_guard.reading.static_values import folded
from oracle_guard.reading.static_values import meanings
from oracle_guard.reading.test_run_reach import assignment_aliases

KINDS = ('frames', 'interpreter-state', 'object-graph', 'code-and-imports', 'process-control',
         'foreign-attribute', 'builtins')

# A qualified name (after imports and aliases) -> its kind; a name ending in '.' covers
# every attribute of that module.
NAMES = {
    'sys._getframe': 'frames', 'sys._current_frames': 'frames',
    'inspect.currentframe': 'frames', 'inspect.stack': 'frames',
    'inspect.getouterframes': 'frames', 'inspect.trace': 'frames',
    'traceback.walk_stack': 'frames', 'traceback.extract_stack': 'frames',
    # the standard library's own walks, which hand back the caller's place or stack
    'traceback.format_stack': 'frames', 'traceback.print_stack': 'frames',
    'traceback.StackSummary': 'frames', 'logging.currentframe': 'frames',
    'sys.flags': 'interpreter-state', 'sys.getrecursionlimit': 'interpreter-state',
    'sys.gettrace': 'interpreter-state', 'sys.getprofile': 'interpreter-state',
    'sys.orig_argv': 'interpreter-state', 'faulthandler.': 'interpreter-state',
    # the process's own command line (the test command's, under a test run)
    'sys.argv': 'interpreter-state', 'psutil.': 'interpreter-state',
    '__main__.': 'interpreter-state',
    # the hooks and filters a test runner sets for the run (pytest's warnings capture, its
    # unraisable and thread exception hooks)
    'warnings.filters': 'interpreter-state', 'sys.unraisablehook': 'interpreter-state',
    'threading.excepthook': 'interpreter-state',
    'gc.': 'object-graph', 'sys.modules': 'object-graph',
    'types.CodeType': 'code-and-imports', 'types.FunctionType': 'code-and-imports',
    'sys.meta_path': 'code-and-imports', 'sys.path_hooks': 'code-and-imports',
    # the import path (read, it says who started the process; written, what imports find)
    'sys.path': 'code-and-imports', 'site.addsitedir': 'code-and-imports',
    # code loaded from a path of any name, and data that names what it calls
    'importlib.machinery.SourceFileLoader': 'code-and-imports',
    'importlib.machinery.SourcelessFileLoader': 'code-and-imports',
    'importlib.machinery.ExtensionFileLoader': 'code-and-imports',
    'importlib.util.spec_from_file_location': 'code-and-imports',
    'importlib.util.spec_from_loader': 'code-and-imports',
    'runpy.': 'code-and-imports', 'zipimport.': 'code-and-imports', 'imp.': 'code-and-imports',
    'pickle.load': 'code-and-imports', 'pickle.loads': 'code-and-imports',
    'pickle.Unpickler': 'code-and-imports', '_pickle.': 'code-and-imports',
    'marshal.load': 'code-and-imports', 'marshal.loads': 'code-and-imports',
    'atexit.': 'process-control', 'os._exit': 'process-control', 'os.dup2': 'process-control',
    # signal's functions, not its constants (``proc.send_signal(signal.SIGTERM)``)
    **{f'signal.{name}': 'process-control' for name in (
        'signal', 'alarm', 'setitimer', 'pthread_kill', 'raise_signal', 'set_wakeup_fd',
        'siginterrupt', 'pthread_sigmask', 'sigwait', 'pause')},
}
# Builtin functions by their bare name (unless the module binds the name itself).
BUILTIN_CALLS = {'exec': 'code-and-imports', 'eval': 'code-and-imports',
                 'compile': 'code-and-imports'}
# Attributes that are a capability on whatever object they are read from or written to.
FRAME_ATTRIBUTES = frozenset(('f_back', 'findCaller'))
LOADER_ATTRIBUTES = frozenset(('load_module', 'exec_module'))
ENVIRON = frozenset(('os.environ', 'os.environb'))
# A key looked up by a constant name: what every program reads; the rest enumerates.
ENVIRON_LOOKUPS = frozenset(('get', 'setdefault', 'pop', '__contains__', '__getitem__'))
GRAPH_ATTRIBUTES = frozenset(('__subclasses__',))
CODE_ATTRIBUTES = frozenset(('__code__', '__globals__', '__closure__', '__defaults__',
                             '__kwdefaults__'))
SETTERS = frozenset(('setattr', 'delattr'))
BUILTIN_CLASSES = frozenset(('object', 'type', 'BaseException', 'Exception', 'int', 'str',
                             'dict', 'list', 'tuple', 'set', 'frozenset', 'float', 'bytes'))
IMPORTERS = frozenset(('importlib.import_module', '__import__'))
# The modules whose objects assignment aliases follow (``f = sys._getframe``).
MODULES = frozenset(('sys', 'inspect', 'traceback', 'faulthandler', 'gc', 'types', 'atexit',
                     'signal', 'os', 'importlib', 'builtins', 'logging', 'warnings', 'runpy',
                     'zipimport', 'imp', 'pickle', '_pickle', 'marshal', 'site', 'psutil',
                     '__main__', 'threading'))
# The modules whose attribute a name computed at run time may be any capability of.
NAMED_BY_DATA = frozenset(('sys', 'inspect', 'traceback', 'faulthandler', 'gc', 'types',
                           'atexit', 'signal', 'os', 'importlib', 'builtins'))


class Use(NamedTuple):
    line: int
    kind: str
    expression: str


def _followed(meaning: str) -> bool:
    return meaning.split('.', 1)[0] in MODULES


def _kind_of(name: str) -> str | None:
    if name in NAMES:
        return NAMES[name]
    head = name.split('.', 1)[0]
    return NAMES.get(head + '.') if '.' in name or head + '.' in NAMES else None


def _imports(tree: ast.AST) -> tuple[dict[str, str], set[str]]:
    """(local name -> the module or module.attr it binds, the local names bound by a
    relative import), over every import of the module."""
    names: dict[str, str] = {}
    relative: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split('.', 1)[0]
                names[alias.asname or top] = alias.name if alias.asname else top
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                local = alias.asname or alias.name
                if node.level or not node.module:
                    relative.add(local)
                else:
                    names[local] = f'{node.module}.{alias.name}'
    return names, relative


def _defined(tree: ast.AST) -> set[str]:
    """Names the module binds itself (a ``def exec``, ``compile = ...``): not builtins."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
    return found


def _text(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # noqa: BLE001 -- an odd node still has a place
        return type(node).__name__


class _Reader(ast.NodeVisitor):
    def __init__(self, tree: ast.AST, own: frozenset[str]) -> None:
        self.imports, self.relative = _imports(tree)
        self.bound = assignment_aliases(ast.walk(tree), self.imports, _followed)
        self.defined = _defined(tree) - set(self.imports)
        self.parents = {child: node for node in ast.walk(tree)
                        for child in ast.iter_child_nodes(node)}
        self.own = own
        self.uses: list[Use] = []
        # Local functions that walk subclasses of what they are given.
        self.walkers = {node.name for node in ast.walk(tree)
                        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and
                        any(isinstance(sub, ast.Attribute) and sub.attr in GRAPH_ATTRIBUTES
                            for sub in ast.walk(node))}

    def add(self, node: ast.AST, kind: str, what: ast.AST | str | None = None) -> None:
        text = what if isinstance(what, str) else _text(what or node)
        self.uses.append(Use(getattr(node, 'lineno', 1), kind, ' '.join(text.split())))

    def means(self, node: ast.AST) -> set[str]:
        found = meanings(node, self.imports, self.bound)
        if isinstance(node, ast.Name) and node.id == '__builtins__':
            found.add('builtins')
        return found

    def kind(self, node: ast.AST) -> str | None:
        for name in sorted(self.means(node)):
            kind = _kind_of(name)
            if kind:
                return kind
        return None

    def _foreign(self, node: ast.AST) -> bool:
        """An imported module or class of the standard library or another distribution."""
        head = node
        while isinstance(head, ast.Attribute):
            head = head.value
        if not isinstance(head, ast.Name) or head.id in self.relative:
            return False
        real = self.imports.get(head.id)
        return real is not None and real.split('.', 1)[0] not in self.own

    def _root(self, node: ast.AST) -> bool:
        """A class a walk of subclasses reaches everything from: a builtin class by its
        name (``object``, ``BaseException``) or one imported from elsewhere. A walk from a
        class the code was given (cattrs's ``include_subclasses``) is the project's own
        business; a local function that walks is judged where a root is passed to it."""
        if isinstance(node, ast.Name) and node.id not in self.defined and \
                node.id not in self.imports and node.id not in self.relative:
            return node.id in BUILTIN_CLASSES
        return self._foreign(node)

    def _type_of(self, node: ast.AST) -> bool:
        return isinstance(node, ast.Name) and node.id == 'type' and 'type' not in self.defined

    def _builtins(self, node: ast.AST) -> bool:
        names = self.means(node)
        return any(n in ('builtins', 'builtins.__dict__') for n in names)

    def _environ_whole(self, node: ast.AST) -> bool:
        """``os.environ`` used otherwise than by a constant key (``os.environ["HOME"]``,
        ``.get("HOME")``, ``"HOME" in os.environ``) or handed on whole as a child
        process's ``env=``: iterated, copied, or looked up by a computed name, it tells
        what started the process."""
        if not self.means(node) & ENVIRON:
            return False
        parent = self.parents.get(node)
        if isinstance(parent, ast.Subscript) and parent.value is node:
            return folded(parent.slice) is None
        if isinstance(parent, ast.Attribute) and parent.attr in ENVIRON_LOOKUPS:
            call = self.parents.get(parent)
            return not (isinstance(call, ast.Call) and call.func is parent and call.args
                        and folded(call.args[0]) is not None)
        if isinstance(parent, ast.Compare) and node in parent.comparators and \
                all(isinstance(op, (ast.In, ast.NotIn)) for op in parent.ops):
            return folded(parent.left) is None
        up: ast.AST | None = parent
        while up is not None and not isinstance(up, (ast.stmt, ast.keyword)):
            up = self.parents.get(up)
        return not (isinstance(up, ast.keyword) and up.arg == 'env')

    # reads
    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load) and self._environ_whole(node):
            self.add(node, 'interpreter-state')
            return
        if isinstance(node.ctx, ast.Load):
            kind = self.kind(node) if node.id in self.bound or node.id in self.imports \
                else None
            if kind:
                self.add(node, kind)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in FRAME_ATTRIBUTES:
            self.add(node, 'frames')
            return
        if node.attr in LOADER_ATTRIBUTES:
            self.add(node, 'code-and-imports')
            return
        if self._environ_whole(node):
            self.add(node, 'interpreter-state')
            return
        if node.attr in GRAPH_ATTRIBUTES:
            if self._root(node.value) or self._type_of(node.value):
                self.add(node, 'object-graph')
                return
        if node.attr in CODE_ATTRIBUTES and isinstance(node.ctx, (ast.Store, ast.Del)):
            self.add(node, 'code-and-imports')
            return
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            if self._builtins(node.value):
                self.add(node, 'builtins')
                return
            if self._foreign(node.value):
                self.add(node, 'foreign-attribute')
                return
        kind = self.kind(node)
        if kind:
            self.add(node, kind)
            return  # the outermost name of a chain is the one reported
        self.generic_visit(node)

    def _computed(self, node: ast.AST) -> bool:
        """``getattr(sys, "_get" + "frame")``, ``vars(sys)["flags"]``,
        ``importlib.import_module("gc")``: a name computed from constants."""
        kind = self.kind(node)
        if kind:
            self.add(node, kind)
        return kind is not None

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if isinstance(node.ctx, ast.Load) and self._computed(node):
            return
        if isinstance(node.ctx, ast.Load) and isinstance(node.slice, ast.Name) and \
                node.slice.id == '__name__' and 'sys.modules' in self.means(node.value):
            return  # the module itself
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            target = node.value
            if self._builtins(target):
                self.add(node, 'builtins')
                return
            dict_of = target.value if isinstance(target, ast.Attribute) and \
                target.attr == '__dict__' else target.args[0] if isinstance(
                    target, ast.Call) and isinstance(target.func, ast.Name) and \
                target.func.id == 'vars' and len(target.args) == 1 else None
            if dict_of is not None and self._foreign(dict_of):
                self.add(node, 'object-graph')
                return
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and _proc(node.value):
            self.add(node, 'interpreter-state')

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if _proc(folded(node) or ''):
            self.add(node, 'interpreter-state')  # "/proc/" + "self"
            return
        self.generic_visit(node)

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # a docstring runs nothing
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if self._computed(node):
            return
        func = node.func
        name = func.id if isinstance(func, ast.Name) else None
        if name in BUILTIN_CALLS and name not in self.defined and name not in self.imports:
            self.add(node, BUILTIN_CALLS[name], func)
            self.generic_visit(node)
            return
        if name in SETTERS and name not in self.defined and node.args:
            attr = folded(node.args[1]) if len(node.args) >= 2 else None
            target = node.args[0]
            if attr in CODE_ATTRIBUTES:
                self.add(node, 'code-and-imports')
            elif self._builtins(target):
                self.add(node, 'builtins')
            elif self._foreign(target):
                self.add(node, 'foreign-attribute')
        funcs = self.means(func) | ({'__import__'} if name == '__import__' and
                                    name not in self.defined else set())
        if funcs & IMPORTERS and node.args and folded(node.args[0]) is None:
            if not _relative(node.args[0]):
                self.add(node, 'code-and-imports')
            self.generic_visit(node)
            return
        if name == 'getattr' and name not in self.defined and len(node.args) >= 2 and \
                folded(node.args[1]) is None and self.means(node.args[0]) & NAMED_BY_DATA:
            self.add(node, 'code-and-imports')  # getattr(sys, name): any of its capabilities
        if funcs & {'warnings.catch_warnings'} and any(
                k.arg == 'record' and not (isinstance(k.value, ast.Constant) and
                                           not k.value.value) for k in node.keywords):
            self.add(node, 'frames', func)  # each warning recorded with its caller's place
        if funcs & {'os.getenv', 'os.getenvb'} and node.args and folded(node.args[0]) is None:
            self.add(node, 'interpreter-state')  # os.getenv(name): a computed name
        if name in self.walkers and any(self._root(a) for a in node.args):
            self.add(node, 'object-graph')  # walk(object): a root given to a local walk
        if 'os.close' in funcs and node.args and _not_opened(node.args[0]):
            self.add(node, 'process-control')
        self.generic_visit(node)


def _proc(text: str) -> bool:
    """A path into ``/proc``: the process's own state, by ``self`` or by its number."""
    return '/proc/' in text or text.rstrip('/') == '/proc'


def _relative(node: ast.AST) -> bool:
    """A computed name that begins with a dot (``"." + name``, ``f".{name}"``): one of
    the package's own submodules, as lazy loading in a module's ``__getattr__`` imports."""
    first = node.left if isinstance(node, ast.BinOp) else \
        node.values[0] if isinstance(node, ast.JoinedStr) and node.values else None
    text = folded(first) if first is not None else None
    return bool(text) and text.startswith('.')


def _not_opened(node: ast.AST) -> bool:
    """A descriptor written as a number or taken with ``fileno()``: one the code did not
    open itself (closing stdout's descriptor under a test run)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return True
    return any(isinstance(sub, ast.Attribute) and sub.attr == 'fileno'
               for sub in ast.walk(node))


def capability_uses(tree: ast.AST, own: Iterable[str] = ()) -> list[Use]:
    """Every use of an interpreter capability in a parsed module, in source order.
    ``own``: the project's top-level import names (their modules are not foreign)."""
    reader = _Reader(tree, frozenset(own))
    reader.visit(tree)
    return sorted(reader.uses)


def identity(use: Use) -> tuple[str, str]:
    """What a use is matched by across the sides of a change (``reading/moved_uses``):
    its kind and its expression's text, whitespace collapsed; never its place."""
    return use.kind, use.expression


def new_uses(base: ast.AST | None, new: ast.AST, own: Iterable[str] = (),
             base_text: str | None = None) -> list[Use]:
    """The uses of ``new`` the base did not have, matched by kind and expression (each
    base use vouches for one use of the new side). A base that does not compile (``base``
    None, its ``base_text`` given: the change fixes a syntax error) vouches for the uses
    whose expression its text holds."""
    if base is None and base_text is not None:
        return [use for use in capability_uses(new, own) if use.expression not in base_text]
    before = capability_uses(base, own) if base is not None else []
    return unvouched([(capability_uses(new, own), before)], (), identity)[0]


def parse_module(raw: bytes) -> ast.AST | None:
    """The module's tree, or None for a file Python cannot compile (it runs nothing)."""
    try:
        return ast.parse(raw)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
