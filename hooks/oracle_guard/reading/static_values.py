"""What a reader of source knows of a value without running it: the string a constant
expression builds (``folded``), what a name or attribute means through the imports and
assignments that bind it (``meanings``), and the names each binding gives a value written
out. Shared by the readers of src code that reaches into the test run and of the interpreter
capabilities it uses."""
from __future__ import annotations

from oracle_guard.reading import syntax as ast  # `ast` without its import cost
from oracle_guard.reading.scanner import dotted_name


def folded(node: ast.AST) -> str | None:
    """The string a constant expression builds, or None: concatenation (``+``, implicit,
    f-strings, ``"".join``), ``%`` and ``.format`` of constants, ``.decode()`` of bytes."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
        value = node.value
        return value.decode('latin-1') if isinstance(value, bytes) else value
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        left = folded(node.left)
        if left is None:
            return None
        if isinstance(node.op, ast.Mod):
            args = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
            values = [_constant(a) for a in args]
            if any(v is _NOT_CONSTANT for v in values):
                return None
            try:
                return left % tuple(values)
            except (TypeError, ValueError, KeyError):
                return None
        right = folded(node.right)
        return left + right if right is not None else None
    if isinstance(node, ast.FormattedValue) and node.conversion == -1 and \
            node.format_spec is None:
        return folded(node.value)
    if isinstance(node, ast.JoinedStr):
        parts = [folded(v) for v in node.values]
        return ''.join(parts) if all(p is not None for p in parts) else None  # type: ignore[arg-type]
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in ('format', 'decode', 'lower', 'upper')
            and not node.keywords):
        template = folded(node.func.value)
        values = [_constant(a) for a in node.args]
        if template is None or any(v is _NOT_CONSTANT for v in values):
            return None
        if node.func.attr == 'decode':
            return template  # bytes are folded as latin-1 text already
        if node.func.attr != 'format':
            return None if values else getattr(template, node.func.attr)()
        try:
            return template.format(*values)
        except (IndexError, KeyError, ValueError, AttributeError):
            return None
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == 'join' and len(node.args) == 1 and not node.keywords):
        sep = folded(node.func.value)
        items = node.args[0]
        if sep is not None and isinstance(items, (ast.List, ast.Tuple)):
            parts = [folded(e) for e in items.elts]
            if all(p is not None for p in parts):
                return sep.join(parts)  # type: ignore[arg-type]
    return None


_NOT_CONSTANT = object()


def _constant(node: ast.AST) -> object:
    """A literal argument of ``%`` or ``.format``: a string (folded) or a number."""
    text = folded(node)
    if text is not None:
        return text
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    return _NOT_CONSTANT


# The builtin functions whose ``__self__`` is the builtins module (``len.__self__``).
BUILTIN_FUNCTIONS = frozenset((
    'abs', 'aiter', 'all', 'anext', 'any', 'ascii', 'bin', 'breakpoint', 'callable', 'chr',
    'compile', 'delattr', 'dir', 'divmod', 'eval', 'exec', 'format', 'getattr', 'globals',
    'hasattr', 'hash', 'hex', 'id', 'input', 'isinstance', 'issubclass', 'iter', 'len',
    'locals', 'max', 'min', 'next', 'oct', 'ord', 'pow', 'print', 'repr', 'round', 'setattr',
    'sorted', 'sum', 'vars', '__build_class__', '__import__'))


# The heads a followed value may start with unaliased: each spells one of WORDS, so the
# line walk sees the assignment (``sys`` and ``threading`` count once an import binds them).
WORD_HEADS = frozenset(('builtins', '__builtins__', 'atexit', 'importlib', 'hypothesis'))


def meanings(node: ast.AST, imports: dict[str, str],
             bound: dict[str, frozenset[str]]) -> set[str]:
    """What ``node`` may stand for, through imports and names already bound."""
    if isinstance(node, ast.Name):
        found = set(bound.get(node.id, ()))
        if node.id in imports:
            found.add(imports[node.id])
        elif node.id in WORD_HEADS:
            found.add(node.id)
        return found
    if isinstance(node, ast.Attribute):
        if node.attr == '__self__' and isinstance(node.value, ast.Name) and \
                node.value.id in BUILTIN_FUNCTIONS and node.value.id not in imports and \
                node.value.id not in bound:
            return {'builtins'}  # len.__self__ is the builtins module
        return {f'{m}.{node.attr}' for m in meanings(node.value, imports, bound)}
    if isinstance(node, ast.Subscript):
        held = meanings(node.value, imports, bound)
        name = folded(node.slice)
        if not name:
            return set()
        found = {name} if 'sys.modules' in held else set()  # sys.modules["builtins"]
        # vars(sys)["modules"], sys.__dict__["meta_path"]: the module's own attribute
        found.update(f'{m[:-len(".__dict__")]}.{name}' for m in held if m.endswith('.__dict__'))
        return found
    if not isinstance(node, ast.Call) or not node.args:
        return set()
    func = dotted_name(node.func)
    if func == 'getattr' and len(node.args) in (2, 3):
        attr = folded(node.args[1])
        return {f'{m}.{attr}' for m in meanings(node.args[0], imports, bound)} if attr else set()
    if func == 'vars' and len(node.args) == 1:
        return {f'{m}.__dict__' for m in meanings(node.args[0], imports, bound)}
    if func == '__import__' or 'importlib.import_module' in meanings(node.func, imports, bound):
        name = folded(node.args[0])
        if name and func == '__import__':
            name = name.split('.', 1)[0]  # __import__("a.b") is a
        return {name} if name else set()
    return set()


def _pairs(target: ast.AST, value: ast.AST) -> list[tuple[str, ast.AST]]:
    """(name, value) of each name ``target`` binds to a value written out: ``a, b = sys, 1``
    pairs ``a`` with ``sys``; a starred or unpacked-from-elsewhere name pairs with nothing."""
    if isinstance(target, ast.Name):
        return [(target.id, value)]
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
            and len(target.elts) == len(value.elts) and \
            not any(isinstance(e, ast.Starred) for e in (*target.elts, *value.elts)):
        return [pair for t, v in zip(target.elts, value.elts) for pair in _pairs(t, v)]
    return []


# What binds names besides an assignment and a walrus: a loop over values written out
# (``for m in [sys.modules]``), a ``with`` target (``with nullcontext(len.__self__) as b``:
# the value and the arguments of the call that makes the context), a default argument
# (``def put(m=sys.modules)``).
BINDERS = (ast.Assign, ast.AnnAssign, ast.NamedExpr, ast.For, ast.AsyncFor, ast.comprehension,
           ast.With, ast.AsyncWith, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def bindings_of(node: ast.AST) -> list[tuple[str, ast.AST]]:
    """(name, value) of each name a binder (``BINDERS``) binds to a value written out."""
    if isinstance(node, ast.Assign):
        return [pair for target in node.targets for pair in _pairs(target, node.value)]
    if isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
        return _pairs(node.target, node.value)
    if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        if isinstance(node.iter, (ast.List, ast.Tuple, ast.Set)):
            return [pair for value in node.iter.elts for pair in _pairs(node.target, value)]
        return []
    if isinstance(node, (ast.With, ast.AsyncWith)):
        found = []
        for item in node.items:
            if item.optional_vars is None:
                continue
            value = item.context_expr
            values = [value, *value.args] if isinstance(value, ast.Call) else [value]
            found += (pair for v in values for pair in _pairs(item.optional_vars, v))
        return found
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        args = node.args
        positional = [*args.posonlyargs, *args.args]
        pairs = list(zip((a.arg for a in positional[len(positional) - len(args.defaults):]),
                         args.defaults))
        pairs += ((a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults)
                  if d is not None)
        return pairs
    return []
