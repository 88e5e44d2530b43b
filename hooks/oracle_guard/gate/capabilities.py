"""Rule 54: interpreter capabilities a pull request adds to code reachable from ``src/``.

The gate cannot tell code that detects the test run from a fix, so it bounds what that
code may use: a use of an interpreter capability (``reading/capabilities``) that the
change adds to the ``src`` roots, or to a repository file that ``src`` code imports,
``exec``s, ``compile``s or opens as code, is listed in the review report and needs a
person's approval, as an oracle change does (rule 47, ``gate/approval.py``, OG741).

What is reachable is kept simple and bounded: every Python file under the ``src`` roots;
then, followed from those, the repository's modules outside the ``src`` and tests roots
that an ``import`` names, and the ``.py`` files whose path is written as constants in a call
of ``exec``, ``compile``, ``open``, ``runpy.run_path`` and the like. A use the change
removes from such code (a file's base side, the file before a rename, a file deleted or no
longer reached) vouches for one use of the same kind and expression on the new side
(``reading/moved_uses``): a module moved, split or renamed adds nothing. A file that
becomes reachable in the change brings all its uses. A project lists
uses it allows under ``src-capabilities``: a kind, or ``kind:path``, on both sides of the
change (widening the list is a change of its own, rule 42).

Code of another distribution is outside what this reads, and runs with ``src`` in the
reference run all the same: so a top-level module that reachable code starts to import
(an ``import`` or ``importlib.import_module`` of a constant name), that the base's
reachable code never imported, that is neither the standard library's nor the project's
own, and that the base revision does not declare (``reading/declared_dependencies``) is a
use of kind ``dependency`` (``import NAME``), with the same approval; so is a change of
what the distribution is built from (kind ``packaging``: ``gate/packaging``), and an
extension module (``.so``, ``.pyd``) added or edited under the ``src`` roots, compiled code no
reader reads (``code-and-imports``, ``compiled module NAME``).
"""
from __future__ import annotations

import ast
import posixpath
import sys
from collections.abc import Iterable
from collections.abc import Sequence
from typing import NamedTuple

from oracle_guard.config import Config
from oracle_guard.config import in_paths
from oracle_guard.context import RunContext
from oracle_guard.gate.packaging import packaging_uses
from oracle_guard.reading.capabilities import capability_uses
from oracle_guard.reading.capabilities import identity
from oracle_guard.reading.capabilities import parse_module
from oracle_guard.reading.capabilities import Use
from oracle_guard.reading.declared_dependencies import read_project_facts
from oracle_guard.reading.moved_uses import unvouched
from oracle_guard.reading.static_values import folded
from oracle_guard.repo.changeset import ChangeSet
from oracle_guard.repo.tree_view import TreeView

CODE = 'OG741'
# The calls whose constant path arguments name a file run as code.
RUNNERS = frozenset(('exec', 'compile', 'open', 'run_path', 'execfile', 'read_text',
                     'read_bytes', 'spec_from_file_location', 'SourceFileLoader'))
RUNNER_WORDS = (b'exec', b'compile', b'open(', b'run_path', b'read_text', b'read_bytes',
                b'spec_from_file_location', b'SourceFileLoader')


class Added(NamedTuple):
    path: str
    use: Use
    via: str | None  # the src file that reaches ``path`` outside the src roots


def _is_src(cfgs: Sequence[Config], path: str) -> bool:
    return path.endswith('.py') and any(c.is_src(path) for c in cfgs) and \
        not any(c.is_test_code(path) for c in cfgs)


def _outside(cfgs: Sequence[Config], path: str) -> bool:
    return path.endswith('.py') and not any(c.is_src(path) or c.is_test(path) for c in cfgs)


def _module_name(path: str) -> str:
    name = path[:-3]
    if name.endswith('/__init__'):
        name = name[:-len('/__init__')]
    return name.replace('/', '.')


def own_names(cfgs: Sequence[Config], paths: Iterable[str]) -> frozenset[str]:
    """The project's top-level import names: the first part of every module under a ``src``
    root, and of every module outside the roots (``tools``)."""
    roots = sorted({r for c in cfgs for r in c.src_roots()}, key=len, reverse=True)
    # a root that is the package itself (src = ["dd/"]) is imported by its own name
    names = {r.rstrip('/').rsplit('/', 1)[-1] for r in roots if r.strip('/')}
    for path in paths:
        if not path.endswith('.py'):
            continue
        rel = next((path[len(r):] for r in roots if r and path.startswith(r)), path)
        names.add(rel.split('/', 1)[0].removesuffix('.py'))
    return frozenset(names)


def _literal_paths(call: ast.Call) -> list[str]:
    """The path a call's constant arguments spell, parts in source order
    (``os.path.join(os.path.dirname(__file__), "..", "tools", "env.py")``)."""
    parts = sorted(((n.lineno, n.col_offset, folded(n)) for n in ast.walk(call)
                    if isinstance(n, (ast.Constant, ast.JoinedStr, ast.BinOp))
                    and folded(n)), key=lambda t: (t[0], t[1]))
    texts = [t for _, _, t in parts if t and '\n' not in t and len(t) < 300]
    joined = '/'.join(t.strip('/') if i else t.rstrip('/') for i, t in enumerate(texts))
    return [joined, *texts] if joined else []


def _resolve(path: str, spelled: str, outside: dict[str, str]) -> str | None:
    """The file outside the roots a spelled path names, from the file's folder, from the
    root, or as the one file whose path ends so."""
    if not spelled.endswith('.py'):
        return None
    here = posixpath.dirname(path)
    for candidate in (posixpath.normpath(posixpath.join(here, spelled)),
                      posixpath.normpath(spelled.lstrip('/'))):
        if candidate in outside.values():
            return candidate
    tail = '/' + posixpath.normpath(spelled).lstrip('./')
    ends = [p for p in outside.values() if p.endswith(tail)]
    return ends[0] if len(ends) == 1 else None


def _imported(tree: ast.AST) -> list[str]:
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names += (f'{node.module}.{a.name}' for a in node.names)
            names.append(node.module)
    return names


def reachable(view: TreeView, cfgs: Sequence[Config]) -> dict[str, str | None]:
    """path -> the file that reaches it (None for a file under the ``src`` roots)."""
    paths = view.paths()
    found: dict[str, str | None] = {p: None for p in paths if _is_src(cfgs, p)}
    outside = {_module_name(p): p for p in paths if _outside(cfgs, p)}
    if not outside:
        return found
    # Only a file that can name one is parsed: a word of a runner, or an import of a
    # top-level name the repository has outside the roots.
    tops = {name.split('.', 1)[0].encode() for name in outside}
    words = (*RUNNER_WORDS, *(b'import ' + t for t in tops), *(b'from ' + t for t in tops))
    todo = list(found)
    view.read_many(todo)
    while todo:
        path = todo.pop()
        raw = view.read(path) or b''
        if not any(word in raw for word in words):
            continue
        tree = parse_module(raw)
        if tree is None:
            continue
        reached = []
        for name in _imported(tree):
            parts = name.split('.')
            reached += (outside[m] for m in ('.'.join(parts[:n]) for n in
                                             range(len(parts), 0, -1)) if m in outside)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and (getattr(node.func, 'id', None) or getattr(
                    node.func, 'attr', None)) in RUNNERS:
                reached += filter(None, (_resolve(path, s, outside)
                                         for s in _literal_paths(node)))
        for other in reached:
            if other not in found:
                found[other] = found[path] or path
                todo.append(other)
    return found


IMPORTERS = frozenset(('import_module', '__import__'))


def _run_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node but the body of an ``if TYPE_CHECKING:`` (imports only a type checker
    makes)."""
    found, todo = [], [tree]
    while todo:
        node = todo.pop()
        found.append(node)
        if isinstance(node, ast.If) and (getattr(node.test, 'id', None) or getattr(
                node.test, 'attr', None)) == 'TYPE_CHECKING':
            todo.extend(node.orelse)
            continue
        todo.extend(ast.iter_child_nodes(node))
    return found


def _top_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, top-level name) of every absolute import of a module, an
    ``importlib.import_module``/``__import__`` of a constant name included, outside an
    ``if TYPE_CHECKING:``."""
    found = []
    for node in _run_nodes(tree):
        if isinstance(node, ast.Import):
            found += ((node.lineno, a.name.split('.', 1)[0]) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.append((node.lineno, node.module.split('.', 1)[0]))
        elif isinstance(node, ast.Call) and node.args and (getattr(node.func, 'id', None) or
                                                           getattr(node.func, 'attr', None)
                                                           ) in IMPORTERS:
            name = folded(node.args[0])
            if isinstance(name, str) and name and not name.startswith('.'):
                found.append((node.lineno, name.split('.', 1)[0]))
    return found


def _standard_library(name: str) -> bool:
    names = getattr(sys, 'stdlib_module_names', None)
    if names is not None:
        return name in names or name in sys.builtin_module_names
    import importlib.util  # Python 3.9: where the module is found
    import sysconfig
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    origin = getattr(spec, 'origin', None) or ''
    stdlib = sysconfig.get_paths()['stdlib']
    return origin in ('built-in', 'frozen') or (origin.startswith(stdlib) and
                                                'site-packages' not in origin)


def new_dependencies(ctx: RunContext, judged: Sequence[tuple[str, str | None]],
                     base_paths: Iterable[str], own: frozenset[str]) -> list[Added]:
    """An import of another distribution's module that reachable code starts to make and
    the base revision neither made nor declares (the module docstring). ``judged``: the
    changed or newly reached files (path, the src file that reaches it)."""
    changes = ctx.changes
    assert changes.base_view is not None
    candidates: list[tuple[str, str | None, int, str]] = []
    for path, via in judged:
        tree = parse_module(changes.read_new(path) or b'')
        for line, name in _top_imports(tree) if tree is not None else ():
            if name not in own and name != '__main__' and not _standard_library(name):
                candidates.append((path, via, line, name))
    if not candidates:
        return []
    before: set[str] = set()
    words = {name.encode() for _, _, _, name in candidates}
    for path in base_paths:
        raw = changes.read_base(path) or b''
        if not any(word in raw for word in words):
            continue
        tree = parse_module(raw)
        before.update(name for _, name in (_top_imports(tree) if tree is not None else ()))
    facts = read_project_facts(changes.base_view, ctx.base_cfg)
    found, seen = [], set()
    for path, via, line, name in candidates:
        if name in before or name in seen or facts.declares(name):
            continue
        seen.add(name)
        found.append(Added(path, Use(line, 'dependency', f'import {name}'), via))
    return found


# Files the interpreter imports as compiled code (an extension module): no reader reads them.
COMPILED = ('.so', '.pyd', '.dylib', '.dll')


def _compiled_modules(changes: ChangeSet, cfgs: Sequence[Config]) -> list[tuple[str, Use]]:
    """An extension module the change adds or edits under the ``src`` roots."""
    roots = tuple(r for c in cfgs for r in c.src_roots())
    return [(c.path, Use(1, 'code-and-imports', f'compiled module {posixpath.basename(c.path)}'))
            for c in changes.changes if c.status != 'D' and c.path.endswith(COMPILED)
            and (not roots or c.path.startswith(roots))]


def _allowed(cfgs: Sequence[Config], path: str, kind: str) -> bool:
    """Listed under ``src-capabilities`` on both sides: the change that widens the list
    cannot use it."""
    def lists(cfg: Config) -> bool:
        for entry in cfg.src_capabilities:
            listed, _, where = entry.partition(':')
            if listed == kind and (not where or in_paths(path, (where,))):
                return True
        return False

    return all(lists(c) for c in cfgs)


def added_uses(ctx: RunContext) -> list[Added]:
    """Every use of an interpreter capability the change adds to code reachable from
    ``src/``, minus those ``src-capabilities`` allows.

    A use the change removes from such code vouches for one use of the same kind and
    expression (``reading/moved_uses``): each file's base side first (the file before a
    rename), then what the change's other files lost (a file deleted, or no longer
    reached): a module moved or split adds nothing."""
    changes = ctx.changes
    if not changes.has_base or changes.base_view is None:
        return []
    cfgs = [ctx.cfg, ctx.base_cfg]
    # where the distribution is built from (gate/packaging)
    packaging = [Added(path, use, None) for path, use in [*packaging_uses(changes, cfgs),
                                                          *_compiled_modules(changes, cfgs)]
                 if not _allowed(cfgs, path, use.kind)]
    changed = {c.path: c for c in changes.changes if c.status != 'D'}
    if not any(p.endswith('.py') and not any(c.is_test_code(p) for c in cfgs)
               for p in changed):
        return packaging  # no production code changed: no other use can be new
    head = reachable(changes.new, cfgs)
    bases: list[dict[str, str | None]] = []

    def base_reach() -> dict[str, str | None]:
        if not bases:
            bases.append(reachable(changes.base_view, cfgs))
        return bases[0]

    own = own_names(cfgs, [*head, *changes.new.paths()])

    def base_uses(path: str | None) -> list[Use]:
        raw = changes.read_base(path) if path is not None else None
        tree = parse_module(raw) if raw is not None else None
        return capability_uses(tree, own) if tree is not None else []

    sides: list[tuple[str, str | None, list[Use], list[Use]]] = []
    for path, via in sorted(head.items()):
        change = changed.get(path)
        # a copy's source is still there: only a rename's old side is the file's base
        old = change.old_path if change and change.status == 'R' and change.old_path \
            else path
        if via is not None and old not in base_reach():
            old = None  # newly reached: no base side of its own
        elif not change:
            continue
        new_tree = parse_module(changes.read_new(path) or b'')
        if new_tree is None:
            continue
        uses = capability_uses(new_tree, own)
        raw = changes.read_base(old) if old is not None else None
        tree = parse_module(raw) if raw is not None else None
        if raw is not None and tree is None:
            # the change fixes a syntax error: the uses whose expression the text holds
            # were there
            text = raw.decode('utf-8', 'replace')
            sides.append((path, via, [u for u in uses if u.expression not in text], []))
        else:
            sides.append((path, via, uses,
                          capability_uses(tree, own) if tree is not None else []))

    def others() -> list[Use]:
        """The base sides of the change's other files that src ran: deleted, moved out
        of reach, or no longer reached."""
        judged = {path for path, _, _, _ in sides}
        olds = [c.old_path or c.path for c in changes.changes
                if c.status not in ('A', 'C') and c.path not in judged
                and (c.old_path or c.path).endswith('.py')]
        return [use for old in olds if _is_src(cfgs, old) or old in base_reach()
                for use in base_uses(old)]

    found = []
    left = unvouched([(uses, before) for _, _, uses, before in sides], others, identity)
    for (path, via, _, _), uses in zip(sides, left):
        found.extend(Added(path, use, via) for use in uses
                     if not _allowed(cfgs, path, use.kind))
    judged = [(path, via) for path, via, _, _ in sides]
    found += (a for a in new_dependencies(ctx, judged, base_reach(), own)
              if not _allowed(cfgs, a.path, a.use.kind))
    return [*packaging, *found]


def capability_notes(ctx: RunContext) -> list[str]:
    """``oracle-guard check``: the same uses, as notes (the gate needs their approval)."""
    return [f'{a.path}:{a.use.line}: note: {CODE} rule 54 use added to code src runs: '
            f'{a.use.kind} {a.use.expression}' + (f' (reached from {a.via})' if a.via
                                                  else '')
            + '; the gate needs a person\'s approval' for a in added_uses(ctx)]
