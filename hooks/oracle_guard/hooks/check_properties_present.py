"""check-properties-present: the human-owned property tests still hold a real test."""
from __future__ import annotations

from oracle_guard.findings import Finding
from oracle_guard.runner import run_hook
from oracle_guard.reading.scanner import is_test_module
from oracle_guard.reading.scanner import parse_python
from oracle_guard.reading.scanner import ScanError
from oracle_guard.reading.scanner import scan_tests

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Sequence

    from oracle_guard.config import Config
    from oracle_guard.repo.gitrepo import TreeView
    from oracle_guard.context import RunContext


def property_tests(view: TreeView, cfg: Config,
                   hollow: list[Finding] | None = None) -> tuple[set[str], list[str]]:
    """(identities of the real tests, test modules seen) among the properties: folders,
    files or globs (``Config.is_property``).

    Tests whose body asserts nothing are added to ``hollow`` as findings (rule 31).
    """
    real, modules = set(), []
    if not cfg.properties:
        return real, modules
    entries = [e for e in view.entries(list(cfg.property_roots())) if cfg.is_property(e.path)]
    view.read_many([e.path for e in entries if is_test_module(e.path) and not e.is_symlink])
    for entry in entries:
        if not is_test_module(entry.path) or entry.is_symlink:
            continue
        modules.append(entry.path)
        source = view.read(entry.path)
        if source is None:
            continue
        try:
            tree = parse_python(source, entry.path)
            tests = scan_tests(tree)
        except ScanError:
            continue  # an unparsable file holds no test pytest could run
        real.update(t.identity for t in tests if t.does_something)
        real.update(machine_tests(tree))
        if hollow is not None:
            hollow.extend(
                Finding(entry.path, t.line, 1, 'OG403',
                        f'property test {t.identity} asserts nothing (its body is pass, ..., '
                        'a docstring, or returns at once)',
                        'a property must check something: restore its body '
                        f'(git checkout HEAD -- {entry.path}); properties are human-owned')
                for t in tests if not t.does_something)
    return real, modules


def machine_tests(tree: object) -> set[str]:
    """The Hypothesis state machines a module runs as tests (``TestX::runTest``) whose
    rules or invariants check something: an assert, a raise or a call."""
    import ast

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
    live, modules = property_tests(ctx.changes.new, cfg, hollow)
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
                             'restore the property tests (git checkout HEAD -- '
                             f'{where.replace(", ", " ")}); they are human-owned')]


def history_check(ctx: RunContext) -> list[Finding]:
    """OG402 for one commit of history mode: property tests that commit removed together
    with other edits. An empty folder is judged only as it is now (OG401)."""
    cfg, base_cfg = ctx.cfg, ctx.base_cfg
    if cfg.properties == base_cfg.properties and not any(
            cfg.is_property(p) for p in ctx.changes.touched()):
        return []
    live, _ = property_tests(ctx.changes.new, cfg)
    return removed_with_other_edits(ctx, live)


def main(argv: Sequence[str] | None = None) -> int:
    return run_hook(check, argv, 'The properties folder still holds at least one real test.',
                    history=history_check)


if __name__ == '__main__':
    raise SystemExit(main())
