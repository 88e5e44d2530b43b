"""New calls of a helper function whose silence the baseline holds (rule 39).

``tests/_support.py`` has ``def need(module): pytest.skip(f"no {module}")`` from before
adoption, so the baseline holds that skip (its entry names ``need``). A baseline records
what existed when it was written: the calls of ``need`` adoption saw. A call the base did
not have (a new test, or an existing test, fixture or helper that now calls it) is a new
silence of whatever calls it, judged as any silence: without a freeze id it fails (OG301);
the id goes in a comment on the call's line (``need("numpy")  # FZ-12``), as for
``expectedFailure``, or in a string argument.

What is followed: a module-level function of a helper module (or of the file itself),
called by its name, through ``from helper import need [as n]``, ``import helper [as h]``
then ``h.need(...)``, or a star import of the helper. Not followed: methods (``Util::bail``),
a function passed on by another helper, calls through a variable or ``getattr``, and
importorskip entries (their calls are judged at run time: an importorskip's words
explain a skip only at that very call, rule 41).
"""
from __future__ import annotations

import ast
import posixpath

from oracle_guard.reading.import_aliases import all_statements
from oracle_guard.reading.scanner import reason_ids
from oracle_guard.reading.scanner import Silence
from oracle_guard.reading.scanner import test_functions

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from oracle_guard.oracle.baseline import Baseline
    from oracle_guard.oracle.baseline import BaselineEntry

Target = tuple  # (helper path, function name)


def baselined_functions(baseline: Baseline) -> dict[str, dict[str, BaselineEntry]]:
    """path -> module-level function name -> the entry of the silence in its body."""
    found: dict[str, dict[str, BaselineEntry]] = {}
    for entry in baseline.entries:
        if entry.kind == 'importorskip' or entry.scope != 'test':
            continue
        for name in entry.tests:
            if '::' not in name and name.isidentifier():
                found.setdefault(entry.path, {}).setdefault(name, entry)
    return found


_NAME_BYTES = frozenset(b'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_')


# What may stand between a called name and its ``(``: blanks, newlines and comments inside
# brackets, a continuation, the ``)`` of a parenthesised name (``(need)("x")``).
_BEFORE_CALL = frozenset(b' \t\r\n\x0c\\)')


def _called(source: bytes, end: int) -> bool:
    """Whether the next byte at or after ``end`` that is none of those is ``(``."""
    size = len(source)
    while end < size:
        byte = source[end]
        if byte in _BEFORE_CALL:
            end += 1
        elif byte == 0x23:  # a comment, up to the end of its line (LF, CRLF or a lone CR)
            while end < size and source[end] not in (0x0A, 0x0D):
                end += 1
        else:
            return byte == 0x28
    return False


def _uses(source: bytes, name: bytes, defined_here: bool, called: bool = False) -> bool:
    """Whether ``name`` is spelled as a whole word in the ASCII ``source``; with
    ``defined_here``, somewhere other than right after ``def``; with ``called``, where a
    ``(`` follows it (sympy's ``@tooslow`` decorates a thousand tests and calls nothing)."""
    at = source.find(name)
    while at >= 0:
        end = at + len(name)
        if (not at or source[at - 1] not in _NAME_BYTES) and \
                (end >= len(source) or source[end] not in _NAME_BYTES) and \
                (not called or _called(source, end)):
            if not defined_here:
                return True
            head = source[max(0, at - 16):at].rstrip(b' \t')
            if not (head.endswith(b'def') and (len(head) == 3 or head[-4] not in _NAME_BYTES)):
                return True
        at = source.find(name, end)
    return False


def may_call(path: str, source: bytes, wanted: dict[str, dict[str, BaselineEntry]]) -> bool:
    """Whether ``calls`` may find a call of a function of ``wanted`` in the file at
    ``path``, from its bytes: a call by name spells the name as a word (a function of the
    file itself: other than at its ``def``), and reaching a function of another module
    needs an import spelling that module's name (not so for a package's ``__init__.py``:
    ``from . import *``); ``calls`` counts only calls, so a ``(`` follows the name.
    Outside ASCII the bytes are read as Python reads identifiers
    (NFKC: ``\uff4eeed()`` calls ``need``)."""
    if not source.isascii():
        from oracle_guard.reading.silence_prefilter import as_python_reads

        source = as_python_reads(source)
    for target, names in wanted.items():
        own = target == path
        stem = posixpath.basename(target)
        if not own and stem.endswith('.py') and stem != '__init__.py' and \
                not _uses(source, stem[:-3].encode(), False):
            continue
        if any(_uses(source, name.encode(), own, called=True) for name in names):
            return True
    return False


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return None if base is None else f'{base}.{node.attr}'
    return None


def _bindings(tree: ast.Module, path: str, helpers, wanted) -> tuple[dict, dict]:  # type: ignore[no-untyped-def]
    """(local name -> Target, dotted module name -> helper path) for the functions of
    ``wanted`` this file can call by name."""
    functions: dict[str, Target] = {}
    modules: dict[str, str] = {}
    if path in wanted:  # the file's own functions
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    node.name in wanted[path]:
                functions[node.name] = (path, node.name)
    if helpers is None:
        return functions, modules
    for node in all_statements(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found = helpers.module(alias.name, 0)
                if found in wanted:
                    modules[alias.asname or alias.name] = found
        elif isinstance(node, ast.ImportFrom) and (node.module or node.level):
            base = helpers.module(node.module, node.level)
            for alias in node.names:
                if base in wanted and alias.name == '*':
                    functions.update({n: (base, n) for n in wanted[base]
                                      if not n.startswith('_')})
                elif base in wanted and alias.name in wanted[base]:
                    functions[alias.asname or alias.name] = (base, alias.name)
                else:
                    inner = f'{node.module}.{alias.name}' if node.module else alias.name
                    sub = helpers.module(inner, node.level)
                    if sub in wanted:
                        modules[alias.asname or alias.name] = sub
    return functions, modules


def _callers(tree: ast.Module) -> list[tuple[str, ast.AST]]:
    """(identity, node) of each place code runs from: every module-level function and
    method (``Class::method``, nested functions counted with theirs), class bodies, and
    the module level itself ('')."""
    found: list[tuple[str, ast.AST]] = []
    loose: list[ast.AST] = []

    def visit(body: list[ast.stmt], prefix: str, into: list[ast.AST]) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.append((f'{prefix}{node.name}', node))
            elif isinstance(node, ast.ClassDef):
                own: list[ast.AST] = []
                visit(node.body, f'{prefix}{node.name}::', own)
                found.extend((f'{prefix}{node.name}', n) for n in own)
            else:
                into.append(node)

    visit(tree.body, '', loose)
    found.extend(('', node) for node in loose)
    return found


def calls(tree: ast.Module, path: str, helpers, wanted  # type: ignore[no-untyped-def]
          ) -> dict[str, dict[Target, ast.Call]]:
    """identity -> each function of ``wanted`` it calls -> its first call."""
    functions, modules = _bindings(tree, path, helpers, wanted)
    if not functions and not modules:
        return {}
    found: dict[str, dict[Target, ast.Call]] = {}
    for identity, node in _callers(tree):
        for sub in ast.walk(node):
            if not isinstance(sub, ast.Call):
                continue
            target = None
            if isinstance(sub.func, ast.Name):
                target = functions.get(sub.func.id)
            elif isinstance(sub.func, ast.Attribute):
                owner = modules.get(_dotted(sub.func.value) or '')
                if owner is not None and sub.func.attr in wanted[owner]:
                    target = (owner, sub.func.attr)
            if target is not None:
                calls_here = found.setdefault(identity, {})
                if target not in calls_here or sub.lineno < calls_here[target].lineno:
                    calls_here[target] = sub
    return found


def new_calls(path: str, tree: ast.Module, text: str, helpers, base_tree: ast.Module | None,  # type: ignore[no-untyped-def]
              base_path: str, base_helpers, wanted: dict[str, dict[str, BaselineEntry]]
              ) -> list[Silence]:
    """Each call of a baselined helper silence that the same caller did not make at the
    base, as the silence of the caller (its test, when it is one)."""
    now = calls(tree, path, helpers, wanted)
    if not now:
        return []
    before = calls(base_tree, base_path, base_helpers, wanted) if base_tree is not None \
        else {}
    tests = {identity for identity, _ in test_functions(tree)}
    lines = text.splitlines()
    found = []
    for identity, targets in sorted(now.items()):
        for target, call in sorted(targets.items(), key=lambda item: item[1].lineno):
            if target in before.get(identity, {}):
                continue
            entry = wanted[target[0]][target[1]]
            name = _dotted(call.func) or target[1]
            found.append(Silence(
                call.lineno, call.col_offset + 1, entry.kind,
                reason_ids(call, call, lines, 'expectedFailure'),
                (identity,) if identity in tests else (), 'test',
                f'{name}() calls {target[0]}::{target[1]}, whose {entry.kind} the baseline '
                'holds, in a call the base did not have, and is a new silence',
                call, call))
    return found
