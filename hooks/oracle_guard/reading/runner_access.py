"""Test code that reaches into the test runner (rules 35 and 35b): a test module that
rebinds, patches or reaches pytest's own objects (``tampering``), also through a name
computed from strings (``computed_access``: ``getattr(pytest, 'sk' + 'ip')``,
``sys.modules['_py' + 'test']``)."""
from __future__ import annotations

from oracle_guard.reading import syntax as ast  # `ast` without its import cost
from oracle_guard.reading.import_aliases import all_statements
from oracle_guard.reading.import_aliases import ImportAliases
from oracle_guard.reading.import_aliases import is_runner_object
from oracle_guard.reading.import_aliases import RUNNER_ROOTS
from oracle_guard.reading.source_lines import walk_lines
from oracle_guard.reading.source_lines import word_lines

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterable


def _is_pytest_object(name: str | None) -> bool:
    return name is not None and (name in ('pytest', '_pytest') or
                                 name.startswith(('pytest.', '_pytest.')))


_is_runner_object = is_runner_object


def _literal(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


_NAME_TABLES = ('globals()', 'locals()', 'vars()', 'sys.modules')


def _namespace_of(node: ast.AST, aliases: ImportAliases) -> str | None:
    """What a mapping of names is: ``globals()``, ``vars()``, ``sys.modules`` (a computed key
    may name pytest), or ``vars(pytest.mark)`` / ``pytest.__dict__`` (any key reaches into
    pytest); None for any other expression."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
            node.func.id in ('globals', 'locals', 'vars') and node.func.id not in aliases.names:
        if not node.args:
            return f'{node.func.id}()'
        owner = aliases.resolve(node.args[0]) if node.func.id == 'vars' else None
        return f'vars({owner})' if _is_runner_object(owner) else None
    if isinstance(node, ast.Attribute) and node.attr == '__dict__':
        owner = aliases.resolve(node.value)
        return f'{owner}.__dict__' if _is_runner_object(owner) else None
    if aliases.resolve(node) == 'sys.modules':
        return 'sys.modules'
    return None


def _leading_text(node: ast.AST) -> str | None:
    """The literal text a computed string starts with: ``f"numpy.{x}"``, ``"numpy." + x``,
    ``"numpy.%s" % x``, ``"numpy.{}".format(x)``; None when it starts computed."""
    if _literal(node):
        return node.value  # type: ignore[attr-defined]
    if isinstance(node, ast.JoinedStr) and node.values:
        return _leading_text(node.values[0])
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _leading_text(node.left)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        lead = _leading_text(node.left)
        return None if lead is None else lead.split('%', 1)[0]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr == 'format':
        lead = _leading_text(node.func.value)
        return None if lead is None else lead.split('{', 1)[0]
    return None


def _in_pieces(node: ast.AST | None, text: str | None) -> bool:
    """A string literal whose value its own source does not spell: ``"_py" "test"`` or
    ``"\\x73kip"`` is one constant to the parser, and no reader or byte search finds the
    name (rule 35b). Unknown without the source text."""
    if text is None or not _literal(node):
        return False
    segment = ast.get_source_segment(text, node)
    return segment is not None and node.value not in segment  # type: ignore[attr-defined]


def _names_runner(value: str) -> bool:
    return _is_runner_object(value.split('.', 1)[0]) or _is_runner_object(value)


def _cannot_name_runner(node: ast.AST | None) -> bool:
    """Whether a computed name provably names no pytest, _pytest or unittest module or
    global: the module's own ``__name__``, or a literal start that none of them has."""
    if isinstance(node, ast.Name) and node.id == '__name__':
        return True
    lead = _leading_text(node) if node is not None else None
    if not lead:
        return False
    top = lead.split('.', 1)[0]
    return not any(root.startswith(lead) or top == root for root in RUNNER_ROOTS)


class _ComputedNames:
    """Whether the name an expression computes may be one of pytest's (rule 35b).

    A literal is read as it is (spelled in pieces, ``"_py" "test"``, it is computed: no
    reviewer or byte search finds it). A variable is judged by what the file assigns to it;
    one the file never assigns (a parameter, a loop over data) is not knowable here and is
    left to the verified run, whose audit sees the skip or the missing test it causes.
    Any other expression may name pytest unless its literal start rules that out."""

    def __init__(self, tree: ast.Module, text: str | None, every_node: bool = True) -> None:
        self.text = text
        self.assigned: dict[str, list[ast.AST]] = {}
        # Assignments are statements (``all_statements`` finds them at any depth); only a
        # walrus hides in an expression, and it is spelled ``:=``.
        nodes: Iterable[ast.AST] = ast.walk(tree) if every_node or text is None or \
            ':=' in text else all_statements(tree)
        for node in nodes:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.assigned.setdefault(target.id, []).append(node.value)
            elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None \
                    and isinstance(node.target, ast.Name):
                self.assigned.setdefault(node.target.id, []).append(node.value)

    def may_name_runner(self, node: ast.AST | None, depth: int = 0) -> bool:
        if node is None or depth > 5:
            return False
        if _literal(node):
            value = node.value  # type: ignore[attr-defined]
            if not _is_runner_object(value.split('.', 1)[0]) and not _is_runner_object(value):
                return False
            # a literal spelled out is read by the other rules; a variable hides it too
            return depth > 0 or (self.text is not None and value not in self.text)
        if isinstance(node, ast.Name):
            return any(self.may_name_runner(v, depth + 1)
                       for v in self.assigned.get(node.id, ()))
        if isinstance(node, ast.Attribute):
            return False  # obj.__module__ and the like: not knowable here
        value = _fold(node)
        if isinstance(value, str):
            return _is_runner_object(value.split('.', 1)[0]) or _is_runner_object(value)
        head = _top_name_parts(node)
        if head is not None:
            # ``app.name + ".migrations"``, ``module + "." + file[:-3]``: the text after
            # the first literal dot is a submodule's; the top-level name is the head's.
            if not head:
                return False  # ".x": a relative name
            if len(head) == 1:
                return self.may_name_runner(head[0], depth + 1)
            if not any(self.carries_text(part) for part in head):
                return False
        elif not self.carries_text(node):
            return False  # built from data only (a helper's return value): not knowable
        return not _cannot_name_runner(node)  # a name assembled from pieces

    def carries_text(self, node: ast.AST | None, depth: int = 0) -> bool:
        """Whether text this file spells may end up in the string ``node`` computes: not a
        key it looks up (``backend["ENGINE"]``), a separator it splits at, a dot or an
        empty string (``root.replace(os.sep, ".")``), nor a helper's return value called
        with data only (``apps.get_app_config(label).name``)."""
        if node is None:
            return False
        if depth > 16:
            return True  # too deep (or a name bound to itself): it may
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, int) and not isinstance(value, bool):
                return True  # chr(95), bytes([95, ...]): a code point is text too
            return isinstance(value, (str, bytes)) and \
                bool(value.strip('.' if isinstance(value, str) else b'.'))
        if isinstance(node, ast.Name):
            return any(self.carries_text(v, depth + 1) for v in self.assigned.get(node.id, ()))
        if isinstance(node, ast.Attribute):
            return False  # obj.name: data, as ``may_name_runner`` has it
        if isinstance(node, ast.Subscript):
            return self.carries_text(node.value, depth + 1)
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in _PIECE_METHODS:
                return self.carries_text(func.value, depth + 1)
            parts: list[ast.AST] = [*node.args, *(k.value for k in node.keywords)]
            if isinstance(func, ast.Attribute):
                parts.append(func.value)
            return any(self.carries_text(p, depth + 1) for p in parts)
        if isinstance(node, ast.BinOp):
            return self.carries_text(node.left, depth + 1) or \
                self.carries_text(node.right, depth + 1)
        if isinstance(node, ast.FormattedValue):
            return self.carries_text(node.value, depth + 1)
        if isinstance(node, (ast.JoinedStr, ast.BoolOp)):
            return any(self.carries_text(v, depth + 1) for v in node.values)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return any(self.carries_text(e, depth + 1) for e in node.elts)
        if isinstance(node, ast.IfExp):
            return self.carries_text(node.body, depth + 1) or \
                self.carries_text(node.orelse, depth + 1)
        return any(isinstance(n, ast.Constant) and isinstance(n.value, (str, bytes, int))
                   for n in ast.walk(node))


# str methods whose result is made of the owner's characters alone: their arguments are
# separators or characters taken away, never text added.
_PIECE_METHODS = frozenset(('split', 'rsplit', 'splitlines', 'strip', 'lstrip', 'rstrip',
                            'removeprefix', 'removesuffix', 'lower', 'upper', 'casefold',
                            'title', 'capitalize', 'swapcase', 'encode', 'decode'))


def _top_name_parts(node: ast.AST) -> list[ast.AST] | None:
    """The pieces of a concatenated name (``a + "." + b``, ``f"{a}.{b}"``) before the
    first literal piece holding a dot, when that literal starts at the dot: what the
    top-level module name is made of. None when no such piece ends the top-level name."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        parts = _added(node)
    elif isinstance(node, ast.JoinedStr):
        parts = [v.value if isinstance(v, ast.FormattedValue) else v for v in node.values]
    else:
        return None
    for at, part in enumerate(parts):
        if isinstance(part, ast.Constant) and isinstance(part.value, str) and '.' in part.value:
            return parts[:at] if part.value.startswith('.') else None
    return None


def _added(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return [*_added(node.left), *_added(node.right)]
    return [node]


_STR_METHODS = frozenset(('join', 'replace', 'lower', 'upper', 'strip', 'lstrip',
                          'rstrip', 'capitalize', 'casefold', 'title', 'swapcase', 'decode'))


def _fold(node: ast.AST, depth: int = 0) -> object:
    """The value of a constant string expression built from literals only (``"py" + "test"``,
    ``"".join(["py", "test"])``, ``chr(95) + "pytest"``, ``f"{'py'}test"``), else None."""
    if depth > 20:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes, int)):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_fold(e, depth + 1) for e in node.elts]
        return None if any(i is None for i in items) else items
    if isinstance(node, ast.JoinedStr):
        parts = [_fold(v, depth + 1) for v in node.values]
        return ''.join(parts) if all(isinstance(p, str) for p in parts) else None  # type: ignore[arg-type]
    if isinstance(node, ast.FormattedValue):
        value = _fold(node.value, depth + 1)
        return value if isinstance(value, str) and node.format_spec is None else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod, ast.Mult)):
        left, right = _fold(node.left, depth + 1), _fold(node.right, depth + 1)
        if left is None or right is None:
            return None
        try:
            if isinstance(node.op, ast.Add):
                return left + right  # type: ignore[operator]
            if isinstance(node.op, ast.Mod):
                # only plain %s: a width ("%999999999s") would build a huge string
                import re

                if not isinstance(left, str) or re.search(r'%(?!s|%)', left):
                    return None
                return left % (tuple(right) if isinstance(right, list) else right)
            text, count = (left, right) if isinstance(right, int) else (right, left)
            if not isinstance(count, int) or not isinstance(text, (str, bytes)) or \
                    len(text) * max(count, 0) > 1000:
                return None
            return text * count
        except (TypeError, ValueError, OverflowError, MemoryError):
            return None
    if isinstance(node, ast.Call) and not node.keywords:
        args = [_fold(a, depth + 1) for a in node.args]
        if any(a is None for a in args):
            return None
        try:
            if isinstance(node.func, ast.Name) and node.func.id == 'chr' and len(args) == 1:
                return chr(args[0])  # type: ignore[arg-type]
            if isinstance(node.func, ast.Name) and node.func.id in ('bytes', 'bytearray') and \
                    len(args) == 1 and isinstance(args[0], list) and len(args[0]) <= 1000:
                return bytes(args[0])  # type: ignore[arg-type]  # bytes([95, 112, ...])
            if isinstance(node.func, ast.Attribute) and node.func.attr in _STR_METHODS:
                owner = _fold(node.func.value, depth + 1)
                if isinstance(owner, (str, bytes)):
                    result = getattr(owner, node.func.attr)(*args)
                    return result if isinstance(result, (str, bytes)) else None
        except (TypeError, ValueError, OverflowError, IndexError, LookupError):
            return None
    return None


# Rule 35b's words: every site spells one within its own lines (the function it calls or
# the mapping it reads), or a local name bound to one of the objects they name.
_COMPUTE_WORDS = ('getattr', '__import__', 'import_module', 'globals', 'locals', 'vars',
                  '__dict__', 'modules')


_COMPUTE_TARGETS = ('importlib.import_module', 'importlib.__import__', 'builtins.__import__',
                    'sys.modules')


def compute_words(aliases: ImportAliases) -> list[str]:
    return [*_COMPUTE_WORDS, *(name for name, target in aliases.names.items()
                               if target in _COMPUTE_TARGETS)]


def computed_access(tree: ast.Module, text: str | None = None,
                    aliases: ImportAliases | None = None, *, every_node: bool = False,
                    ) -> list[tuple[int, int, str]]:
    """(line, col, what) of every name of pytest's or unittest's marks, outcomes or
    internals that the source computes instead of spelling (rule 35b): ``getattr`` with a
    non-literal name on a pytest/unittest object, ``import_module``/``__import__`` of a
    computed string, a computed key into ``globals()``/``vars()``/``sys.modules``, and any
    lookup in the namespace of a pytest/unittest object. What is computed cannot be read,
    so a silence or a patch spelled that way would pass unseen. With the source ``text``, a
    pytest/unittest module name spelled in pieces (``"_py" "test"``) counts as computed:
    nothing a reviewer or a byte search looks for is in the file.

    With the ``text``, only the lines that spell a word of a site are walked
    (``walk_lines``), and the file's assignments are collected when a site needs them;
    ``every_node`` walks every node (the reference the fast path is tested against).
    ``aliases``: the file's ``ImportAliases``, when the caller built them already."""
    if aliases is None:
        aliases = ImportAliases(tree)
    every_node = every_node or text is None
    computed: list[_ComputedNames] = []
    found = []

    def may_name_runner(node: ast.AST | None) -> bool:
        # A function, not a class made here: a class is a reference cycle, which would
        # keep the tree alive until the cyclic collector runs.
        if not computed:
            computed.append(_ComputedNames(tree, text, every_node))
        return computed[0].may_name_runner(node)

    def lookup(node: ast.AST, space: str | None, key: ast.AST | None) -> None:
        if space is None:
            return
        if space not in _NAME_TABLES:
            found.append((node.lineno, node.col_offset + 1, f'reads the namespace {space}'))
        elif (may_name_runner(key) if not _literal(key) else
              _in_pieces(key, text) and _names_runner(key.value)):  # type: ignore[union-attr]
            # sys.modules["_py" "test"]: one literal to the parser, spelled nowhere
            found.append((node.lineno, node.col_offset + 1,
                          f'looks up a name in {space} that the source does not spell'))

    nodes = ast.walk(tree) if every_node else \
        walk_lines(tree, word_lines(text, compute_words(aliases)))  # type: ignore[arg-type]
    for node in nodes:
        if isinstance(node, ast.Call) and node.args:
            func, first = node.func, node.args[0]
            name = aliases.resolve(func)
            plain = isinstance(func, ast.Name) and func.id not in aliases.names
            if plain and func.id == 'getattr' and len(node.args) >= 2 and \
                    (not _literal(node.args[1]) or _in_pieces(node.args[1], text)) and \
                    _is_runner_object(aliases.resolve(first)):
                found.append((node.lineno, node.col_offset + 1,
                              f'getattr of a computed name on {aliases.resolve(first)}'))
            elif ((plain and func.id == '__import__') or
                  name in ('importlib.import_module', 'importlib.__import__',
                           'builtins.__import__')) and may_name_runner(first):
                found.append((node.lineno, node.col_offset + 1,
                              'imports a module whose name is computed'))
            elif isinstance(func, ast.Attribute) and func.attr in ('get', 'setdefault', 'pop'):
                lookup(node, _namespace_of(func.value, aliases), first)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            lookup(node, _namespace_of(node.value, aliases), node.slice)
    return sorted(found)


# Rule 35's words: every tampering site spells one within its own lines. An owner that is
# a pytest object is reached from a local name bound to pytest (or to importlib, which
# imports it by name) or from `__import__`; only `setattr`/`delattr` name it in a string,
# and `__code__` needs no owner. (`vars(...)`, `getattr(...)`, `.__dict__` reach their
# object through one of those, so they need no word of their own.)
_TAMPER_WORDS = ('__code__', 'setattr', 'delattr', '__import__')


def tamper_words(aliases: ImportAliases) -> list[str]:
    return [*_TAMPER_WORDS, *(name for name, target in aliases.names.items()
                              if target.startswith(('pytest', '_pytest', 'importlib')))]


def tampering(tree: ast.Module, aliases: ImportAliases | None = None,
              text: str | None = None) -> list[tuple[int, int, str]]:
    """(line, col, what) of every assignment to a function's ``__code__`` or to an
    attribute of a ``pytest``/``_pytest`` object, however reached (rule 35): such a test
    runs code nobody reviews as the test, or changes how pytest runs every test.

    With the file's ``text``, only the lines that spell a word of such a site are walked
    (``walk_lines``); without it, every node (the reference the fast path is tested
    against)."""
    if aliases is None:
        aliases = ImportAliases(tree)
    found = []
    nodes = ast.walk(tree) if text is None else \
        walk_lines(tree, word_lines(text, tamper_words(aliases)))
    for node in nodes:
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            if node.attr == '__code__':
                found.append((node.lineno, node.col_offset + 1, 'assigns a function\'s __code__'))
            elif _is_pytest_object(aliases.resolve(node.value)):
                owner = aliases.resolve(node.value)
                found.append((node.lineno, node.col_offset + 1,
                              f'assigns {owner}.{node.attr}, an attribute of pytest'))
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)):
            value = node.value
            owner = None
            if isinstance(value, ast.Attribute) and value.attr == '__dict__':
                owner = aliases.resolve(value.value)
            elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and \
                    value.func.id == 'vars' and value.args:
                owner = aliases.resolve(value.args[0])
            if _is_pytest_object(owner):
                found.append((node.lineno, node.col_offset + 1,
                              f'writes into the namespace of {owner}, a pytest object'))
        elif isinstance(node, ast.Call) and node.args and (
                (isinstance(node.func, ast.Name) and node.func.id in ('setattr', 'delattr')) or
                (isinstance(node.func, ast.Attribute) and
                 node.func.attr in ('setattr', 'delattr'))):
            first = node.args[0]
            owner = first.value if isinstance(first, ast.Constant) and \
                isinstance(first.value, str) else aliases.resolve(first)
            attr = node.args[1] if len(node.args) > 1 else None
            if _is_pytest_object(owner if isinstance(owner, str) else None):
                found.append((node.lineno, node.col_offset + 1,
                              f'patches {owner}, a pytest object'))
            elif isinstance(attr, ast.Constant) and attr.value == '__code__':
                found.append((node.lineno, node.col_offset + 1,
                              'sets a function\'s __code__'))
    return sorted(found)
