"""Production code that reaches into the test run (rule 43).

The gate runs the pull request's ``src/`` inside the test process, so ``src/`` can detect
that it is under test and behave (``if "pytest" in sys.modules``), or change the run itself
(``atexit.register(os._exit, 0)``, a wrapped ``Function.runtest``, ``hypothesis.assume(False)``
on the inputs that show the bug, a replaced builtin). Honest production code has no reason to
name the test machinery, so naming it is what this reader finds, in these forms:

* an import of ``pytest``, ``_pytest``, ``pluggy``, ``unittest``, ``oracle_guard`` or
  ``hypothesis`` (Hypothesis's internals, ``assume`` and ``reject`` even where the project
  exempts Hypothesis itself);
* a string that is such a module's name or a ``PYTEST_*``/``ORACLE_GUARD_*``/``HYPOTHESIS_*``
  variable, folded where it is computed from constants (``"_py" "test"``, ``"_py" + "test"``,
  ``"".join([...])``): that covers ``importlib.import_module``, ``__import__``,
  ``sys.modules[...]`` and ``os.environ`` in every spelling that names the module or variable;
* ``getattr(sys, "modules")``-style computed access to ``modules``, ``settrace``,
  ``setprofile``, ``monitoring`` of ``sys``; ``sys.settrace``/``sys.setprofile`` (also
  ``threading``'s) and ``sys.monitoring``;
* ``atexit.register`` of something that exits the process (``os._exit``, ``sys.exit``,
  ``os.kill``, a function whose body calls one);
* an assignment to an attribute or item of ``builtins``/``__builtins__`` (also through
  ``setattr``/``delattr``, ``builtins.__dict__``, ``vars(builtins)`` or a builtin
  function's ``__self__``, which is the builtins module);
* a change to how the test run imports: an item of ``sys.modules`` assigned or deleted, a
  mutating call on it (``update``, ``setdefault``, ``pop``, ...), ``sys.meta_path`` or
  ``sys.path_hooks`` assigned or changed: a module of ``src`` that puts another module under
  a test helper's name, or a finder ahead of the plugin's, decides what a property imports.

Each form is also found through a name a binding gives the object it names (``m = sys``,
``mods = sys.modules``, ``B = len.__self__``, ``reg = atexit.register``, a walrus, a tuple of
names and values, ``for m in [sys.modules]``, ``with nullcontext(len.__self__) as b``, a
default argument), in any scope and order (``assignment_aliases``), through ``vars(sys)[...]``
and ``sys.__dict__[...]``, and in ``operator.setitem`` and ``functools.partial(setattr, ...)``;
an argument to anything else, a return value, an attribute or a container is not followed
(docs/rules.md, rule 43).

Sites are found on both sides of the change; only those the change does not remove from
another place of production code are reported (``added_sites``, ``reading/moved_uses``).

Given the file's text, only the lines that can hold a site are walked (``reach_sites``):
every site is written with one of the prefilter's words, the word ``import``, a quote (a
string), a name an import binds to one of the modules a site resolves through or a name an
assignment binds to a followed object, on a line of its own node; a node none of whose
lines holds one is skipped with its subtree.
Without the text every node is visited: the reference the fast path is tested against.
"""
from __future__ import annotations

from bisect import bisect_left

from oracle_guard.oracle.patterns import LazyPattern
from oracle_guard.reading import syntax as ast  # `ast` without its import cost
from oracle_guard.reading.scanner import dotted_name
from oracle_guard.reading.static_values import BUILTIN_FUNCTIONS
from oracle_guard.reading.static_values import bindings_of
from oracle_guard.reading.static_values import folded
from oracle_guard.reading.static_values import meanings

TYPE_CHECKING = False  # typing and collections cost a commit milliseconds at import
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from collections.abc import Iterable
    from collections.abc import Sequence

TEST_MODULES = ('pytest', '_pytest', 'pluggy', 'unittest', 'oracle_guard', 'hypothesis')
ENV_PREFIXES = ('PYTEST_', 'ORACLE_GUARD_', 'HYPOTHESIS_')
# The module whose exemption in src-test-imports also exempts its variables: a pytest plugin
# may read PYTEST_XDIST_WORKER, and oracle-guard itself its ORACLE_GUARD_* settings.
ENV_MODULES = dict(zip(ENV_PREFIXES, ('pytest', 'oracle_guard', 'hypothesis')))
# Parts of Hypothesis that change what a property tests: exempting "hypothesis" (a library
# that ships strategies) does not exempt these; only naming them in the list does.
HYPOTHESIS_SENSITIVE = ('hypothesis.assume', 'hypothesis.reject', 'hypothesis.internal',
                        'hypothesis.core', 'hypothesis.control', 'hypothesis.engine',
                        'hypothesis._settings', 'hypothesis.statistics')
SYS_HOOKS = ('modules', 'settrace', 'setprofile', 'monitoring', 'meta_path', 'path_hooks')
# What decides the module an import binds: changing one of these from src is rule 43's.
IMPORT_STATE = ('sys.modules', 'sys.meta_path', 'sys.path_hooks')
# A project that lists pytest in src-test-imports is a pytest plugin (oracle-guard itself
# plants its canaries as modules and loads the test roots through a finder of its own): it
# may change how the run imports, as it may change the run through pytest.
IMPORT_STATE_OWNER = 'pytest'
MUTATORS = frozenset(('__setitem__', '__delitem__', 'update', 'setdefault', 'pop', 'popitem',
                      'clear', 'insert', 'append', 'extend', 'remove', '__iadd__'))
# operator's item setters: ``operator.setitem(sys.modules, name, m)`` is ``sys.modules[name] = m``
ITEM_SETTERS = frozenset(('operator.setitem', 'operator.delitem', '_operator.setitem',
                          '_operator.delitem'))
PARTIALS = frozenset(('functools.partial', 'functools.partialmethod', '_functools.partial'))
TRACE_NAMES = ('settrace', 'setprofile', 'settrace_all_threads', 'setprofile_all_threads')
EXIT_NAMES = frozenset(('_exit', 'exit', 'quit', 'kill', 'abort', 'killpg'))
# Compiled when a string begins with a test-run module's name: a commit of a module
# without one does not import ``re`` (0.6x a bare interpreter's start-up, with ``enum``).
MODULE_NAME = LazyPattern(r'(?:%s)(?:\.[A-Za-z_]\w*)*\Z' % '|'.join(TEST_MODULES))
# A file name is not a module: a tool that reads "pytest.ini" or "unittest.cfg" names no
# test machinery (no module of pytest, Hypothesis or unittest has one of these names).
FILE_SUFFIX = LazyPattern(r'\.(?:ini|cfg|toml|txt|json|ya?ml|xml|log|lock|md|rst)\Z')

# Bytes without which none of the forms above can be written (a string computed from parts
# reaches the run only through one of the functions named here): a changed src file that
# holds none of them is not parsed, which is most commits.
WORDS = ('pytest|pluggy|unittest|oracle_guard|hypothesis|PYTEST_|ORACLE_GUARD_|HYPOTHESIS_|'
         'atexit|settrace|setprofile|monitoring|builtins|modules|getattr|setattr|delattr|'
         'import_module|importlib|__import__|environ|getenv|assume|reject|meta_path|'
         'path_hooks|__self__')
PREFILTER_WORDS = tuple(word.encode() for word in WORDS.split('|'))
# The modules a site's names resolve through (``resolve``): a local name an import binds
# to one of them (``from hypothesis import internal as hi``, ``import builtins as b``,
# ``from atexit import register as r``) marks the lines it is written on, as a word does.
RESOLVED_THROUGH = frozenset((*TEST_MODULES, 'sys', 'threading', 'builtins', 'atexit',
                              'importlib'))


class Site(tuple):
    """(line, col, what, module): ``what`` is also the key a site is matched by across the
    two sides; ``module`` the test-run module it names, for src-test-imports. A tuple, as
    a NamedTuple was, without importing ``typing``."""

    __slots__ = ()

    def __new__(cls, line: int, col: int, what: str, module: str | None) -> Site:
        return tuple.__new__(cls, (line, col, what, module))

    line = property(lambda self: self[0])
    col = property(lambda self: self[1])
    what = property(lambda self: self[2])
    module = property(lambda self: self[3])


def may_reach(raw: bytes) -> bool:
    """False when the bytes cannot hold any site: the file need not be parsed. Searched as
    Python reads identifiers (NFKC): ``import \uff50ytest`` imports pytest."""
    from oracle_guard.reading.silence_prefilter import as_python_reads

    text = as_python_reads(raw)
    return any(word in text for word in PREFILTER_WORDS)


def exempt(module: str | None, allowed: Iterable[str]) -> bool:
    if module is None:
        return False
    sensitive = module.startswith(HYPOTHESIS_SENSITIVE)
    for entry in allowed:
        if module == entry or module.startswith(entry + '.'):
            if not sensitive or entry.startswith(HYPOTHESIS_SENSITIVE):
                return True
    return False


def _test_module(name: str) -> str | None:
    top = name.split('.', 1)[0]
    return name if top in TEST_MODULES else None


# What a name bound by an assignment is followed to (``m = sys``, ``mods = sys.modules``,
# ``reg = atexit.register``, ``B = len.__self__``): the objects the checks below look at.
FOLLOWED = frozenset((
    'sys', 'sys.__dict__', *IMPORT_STATE, 'sys.settrace', 'sys.setprofile', 'sys.monitoring', 'threading',
    *(f'threading.{name}' for name in TRACE_NAMES), 'builtins', 'builtins.__dict__',
    '__builtins__', 'atexit', 'atexit.register', 'importlib', 'importlib.import_module',
    'hypothesis'))


def _followed(meaning: str) -> bool:
    if meaning in FOLLOWED:
        return True
    owner, _, method = meaning.rpartition('.')
    if owner in IMPORT_STATE and method in MUTATORS:
        return True  # pop = sys.modules.pop
    return meaning.startswith(HYPOTHESIS_SENSITIVE) and meaning.count('.') <= 3


def _import_aliases(nodes: Iterable[ast.AST]) -> dict[str, str]:
    """Local name -> module (or module.attr) of every import of a module sites resolve
    through (RESOLVED_THROUGH), wherever it is in the file."""
    names: dict[str, str] = {}
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split('.', 1)[0] in RESOLVED_THROUGH:
                    top = alias.name.split('.', 1)[0]
                    names[alias.asname or top] = alias.name if alias.asname else top
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module and \
                node.module.split('.', 1)[0] in RESOLVED_THROUGH:
            for alias in node.names:
                names[alias.asname or alias.name] = f'{node.module}.{alias.name}'
    return names


def assignment_aliases(nodes: Iterable[ast.AST], imports: dict[str, str],
                       followed: Callable[[str], bool] = _followed) -> dict[str, frozenset[str]]:
    """Name -> every followed object a binder among ``nodes`` (an assignment, an annotated
    assignment, a walrus, a ``for`` or ``with`` target, a default argument) binds it to, in
    any scope of the file and in any order (``b = a`` above ``a = sys`` too): a name rebound
    to something else keeps what it was bound to, so a use anywhere is judged as a use of
    each (rule 43); ``followed`` says which objects are followed (rule 43's by default)."""
    pairs = [pair for node in nodes for pair in bindings_of(node)]
    bound: dict[str, frozenset[str]] = {}
    todo = list(range(len(pairs)))
    readers: dict[str, list[int]] | None = None  # name -> the pairs whose value names it
    while todo:  # a pair is read again only when a name its value names gains a meaning
        name, value = pairs[todo.pop()]
        if isinstance(value, ast.Constant):
            continue  # most assignments
        found = {m for m in meanings(value, imports, bound) if followed(m)}
        if not found or found <= bound.get(name, frozenset()):
            continue
        bound[name] = bound.get(name, frozenset()) | found
        if readers is None:  # the first binding: most modules have none
            readers = {}
            for at, (_, read) in enumerate(pairs):
                for sub in ast.walk(read):
                    if isinstance(sub, ast.Name):
                        readers.setdefault(sub.id, []).append(at)
        todo += readers.get(name, ())
    return bound


class _Reader(ast.NodeVisitor):
    def __init__(self) -> None:
        self.sites: list[Site] = []
        # local name -> the module (or module.attr) it stands for
        self.aliases: dict[str, str] = {}
        # name -> what assignments bind it to (``assignment_aliases``), set before the visit
        self.bound: dict[str, frozenset[str]] = {}
        self.bindings: list[ast.AST] = []  # the assignments and walruses visited
        self.imported: list[ast.AST] = []
        self.functions: dict[str, ast.AST] = {}
        self.tree: ast.AST = ast.AST()  # the module, for ``_values_of``

    def add(self, node: ast.AST, what: str, module: str | None = None) -> None:
        self.sites.append(Site(getattr(node, 'lineno', 1), getattr(node, 'col_offset', 0) + 1,
                               what, module))

    def resolve_all(self, node: ast.AST) -> list[str]:
        """``os._exit`` -> ['os._exit'] through import aliases (``import os as o``), then
        what each assignment alias of the head stands for (``m = sys``: ``m.modules`` ->
        ['m.modules', 'sys.modules'])."""
        name = dotted_name(node)
        if name is None:  # vars(sys)["modules"], __import__("sys").meta_path
            return sorted(meanings(node, self.aliases, self.bound)) if isinstance(
                node, (ast.Subscript, ast.Attribute, ast.Call)) else []
        head, _, rest = name.partition('.')
        real = self.aliases.get(head, head)
        found = [f'{real}.{rest}' if rest else real]
        if head in self.bound:
            found += (f'{m}.{rest}' if rest else m for m in sorted(self.bound[head]))
        return found

    # imports
    def visit_Import(self, node: ast.Import) -> None:
        self.imported.append(node)
        for alias in node.names:
            local = alias.asname or alias.name.split('.', 1)[0]
            self.aliases[local] = alias.name if alias.asname else local
            module = _test_module(alias.name)
            if module:
                self.add(node, f'imports {module}', module)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.imported.append(node)
        if node.level or not node.module:
            return
        for alias in node.names:
            full = f'{node.module}.{alias.name}'
            self.aliases[alias.asname or alias.name] = full
            module = _test_module(full)
            if module:
                self.add(node, f'imports {module}', module)

    # strings: module names and test-run variables, however computed from constants
    def _string(self, node: ast.AST) -> bool:
        value = folded(node)
        if value is None:
            return False
        if value.startswith(TEST_MODULES) and MODULE_NAME.match(value) and \
                not FILE_SUFFIX.search(value):  # case-sensitive
            self.add(node, f'names the module {value!r}', value)
        elif value.upper().startswith(ENV_PREFIXES):  # variables are not, on Windows
            module = next(m for p, m in ENV_MODULES.items() if value.upper().startswith(p))
            self.add(node, f'names the test-run variable {value!r}', module)
        return True

    def visit_Constant(self, node: ast.Constant) -> None:
        self._string(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if not self._string(node):
            self.generic_visit(node)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        if not self._string(node):
            self.generic_visit(node)

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # a docstring or a bare string says nothing to the run
        self.generic_visit(node)

    # attributes and names: tracing hooks, Hypothesis's assume/reject and internals
    def visit_Attribute(self, node: ast.Attribute) -> None:
        targets = self.resolve_all(node)
        target = 'sys.monitoring' if 'sys.monitoring' in targets else \
            targets[0] if targets else None
        if node.attr in TRACE_NAMES or target == 'sys.monitoring':
            self.add(node, f'uses {target or node.attr} (a tracer sees the test run)')
            self._walruses(node)
            return
        for target in targets:
            if target.startswith(HYPOTHESIS_SENSITIVE):
                self.add(node, f'names {target}', target)
                self._walruses(node)
                return  # the outermost name of the chain is the one reported
        self.generic_visit(node)

    def _walruses(self, node: ast.AST) -> None:
        """The walruses of a chain not visited further (``(m := sys).settrace``): bindings
        all the same."""
        self.bindings += (sub for sub in ast.walk(node) if isinstance(sub, ast.NamedExpr))

    def visit_Name(self, node: ast.Name) -> None:
        real = self.aliases.get(node.id)
        bound = self.bound.get(node.id)
        if bound is None and real is None:
            return
        if bound is not None and isinstance(node.ctx, ast.Store):
            return  # the name an assignment binds: the value is where a site is
        reals = (real, *sorted(bound)) if bound else (real,)
        for real in reals:
            if real in ('sys.settrace', 'sys.setprofile', 'threading.settrace',
                        'threading.setprofile', 'sys.monitoring'):
                self.add(node, f'uses {real} (a tracer sees the test run)')
                return
        for real in reals:
            if real and isinstance(node.ctx, ast.Load) and \
                    real.startswith(HYPOTHESIS_SENSITIVE):
                self.add(node, f'names {real}', real)
                return

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.functions.setdefault(node.name, node)
        self.bindings.append(node)  # its default arguments
        self._decorated_exit(node)
        self.generic_visit(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self.functions.setdefault(node.name, node)
        self.bindings.append(node)
        self.generic_visit(node)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.bindings.append(node)
        self.generic_visit(node)

    def _binder(self, node: ast.AST) -> None:  # a for, with or comprehension
        self.bindings.append(node)
        self.generic_visit(node)

    visit_For = visit_AsyncFor = visit_With = visit_AsyncWith = visit_comprehension = _binder

    def _decorated_exit(self, node: ast.FunctionDef) -> None:
        for decorator in node.decorator_list:
            if 'atexit.register' in self.resolve_all(decorator) and self._exits(node):
                self.add(decorator, 'registers an atexit handler that exits the process')

    def _exits(self, node: ast.AST) -> bool:
        for sub in ast.walk(node):
            name = dotted_name(sub) if isinstance(sub, (ast.Name, ast.Attribute)) else None
            if name and name.rsplit('.', 1)[-1] in EXIT_NAMES:
                return True
            if isinstance(sub, ast.Raise) and sub.exc is not None and \
                    (dotted_name(sub.exc) or dotted_name(getattr(sub.exc, 'func', sub.exc)) or '') \
                    .endswith('SystemExit'):
                return True
        return False

    # calls: computed access, atexit, setattr on builtins
    def visit_Call(self, node: ast.Call) -> None:
        if self._string(node):
            return  # "".join of constants
        funcs = self.resolve_all(node.func)
        self._called(node, funcs, node.args)
        if any(f in PARTIALS for f in funcs) and node.args:
            # functools.partial(setattr, len.__self__): the call it makes, made later
            self._called(node, self.resolve_all(node.args[0]), node.args[1:])
        if 'atexit.register' in funcs and node.args:
            registered = node.args[0]
            target = self.functions.get(registered.id) if isinstance(registered, ast.Name) \
                else None
            if any(self._exits(arg) for arg in node.args) or (target and self._exits(target)) \
                    or (target is None and isinstance(registered, ast.Name) and
                        any(self._exits(value) for value in self._values_of(registered.id))):
                self.add(node, 'registers an atexit handler that exits the process')
        self.generic_visit(node)

    def _called(self, node: ast.Call, funcs: list[str], args: list[ast.AST]) -> None:
        """The sites of a call of one of ``funcs`` with ``args`` (``setattr(builtins, ...)``,
        ``sys.modules.update(...)``, ``operator.setitem(sys.modules, ...)``)."""
        func = funcs[0] if funcs else None
        if func in ('getattr', 'setattr', 'delattr', 'hasattr') and args:
            attr = folded(args[1]) if len(args) >= 2 else None
            if attr in SYS_HOOKS and 'sys' in self.resolve_all(args[0]):
                self.add(node, f'{func}(sys, {attr!r})')
            if func in ('setattr', 'delattr') and self._is_builtins(args[0]):
                self.add(node, f'{func} on builtins')
        mutator = next((f for f in funcs if f.rpartition('.')[0] in IMPORT_STATE and
                        f.rpartition('.')[2] in MUTATORS), None)
        if mutator is None and args and any(f in ITEM_SETTERS for f in funcs):
            mutator = next((f'{n}.__setitem__' for n in self.resolve_all(args[0])
                            if n in IMPORT_STATE), None)
            if mutator is None and self._is_builtins(args[0]):
                name = folded(args[1]) if len(args) >= 2 else None
                self.add(node, f'assigns builtins.{name or "[...]"}')
        if mutator:
            self.add(node, f'changes {mutator.rpartition(".")[0]} (how the test run imports)',
                     IMPORT_STATE_OWNER)

    def _values_of(self, name: str) -> list[ast.AST]:
        """What assignments anywhere in the module bind ``name`` to, through names bound
        to names (``bye = os._exit`` for ``atexit.register(bye, 0)``): read over the whole
        tree, in either walk, and only for a handler registered by a name."""
        pairs = [pair for node in ast.walk(self.tree) for pair in bindings_of(node)]
        found: list[ast.AST] = []
        names, seen = [name], {name}
        while names:
            wanted = names.pop()
            for bound, value in pairs:
                if bound == wanted:
                    found.append(value)
                    if isinstance(value, ast.Name) and value.id not in seen:
                        seen.add(value.id)
                        names.append(value.id)
        return found

    def _is_builtins(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Name) and node.id == '__builtins__':
            return True
        if isinstance(node, ast.Call) and node.args and any(
                f in ('__import__', 'importlib.import_module')
                for f in self.resolve_all(node.func)):
            return folded(node.args[0]) == 'builtins'  # __import__("builtins").sum = ...
        if isinstance(node, ast.Subscript) and 'sys.modules' in self.resolve_all(node.value):
            return folded(node.slice) == 'builtins'  # sys.modules["builtins"].sum = ...
        if any(name in ('builtins', 'builtins.__dict__', '__builtins__')
               for name in self.resolve_all(node)):
            return True
        if isinstance(node, ast.Attribute) and node.attr == '__dict__':
            return self._is_builtins(node.value)
        if isinstance(node, ast.Attribute) and node.attr == '__self__' and \
                isinstance(node.value, ast.Name) and node.value.id not in self.aliases and \
                node.value.id in BUILTIN_FUNCTIONS:
            return True  # len.__self__ is the builtins module
        if isinstance(node, ast.Call) and dotted_name(node.func) == 'vars' and node.args:
            return self._is_builtins(node.args[0])
        return False

    def _assigned(self, targets: Sequence[ast.AST], augmented: bool = False) -> None:
        for target in targets:
            if isinstance(target, (ast.Tuple, ast.List)):
                self._assigned(target.elts)
                continue
            # A bare name assigned or deleted rebinds the name, never the object it stood
            # for; augmented (``mp += [F]``, ``mp = sys.meta_path`` above) it changes it.
            names = self.resolve_all(target) if augmented or \
                not isinstance(target, ast.Name) else []
            if isinstance(target, ast.Subscript):
                names += self.resolve_all(target.value)
            changed = next((name for name in names if name in IMPORT_STATE), None)
            if changed:
                self.add(target, f'changes {changed} (how the test run imports)',
                         IMPORT_STATE_OWNER)
            elif (isinstance(target, ast.Attribute) and target.attr == '__builtins__') or (
                    isinstance(target, ast.Subscript) and
                    folded(target.slice) == '__builtins__'):
                self.add(target, "assigns a module's __builtins__")
            elif isinstance(target, (ast.Attribute, ast.Subscript)) and \
                    self._is_builtins(target.value):
                name = target.attr if isinstance(target, ast.Attribute) else \
                    folded(target.slice) or '[...]'
                self.add(target, f'assigns builtins.{name}')

    def visit_Assign(self, node: ast.Assign) -> None:
        self.bindings.append(node)
        self._assigned(node.targets)
        self.generic_visit(node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.bindings.append(node)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._assigned([node.target], augmented=True)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.bindings.append(node)
        self._assigned([node.target])
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        self._assigned(node.targets)
        self.generic_visit(node)


class _LineReader(_Reader):
    """The reader, visiting only nodes with a line in ``hits`` (sorted line numbers; a
    definition's decorators count as its lines), as ``source_lines.walk_lines`` walks. Imports
    are on lines with the word ``import``, so the aliases are collected as in a full visit."""

    def __init__(self, hits: list[int]) -> None:
        super().__init__()
        self.hits = hits

    def _on_hit_line(self, node: ast.AST) -> bool:
        first = getattr(node, 'lineno', None)
        if first is None:
            return True  # arguments, comprehensions, match cases: their children decide
        for decorator in getattr(node, 'decorator_list', ()):
            first = min(first, decorator.lineno)
        at = bisect_left(self.hits, first)
        return at < len(self.hits) and \
            self.hits[at] <= (getattr(node, 'end_lineno', None) or first)

    def generic_visit(self, node: ast.AST) -> None:
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST) and self._on_hit_line(item):
                        self.visit(item)
            elif isinstance(value, ast.AST) and self._on_hit_line(value):
                self.visit(value)


def _as_python_reads(text: str) -> str:
    """The text with identifiers as Python reads them (NFKC) and every line end a LF, so
    a match's line is the parser's line (CRLF, CR and LF end lines; nothing else does)."""
    if not text.isascii():
        import unicodedata

        text = unicodedata.normalize('NFKC', text)
    if '\r' in text:
        text = text.replace('\r\n', '\n').replace('\r', '\n')
    return text


_WORD_CHARS = frozenset('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_')


class _Lines:
    """Line numbers of positions in a text whose every line ends with a LF."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.split('\n')
        starts, at = [], 0
        for line in self.lines:
            starts.append(at)
            at += len(line) + 1
        self.starts = starts

    def of(self, word: str, whole: bool = False) -> set[int]:
        """The lines ``word`` is written on; ``whole``: not inside a longer ASCII name (a
        neighbour outside ASCII counts as a boundary: a line too many, never one too few)."""
        text, found = self.text, set()
        at = text.find(word)
        while at >= 0:
            end = at + len(word)
            if not whole or ((not at or text[at - 1] not in _WORD_CHARS) and
                             (end >= len(text) or text[end] not in _WORD_CHARS)):
                found.add(bisect_left(self.starts, at + 1))  # 1-based: the line holding at
            at = text.find(word, at + 1)
        return found


def _hit_lines(tree: ast.AST, lines: _Lines) -> tuple[set[int], dict[str, str]]:
    """The lines a site can be on (see the module's docstring) of the NFKC text, but the
    names assignments bind (``reach_sites`` adds those), and the import aliases of the
    modules sites resolve through."""
    from oracle_guard.reading.source_lines import walk_lines

    imports = _import_aliases(walk_lines(tree, sorted(lines.of('import'))))
    hits = {n for n, line in enumerate(lines.lines, 1) if '"' in line or "'" in line}
    for word in (*WORDS.split('|'), 'import'):
        hits |= lines.of(word)
    for name in imports:
        hits |= lines.of(name, whole=True)
    return hits, imports


def reach_sites(tree: ast.AST, text: str | None = None) -> list[Site]:
    """Every site of the module; with its ``text`` (as parsed), walking only the lines
    that can hold one.

    A name an assignment binds to a followed object (``assignment_aliases``, over every
    assignment of the module) is known only once the assignments are read, and a use may
    come before its binding (a function above ``m = sys.modules``): a module whose visit
    met such an assignment is visited again with the names bound. The line walk meets one
    when the module has one (the first binding of a chain spells a word or an import's
    name in its value); it then reads every assignment of the module, and each name bound
    marks its own lines, as an import's name does."""
    lines = hits = None
    if text is not None:
        text = _as_python_reads(text)
        lines = _Lines(text)
        found, imports = _hit_lines(tree, lines)
        hits = sorted(found)
    bound: dict[str, frozenset[str]] = {}
    while True:
        reader = _Reader() if hits is None else _LineReader(hits)
        reader.bound = bound
        reader.tree = tree
        # Functions first: atexit.register(handler) may come before handler's def. Only an
        # atexit site asks for them, and none is written without the word.
        if text is None or 'atexit' in text:
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    reader.functions.setdefault(node.name, node)
        reader.visit(tree)
        if bound:
            return reader.sites
        if lines is None:
            imports = _import_aliases(reader.imported)
        if not assignment_aliases(reader.bindings, imports):
            return reader.sites
        bound = assignment_aliases(ast.walk(tree), imports)
        if lines is not None:
            found.update(*(lines.of(name, whole=True) for name in bound))
            hits = sorted(found)


def counted_sites(new: ast.AST, allowed: Iterable[str] = (), new_text: str | None = None
                  ) -> list[Site]:
    """The sites of a module ``allowed`` (``src-test-imports``) does not exempt; with its
    text, walking only the lines that can hold one. RecursionError for a tree nested
    deeper than the reader can follow (the caller fails closed)."""
    allowed = tuple(allowed)
    return [site for site in reach_sites(new, new_text) if not exempt(site.module, allowed)]


def base_sites(base: ast.AST | None | tuple | Callable[[], object]) -> list[Site]:
    """Every site of a base side: a tree, ``(tree, text)``, None, or a function that
    gives one of these. A tree too deep to read vouches for nothing."""
    if callable(base):
        base = base()
    text = None
    if isinstance(base, tuple):
        base, text = base
    if base is None:
        return []
    try:
        return reach_sites(base, text)
    except RecursionError:
        return []


def identity(site: Site) -> str:
    """What a site is matched by across the sides of a change (``reading/moved_uses``):
    its ``what``, what the code does with the name it resolves to; never its place."""
    return site[2]


def added_sites(sides: Sequence[tuple[list[Site], object]], others: object = ()
                ) -> list[list[Site]]:
    """Per file, the sites of ``(counted sites now, its base side as base_sites takes
    it)`` that nothing the change removes vouches for, matched by ``what`` first within
    the file, then against ``others`` (the base sides of the change's other production
    files, or a function giving them), read only when a site is left
    (``reading/moved_uses``)."""
    from oracle_guard.reading.moved_uses import unvouched

    def removed() -> list[Site]:
        return [site for base in (others() if callable(others) else others)
                for site in base_sites(base)]

    return unvouched([(now, (lambda base=base: base_sites(base)))
                      for now, base in sides], removed, identity)


def new_sites(base: ast.AST | None | Callable[[], ast.AST | None], new: ast.AST,
              allowed: Iterable[str] = (), new_text: str | None = None) -> list[Site]:
    """Sites of ``new`` the base did not have (matched by what they are, not where), minus
    those naming a module in ``allowed`` (``src-test-imports``). RecursionError for a tree
    nested deeper than the reader can follow (the caller fails closed).

    ``base`` may be a function that parses it: it is called only when ``new`` holds a site
    ``allowed`` does not exempt (without one there is nothing the base could vouch for, so a
    one-line edit of a large module parses and walks one side, not two); it may give
    ``(tree, text)``. With a side's text, only its lines that can hold a site are walked."""
    return added_sites([(counted_sites(new, allowed, new_text), base)])[0]
