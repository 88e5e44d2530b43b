"""check-properties-present: the human-owned properties folder still holds a real test."""
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


def property_tests(view: TreeView, folder: str,
                   hollow: list[Finding] | None = None) -> tuple[set[str], list[str]]:
    """(identities of the real tests, test modules seen) in a properties folder.

    Tests whose body asserts nothing are added to ``hollow`` as findings (rule 31).
    """
    real, modules = set(), []
    entries = view.entries([folder])
    view.read_many([e.path for e in entries if is_test_module(e.path) and not e.is_symlink])
    for entry in entries:
        if not is_test_module(entry.path) or entry.is_symlink:
            continue
        modules.append(entry.path)
        source = view.read(entry.path)
        if source is None:
            continue
        try:
            tests = scan_tests(parse_python(source, entry.path))
        except ScanError:
            continue  # an unparsable file holds no test pytest could run
        real.update(t.identity for t in tests if t.does_something)
        if hollow is not None:
            hollow.extend(
                Finding(entry.path, t.line, 1, 'OG403',
                        f'property test {t.identity} asserts nothing (its body is pass, ..., '
                        'a docstring, or returns at once)',
                        'a property must check something: restore its body '
                        f'(git checkout HEAD -- {entry.path}); properties are human-owned')
                for t in tests if not t.does_something)
    return real, modules


def real_tests(view: TreeView, cfg: Config) -> tuple[int, list[str]]:
    """(number of real tests, test modules seen) in the properties folder of one tree."""
    real, modules = property_tests(view, cfg.properties)
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
    folders = (cfg.properties, base_cfg.properties)
    touched = changes.touched()
    if not any(p.startswith(folders) for p in touched) and base_cfg.properties == cfg.properties:
        return []
    others = sorted(p for p in touched if not p.startswith(folders) and
                    (cfg.is_src(p) or cfg.is_test_code(p) or base_cfg.is_src(p)))
    if not others:
        return []  # alone, removing a property is the small diff a person reviews
    gone = sorted(property_tests(changes.base_view, base_cfg.properties)[0] - live)
    shown = ', '.join(others[:3]) + (f' (+{len(others) - 3} more)' if len(others) > 3 else '')
    return [Finding(base_cfg.properties.rstrip('/') or '.', 1, 1, 'OG402',
                    f'property test {identity} removed in the same change as {shown}',
                    'removing a property is a change of its own: restore it '
                    f'(git checkout HEAD -- {base_cfg.properties}) and remove it in a '
                    'commit that touches nothing else')
            for identity in gone]


def check(ctx: RunContext) -> list[Finding]:
    cfg = ctx.cfg
    hollow: list[Finding] = []
    live, modules = property_tests(ctx.changes.new, cfg.properties, hollow)
    count = len(live)
    if count:
        return hollow + removed_with_other_edits(ctx, live)
    if not modules:
        why = f'{cfg.properties} holds no test module (test_*.py) that git tracks'
    else:
        why = (f'{cfg.properties} has {len(modules)} test module(s) but no test that asserts, '
               'calls or raises anything')
    return hollow + [Finding(cfg.properties.rstrip('/') or '.', 1, 1, 'OG401', why,
                             'restore the property tests (git checkout HEAD -- '
                             f'{cfg.properties}); they are human-owned')]


def history_check(ctx: RunContext) -> list[Finding]:
    """OG402 for one commit of history mode: property tests that commit removed together
    with other edits. An empty folder is judged only as it is now (OG401)."""
    cfg, base_cfg = ctx.cfg, ctx.base_cfg
    folders = (cfg.properties, base_cfg.properties)
    if folders[0] == folders[1] and not any(p.startswith(folders) for p in ctx.changes.touched()):
        return []
    live, _ = property_tests(ctx.changes.new, cfg.properties)
    return removed_with_other_edits(ctx, live)


def main(argv: Sequence[str] | None = None) -> int:
    return run_hook(check, argv, 'The properties folder still holds at least one real test.',
                    history=history_check)


if __name__ == '__main__':
    raise SystemExit(main())
