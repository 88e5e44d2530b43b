"""check-properties-present: the human-owned property tests still hold a real test."""
from __future__ import annotations

from oracle_guard.findings import Finding
from oracle_guard.runner import run_hook
from oracle_guard.config import is_test_module
from oracle_guard.reading import verdict_cache

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    import ast
    from collections.abc import Callable
    from collections.abc import Sequence

    from oracle_guard.config import Config
    from oracle_guard.repo.tree_view import TreeView
    from oracle_guard.context import RunContext


def property_tests(view: TreeView, cfg: Config, hollow: list[Finding] | None = None,
                   hint: Callable[[str, str], str] | None = None
                   ) -> tuple[set[str], list[str]]:
    """(identities of the real tests, test modules seen) among the properties: folders,
    files or globs (``Config.is_property``).

    Tests whose body asserts nothing are added to ``hollow`` as findings (rule 31), with
    ``hint(path, identity)`` saying what the change did to them. Each
    module's verdict depends on its bytes alone: on a developer's machine it is kept per
    content (``reading/verdict_cache.py``), so a commit that stages no property module
    parses none.
    """
    real, modules = set(), []
    if not cfg.properties:
        return real, modules
    entries = [e for e in view.entries(list(cfg.property_roots())) if cfg.is_property(e.path)]
    modules = [e.path for e in entries if is_test_module(e.path) and not e.is_symlink]
    cache = None
    if modules and verdict_cache.enabled():
        cache = verdict_cache.VerdictCache.for_this_code()
    verdicts = {}
    for path in modules:
        verdict = cache.get(verdict_cache.content_key(view.object_id(path))) if cache else None
        if verdict is not None:
            verdicts[path] = verdict
    view.read_many([p for p in modules if p not in verdicts])
    for path in modules:
        verdict = verdicts.get(path)
        if verdict is None:
            source = view.read(path)
            if source is None:
                continue
            verdict, parsed = module_verdict(source, path)
            if cache is not None and parsed:  # a parse that failed (memory?) is not kept
                cache.put(verdict_cache.content_key(view.object_id(path), source), verdict)
        real.update(verdict.real)
        if hollow is not None:
            hollow.extend(
                Finding(path, line, 1, 'OG403',
                        f'property test {identity} asserts nothing (its body is pass, ..., '
                        'a docstring, or returns at once)',
                        (hint or restore_hint)(path, identity))
                for line, identity in verdict.hollow)
    if cache is not None:
        cache.save()
    return real, modules


def restore_hint(path: str, identity: str) -> str:
    return ('this change emptied it: a property must check something; restore its body '
            f'(git checkout HEAD -- {path}); properties are human-owned')


def hollow_hints(ctx: RunContext) -> Callable[[str, str], str]:
    """The hint of a hollow property test, after what the change did to it: emptied a test
    that did something at the base, added a module with it, or left it as it was."""
    changes = ctx.changes
    status: dict[str, str] = {}
    at_base: dict[str, set[str]] = {}

    def hollow_at_base(path: str) -> set[str]:
        if path not in at_base:
            raw = changes.read_base(path)
            verdict = module_verdict(raw, path)[0] if raw is not None else None
            at_base[path] = {identity for _, identity in verdict.hollow} if verdict else set()
        return at_base[path]

    def hint(path: str, identity: str) -> str:  # asked only of a hollow test
        if not changes.has_base:  # the tree alone (no base): nothing to say of a change
            return (f'a property must check something: give {identity} an assert, or leave '
                    'the module out of `properties`; properties are human-owned')
        if not status:
            status.update((c.path, c.status) for c in changes.changes)
        done = status.get(path)
        if done in ('M', 'T') and identity not in hollow_at_base(path):
            return restore_hint(path, identity)
        if done is not None and done not in ('M', 'T'):  # added, renamed or copied here
            return (f'this change adds {path} as a property: give {identity} an assert on '
                    'the code it runs, or leave the module out of `properties`')
        return (f'this change does not empty {identity}: it asserted nothing before it; give '
                'it an assert in a change of its own, or leave the module out of `properties`')
    return hint


def module_verdict(source: bytes, path: str) -> tuple[verdict_cache.Verdict, bool]:
    """What one property module holds (rules 22 and 31): its tests that do something
    and the state machines it runs, and its hollow tests; and whether it parsed.
    Unparsable: nothing (an unparsable file holds no test pytest could run)."""
    from oracle_guard.reading.scanner import parse_python
    from oracle_guard.reading.scanner import ScanError
    from oracle_guard.reading.scanner import scan_tests

    try:
        tree = parse_python(source, path)
        tests = scan_tests(tree)
    except ScanError:
        return verdict_cache.Verdict((), ()), False
    real = sorted({t.identity for t in tests if t.does_something} | machine_tests(tree))
    return verdict_cache.Verdict(real, [(t.line, t.identity) for t in tests
                                        if not t.does_something]), True


def machine_tests(tree: object) -> set[str]:
    """The Hypothesis state machines a module runs as tests (``TestX::runTest``) whose
    rules or invariants check something: an assert, a raise or a call."""
    from oracle_guard.reading import syntax as ast

    if not _binds_a_test_case(tree):  # type: ignore[arg-type]
        return set()  # no machine runs here: the property reader (typing, dataclasses) waits
    from oracle_guard.reading.property_reader import state_machines

    found = set()
    for identity, machine, _bound in state_machines(tree):  # type: ignore[arg-type]
        for method in machine.body:
            if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    method.decorator_list and any(
                        isinstance(n, (ast.Assert, ast.Raise, ast.Call))
                        for stmt in method.body for n in ast.walk(stmt)):
                found.add(identity)
                break
    return found


def _binds_a_test_case(tree: ast.Module) -> bool:
    """Whether a statement of the module body binds some ``X.TestCase`` (``TestX =
    Machine.TestCase``, ``class TestX(Machine.TestCase)``): without one, no state machine
    runs as a test (``property_reader.state_machines`` finds those among these)."""
    from oracle_guard.reading import syntax as ast
    from oracle_guard.reading.module_body import module_statements

    for node in module_statements(tree.body):
        if isinstance(node, ast.Assign):
            values: list[ast.expr] = [node.value]
        elif isinstance(node, ast.ClassDef):
            values = node.bases
        else:
            continue
        if any(isinstance(v, ast.Attribute) and v.attr == 'TestCase' for v in values):
            return True
    return False


def real_tests(view: TreeView, cfg: Config) -> tuple[int, list[str]]:
    """(number of real tests, test modules seen) in the properties folder of one tree."""
    real, modules = property_tests(view, cfg)
    return len(real), modules


def removed_with_other_edits(ctx: RunContext, live: set[str]) -> list[Finding]:
    """SPEC §4: removing a property test is loosening, a change of its own.

    Judged against the base (its properties folder, as the base configuration had it)
    when the change also touches ``src/`` or test code outside the properties folder.
    """
    changes = ctx.changes
    if not changes.has_base:
        return []
    cfg, base_cfg = ctx.cfg, ctx.base_cfg
    touched = changes.touched()

    def is_property(path: str) -> bool:
        return cfg.is_property(path) or base_cfg.is_property(path)

    if not any(is_property(p) for p in touched) and base_cfg.properties == cfg.properties:
        return []
    others = sorted(p for p in touched if not is_property(p) and
                    (cfg.is_src(p) or cfg.is_test_code(p) or base_cfg.is_src(p)))
    if not others:
        return []  # alone, removing a property is the small diff a person reviews
    gone = sorted(property_tests(changes.base_view, base_cfg)[0] - live)
    shown = ', '.join(others[:3]) + (f' (+{len(others) - 3} more)' if len(others) > 3 else '')
    where = base_cfg.properties_label()
    return [Finding(base_cfg.properties[0].rstrip('/') or '.', 1, 1, 'OG402',
                    f'property test {identity} removed in the same change as {shown}',
                    'removing a property is a change of its own: restore it '
                    f'(git checkout HEAD -- {where.replace(", ", " ")}) and remove it in a '
                    'commit that touches nothing else')
            for identity in gone]


NOT_NAMED = ('check-properties-present: no property tests are named yet (properties = [] in '
             '[tool.oracle-guard]); name the files whose answers a person owns, e.g. '
             'properties = ["tests/test_hypothesis.py"], then run `oracle-guard lock`')


def check(ctx: RunContext) -> list[Finding]:
    cfg = ctx.cfg
    if not cfg.properties:
        ctx.notes.append(NOT_NAMED)
        return removed_with_other_edits(ctx, set())
    hollow: list[Finding] = []
    live, modules = property_tests(ctx.changes.new, cfg, hollow, hollow_hints(ctx))
    count = len(live)
    if count:
        return hollow + removed_with_other_edits(ctx, live)
    where = cfg.properties_label()
    if not modules:
        why = f'{where} holds no test module (test_*.py) that git tracks'
    else:
        why = (f'{where} has {len(modules)} test module(s) but no test that asserts, '
               'calls or raises anything')
    return hollow + [Finding(cfg.properties[0].rstrip('/') or '.', 1, 1, 'OG401', why,
                             empty_hint(ctx, where))]


def empty_hint(ctx: RunContext, where: str) -> str:
    """What to do about properties that hold no real test, after what the change did."""
    changes, cfg = ctx.changes, ctx.cfg
    if not changes.has_base:  # the tree alone (no base): nothing to say of a change
        return (f'name the files that hold the property tests in `properties` ({where} holds '
                'none); they are human-owned')
    base_cfg, touched = ctx.base_cfg, changes.touched()
    if any(cfg.is_property(p) or base_cfg.is_property(p) for p in touched):
        return (f'restore the property tests (git checkout HEAD -- {where.replace(", ", " ")}); '
                'they are human-owned')
    if base_cfg.properties != cfg.properties:
        return (f'this change points `properties` at {where}: name the files that hold the '
                'property tests, whose answers a person owns')
    return (f'this change does not touch {where}, which held no real test before it either: '
            'name the files that hold the property tests in `properties`, or give them a '
            'test that checks something, in a change of its own')


def history_check(ctx: RunContext) -> list[Finding]:
    """OG402 for one commit of history mode: property tests that commit removed together
    with other edits. An empty folder is judged only as it is now (OG401)."""
    cfg, base_cfg = ctx.cfg, ctx.base_cfg
    if cfg.properties == base_cfg.properties and not any(
            cfg.is_property(p) for p in ctx.changes.touched()):
        return []
    live, _ = property_tests(ctx.changes.new, cfg)
    return removed_with_other_edits(ctx, live)


def listed_modules(listings: dict[str, list[tuple[str, str, str]] | None]) -> list[str]:
    """For ``run_hook``: with the verdict cache off (CI), the blob ids of the test modules
    HEAD's properties folder lists, asked of the git process that listed it (the hook
    parses each of them, rule 22); with the cache on, none (their verdicts are kept)."""
    if verdict_cache.enabled():
        return []
    return [oid for listing in listings.values() for path, mode, oid in listing or ()
            if mode in ('100644', '100755') and is_test_module(path)]


def main(argv: Sequence[str] | None = None) -> int:
    from oracle_guard.config import SCHEMA

    # Listed on every commit: asked of HEAD with its first git process (the default path),
    # and with the cache off the modules it lists, in the same process.
    return run_hook(check, argv, 'The properties folder still holds at least one real test.',
                    history=history_check, folders=tuple(SCHEMA['properties'][0]),
                    listed=listed_modules)


if __name__ == '__main__':
    raise SystemExit(main())
