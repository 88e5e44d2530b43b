"""Which test modules use a helper module a change touched (rule 23 through helpers): the
importers of a helper, found with git grep level by level or from the import closure the
cache keeps, and the properties judged against the base revision."""
from __future__ import annotations

from oracle_guard.reading.property_modules import grep
from oracle_guard.reading.property_modules import may_import
from oracle_guard.reading.property_modules import module_names
from oracle_guard.reading.property_modules import python_files
from oracle_guard.reading.property_modules import readable
from oracle_guard.reading.property_prefilter import can_narrow
from oracle_guard.reading.property_prefilter import might_hold_properties

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    import ast
    from collections.abc import Sequence
    from typing import Any

    from oracle_guard.config import Config
    from oracle_guard.context import RunContext
    from oracle_guard.repo.changeset import ChangeSet
    from oracle_guard.repo.tree_view import TreeView


def judged_against_base(ctx: RunContext, view: TreeView, cfg: Config) -> set[str]:
    """The test files whose properties a change may narrow: those it touches, and those
    importing a helper module it touches (tests/strategies.py)."""
    touched = [p for p in ctx.changes.touched() if cfg.is_test_code(p)]
    if not touched:
        return set()
    helpers = [p for p in touched if not can_narrow(view, p)]
    return set(touched) | set(_importers(view, cfg, helpers))


def held_properties(changes: ChangeSet, path: str) -> bool:
    raw = changes.read_base(path)
    return raw is not None and might_hold_properties(raw)


def helper_users(ctx: RunContext, helpers: Sequence[str], touched: Sequence[str],
                  narrowing: bool, prefetched: dict[str, Any] | None) -> list[str]:
    """The property files that may read one of ``helpers`` (rule 23 through helper
    modules). With the closure cache, none when no helper is in the closure of HEAD's
    test roots (``reading/import_closure.py``); otherwise, and without the cache, the
    ``git grep`` of ``_importers``."""
    cfg, view = ctx.cfg, ctx.changes.new
    if not helpers:
        return []
    if prefetched is None:
        return _importers(view, cfg, helpers)
    from oracle_guard.reading.import_closure import ClosureCache
    from oracle_guard.reading.import_closure import tree_key

    roots, trees, head = prefetched['roots'], prefetched['trees'], prefetched['head']
    config = repr((cfg.tests, cfg.properties)).replace('\t', ' ')
    ids = [trees[r.rstrip('/')][0] if trees.get(r.rstrip('/')) else None for r in roots]
    key = tree_key(config, ids)
    # This tree with this staged change seen before (every run of the hooks on one
    # commit): the tree the commit leaves was kept then, if it could be.
    change = ' '.join(f'{c.status}{c.mode}{c.object_id}:{c.path}:{c.old_path or ""}'
                      for c in ctx.changes.changes).replace('\t', ' ')
    seen = f'{key}>{change}'
    cache = ClosureCache.for_this_code()
    found = cache.get([key, seen])
    closure = found.get(key)
    store = []
    if closure is None:
        closure = _build_closure(ctx, head, roots, cache)
        store.append((key, closure))
    # What the commit leaves: the same closure when no file of it changes and no new
    # property appears; kept under the ids the roots will have, for the next commit.
    if seen not in found and not narrowing and not any(closure.matters(p) for p in touched):
        predicted = _predicted_key(ctx, config, roots, trees, len(head) // 2)
        if predicted is not None and predicted != key:
            store += [(predicted, closure), (seen, closure)]
    cache.put(store)
    if any(closure.matters(p) for p in helpers):
        return _importers(view, cfg, helpers)
    return []


def _predicted_key(ctx: RunContext, config: str, roots: Sequence[str],
                   trees: dict[str, Any], width: int) -> str | None:
    from oracle_guard.reading.import_closure import tree_key
    from oracle_guard.repo.tree_ids import parse_tree
    from oracle_guard.repo.tree_ids import predict

    raw = {f: parse_tree(t[1], width) if t else None for f, t in trees.items()}
    ids = []
    for root in roots:
        relevant = {f: e for f, e in raw.items()
                    if not root or f == root.rstrip('/') or f.startswith(root)}
        if not any(c.path.startswith(root) or (c.old_path or '').startswith(root)
                   for c in ctx.changes.changes):
            known = trees.get(root.rstrip('/'))
            ids.append(known[0] if known else None)
            continue
        oid = predict(root, ctx.changes.changes, relevant, width)
        if oid is None and any(c.status != 'D' and c.path.startswith(root)
                               for c in ctx.changes.changes):
            return None  # not predictable here
        ids.append(oid.hex() if oid is not None else None)
    return tree_key(config, ids)


def remember_imports(view: TreeView, parsed: dict[str, ast.Module]) -> None:
    """The imports of the staged modules just parsed, kept per blob id: once committed,
    the closure of the next tree is built without parsing them again."""
    from oracle_guard.reading.import_closure import ClosureCache
    from oracle_guard.reading.import_closure import import_specs

    specs = ClosureCache.for_this_code().specs(load=False)
    for path, tree in parsed.items():
        oid = view.object_id(path)
        raw = view.read(path)
        if oid and raw is not None:
            specs.put(oid, might_hold_properties(raw), import_specs(tree))
    specs.save()


def _build_closure(ctx: RunContext, head: str, roots: Sequence[str], cache: Any) -> Any:
    """The closure of HEAD's test roots: one ``git ls-tree`` of them, each test module's
    imports from the per-blob cache or, for a blob never seen, from one batch read."""
    from oracle_guard.reading.import_closure import build
    from oracle_guard.repo.gitrepo import cat_file_batch
    from oracle_guard.repo.tree_view import TreeView

    cfg = ctx.cfg
    at_head = TreeView(ctx.changes.root, head)
    files = {}
    for entry in at_head.entries(list(roots)):
        if cfg.is_test_code(entry.path) and readable(entry):
            oid = at_head.object_id(entry.path)
            if oid:
                files[entry.path] = oid

    def read(paths: Sequence[str]) -> dict[str, bytes | None]:
        # by blob id: git then resolves no path through HEAD's trees
        answers = cat_file_batch(ctx.changes.root, [files[p] for p in paths], buffer=True)
        if answers is None:
            at_head.read_many(paths)
            return {p: at_head.read(p) for p in paths}
        return {p: a[2] if a and a[1] == 'blob' else None for p, a in zip(paths, answers)}

    specs = cache.specs()
    closure = build(files, read, list(roots), specs, might_hold_properties)
    specs.save()
    return closure


def _importers(view: TreeView, cfg: Config, helpers: Sequence[str], depth: int = 0
               ) -> list[str]:
    """Test files that may import these helper modules, followed through helpers of
    helpers: one ``git grep`` for the module names per level."""
    names = sorted({n for p in helpers if p.endswith('.py') for n in module_names(p)})
    if not names or depth > 3:
        return []

    def python_test_file(path: str) -> bool:
        return cfg.is_test_code(path) and path.endswith('.py')

    # In a commit, HEAD's tree is grepped and the staged files are read here: the
    # 50 000-entry index is not loaded again (the paths kept are filtered the same way).
    found = [p for p in grep(view, names, python_files(cfg), whole_words=True,
                              kept=python_test_file)
             if python_test_file(p) and p not in helpers]
    view.read_many(found)
    found = [p for p in found if may_import(view.read(p), p, names)]
    users = [p for p in found if can_narrow(view, p)]
    more = _importers(view, cfg, [p for p in found if p not in users], depth + 1)
    return sorted(set(users) | set(more))
