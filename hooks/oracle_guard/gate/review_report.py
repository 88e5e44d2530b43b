"""The review report: every oracle change of a pull request, in Markdown, for the person
who approves it (``oracle-guard ci --report FILE.md`` and ``$GITHUB_STEP_SUMMARY``).

The hooks let an oracle change through when it comes alone; this report is how a person
sees exactly what such a change loosens: lock entries (old -> new), freeze rows (owner,
class, expiry), baseline entries, fixtures added or rehashed, property files, test
identities that disappeared, pytest configuration or conftest test-run control, the
CI workflow that runs the gate, the uses rule 54 lists that the change adds to code ``src/``
runs (``gate/capabilities.py``), and the build configuration the gate could not read.

Each line of the report is an ``Item``; ``needs_approval`` says whether it is an oracle
change a person must approve (rule 47, ``gate/approval.py``). New manifest rows (rule 12) and
new property files are listed for the reader but need no approval.
"""
from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from typing import Any
from typing import NamedTuple

from oracle_guard.repo.changeset import ChangeSet
from oracle_guard.config import Config
from oracle_guard.findings import ConfigError
from oracle_guard.repo.tree_view import TreeView
from oracle_guard.context import RunContext

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from oracle_guard.gate.approval import Approval

TITLE = '## oracle-guard: oracle changes in this pull request'
NO_CHANGE = 'No oracle change in this pull request.'
CAPABILITIES_TITLE = 'Rule 54 uses added to src (capabilities, dependencies, build sources)'
STATUS = {'A': 'added', 'M': 'modified', 'D': 'deleted', 'R': 'renamed', 'C': 'copied',
          'T': 'type changed'}


class Item(NamedTuple):
    """One line of the report: the file it is about, the Markdown line, and whether it is an
    oracle change that needs a person's approval before the gate passes (rule 47)."""
    path: str
    line: str
    needs_approval: bool = True
    at: int = 1  # the line of ``path`` a finding points at
    code: str = 'OG740'  # the finding's code while nobody approved it (OG741: rule 54)


class Section(NamedTuple):
    title: str
    items: list[Item]
    header: tuple[str, ...] = ()  # a table's head, printed before the items


def _code(text: object) -> str:
    value = str(text).replace('`', "'").replace('\n', ' ')
    return f'`{value}`'


def _cell(text: object) -> str:
    return str(text).replace('|', '\\|').replace('\n', ' ')


def _read_both(changes: ChangeSet, path: str, parse: Callable[[bytes, str], Any]
               ) -> tuple[Any, Any, str | None]:
    """(base document, new document, why unreadable) of one oracle file."""
    try:
        base_raw, new_raw = changes.read_base(path), changes.read_new(path)
        base = parse(base_raw, path) if base_raw is not None else None
        new = parse(new_raw, path) if new_raw is not None else None
    except ConfigError as exc:
        return None, None, str(exc)
    return base, new, None


def lock_sections(cfg: Config, changes: ChangeSet) -> tuple[list[Item], list[Item]]:
    """(entries loosened, existing entries otherwise changed). An entry for a new test
    loosens nothing and is not listed (rule 51)."""
    from oracle_guard.oracle.domain_lock import empty_lock
    from oracle_guard.oracle.domain_lock import loosened_entries
    from oracle_guard.oracle.domain_lock import parse_lock

    path = cfg.domain_lock
    if path not in changes.touched():
        return [], []
    base, new, problem = _read_both(changes, path, parse_lock)
    if problem:
        return [Item(path, f'- {_code(path)} changed and cannot be read: {problem}')], []
    base, new = base or empty_lock(path), new or empty_lock(path)
    found = loosened_entries(base, new)
    loosened = [Item(path, f'- {_code(identity)}: {what} ({_code(path)})', at=line or 1)
                for identity, what, line in found]
    seen = {identity for identity, _, _ in found}
    changed = [Item(path, f'- {_code(identity)}: entry edited ({_code(path)})',
                    at=new.entries[identity].line)
               for identity, old in sorted(base.entries.items())
               if identity not in seen and identity in new.entries
               and new.entries[identity].as_json() != old.as_json()]
    return loosened, changed


def ledger_sections(cfg: Config, changes: ChangeSet) -> tuple[list[Item], list[Item]]:
    """(rows added, rows changed or removed); every one needs approval."""
    from oracle_guard.oracle.ledger import parse_ledger

    path = cfg.ledger
    if path not in changes.touched():
        return [], []
    base, new, problem = _read_both(changes, path, parse_ledger)
    if problem:
        return [], [Item(path, f'- {_code(path)} changed and cannot be read: {problem}')]
    old_rows = {row.id: row for row in (base.rows if base else [])}
    new_rows = {row.id: row for row in (new.rows if new else [])}
    added = []
    for row_id, row in new_rows.items():
        if row_id not in old_rows:
            added.append(Item(path, f'| {_cell(row.id)} | {_cell(row.nodeid)} '
                                    f'| {_cell(row.freeze_class)} | {_cell(row.owner)} '
                                    f'| {_cell(row.raw.get("expires"))} '
                                    f'| {_cell(row.raw.get("evidence", ""))} |',
                              at=row.line_of('id')))
    changed = []
    for row_id, row in old_rows.items():
        if row_id not in new_rows:
            changed.append(Item(path, f'- {_code(row_id)} removed (was {_code(row.nodeid)})'))
            continue
        edits = [f'{key} {_code(row.raw.get(key))} -> {_code(new_rows[row_id].raw.get(key))}'
                 for key in sorted(set(row.raw) | set(new_rows[row_id].raw))
                 if row.raw.get(key) != new_rows[row_id].raw.get(key)]
        if edits:
            changed.append(Item(path, f'- {_code(row_id)}: ' + ', '.join(edits),
                                at=new_rows[row_id].line_of('id')))
    if base is not None and new is not None and base.budget != new.budget:
        changed.append(Item(path, f'- budget {_code(base.budget)} -> {_code(new.budget)}',
                            at=new.budget_line or 1))
    elif base is None and new is not None and new.budget:
        changed.append(Item(path, f'- ledger added with budget {_code(new.budget)}'))
    return added, changed


def baseline_section(cfg: Config, changes: ChangeSet) -> list[Item]:
    path = getattr(cfg, 'baseline', None)
    if not path or path not in changes.touched():
        return []
    try:
        from oracle_guard.oracle.baseline import grown_entries
        from oracle_guard.oracle.baseline import grown_excluded
        from oracle_guard.oracle.baseline import grown_links
        from oracle_guard.oracle.baseline import grown_patches
        from oracle_guard.oracle.baseline import parse_baseline
        from oracle_guard.oracle.baseline import empty_baseline
    except ImportError:
        return [Item(path, f'- {_code(path)} changed')]
    base, new, problem = _read_both(changes, path, parse_baseline)
    if problem:
        return [Item(path, f'- {_code(path)} changed and cannot be read: {problem}')]
    base, new = base or empty_baseline(path), new or empty_baseline(path)
    lines = [Item(path, f'- {_code(entry.path)} {entry.kind} of '
                        f'{", ".join(entry.tests) or "the module"}: {_code(entry.expression)}')
             for entry in grown_entries(base, new)]
    lines += [Item(path, f'- excluded {_code(test.nodeid)} ({test.by})')
              for test in grown_excluded(base, new)]
    lines += [Item(path, f'- {_code(patch.path)} {patch.what}: {_code(patch.source)}')
              for patch in grown_patches(base, new)]
    lines += [Item(path, f'- {_code(link.path)} a symlink to {_code(link.target)}')
              for link in grown_links(base, new)]
    return lines


def fixtures_section(cfg: Config, changes: ChangeSet) -> list[Item]:
    """Rows added (no approval needed: rule 12), rehashed or edited, removed."""
    from oracle_guard.oracle.manifest import parse_manifest

    path = cfg.manifest
    if path not in changes.touched():
        return []
    folder = cfg.manifest_folder()
    base, new, problem = _read_both(changes, path,
                                    lambda raw, name: parse_manifest(raw, name, folder))
    if problem:
        return [Item(path, f'- {_code(path)} changed and cannot be read: {problem}')]
    old_rows = base.rows if base else {}
    new_rows = new.rows if new else {}
    lines = []
    for key, row in sorted(new_rows.items()):
        old = old_rows.get(key)
        source = row.source or '?'
        if old is None:
            what = f'added, source {source}'
            if row.get('purpose'):
                what += f', purpose "{row.get("purpose")}"'
            lines.append(Item(path, f'- {_code(row.key)}: {what}', needs_approval=False))
        elif old.raw != row.raw:
            parts = []
            if old.sha256 != row.sha256:
                parts.append(f'rehashed {old.sha256[:12]}… -> {row.sha256[:12]}…')
            for field in ('source', 'purpose', 'trace_id', 'schema', 'rewritable_by_agent',
                          'role'):
                if old.get(field) != row.get(field):
                    parts.append(f'{field} {_code(old.get(field))} -> {_code(row.get(field))}')
            lines.append(Item(path, f'- {_code(row.key)}: ' + ', '.join(parts or ['row edited'])))
    lines += [Item(path, f'- {_code(old_rows[key].key)}: row removed')
              for key in sorted(set(old_rows) - set(new_rows))]
    return lines


def properties_section(cfgs: Sequence[Config], changes: ChangeSet) -> list[Item]:
    """Every file under the properties the change touches, each an oracle change to approve
    (rule 56): a new module, conftest, helper or data file there changes what the base's
    properties run with once it is merged, as much as an edit does."""
    lines = []
    for change in sorted(changes.changes, key=lambda c: c.path):
        paths = [change.path, change.old_path or '']
        if any(c.is_property(p) for p in paths if p for c in cfgs):
            what = STATUS.get(change.status, change.status)
            if change.old_path:
                what += f' from {_code(change.old_path)}'
            lines.append(Item(change.path, f'- {_code(change.path)}: {what}'))
    return lines


def oracle_helpers_section(cfg: Config, changes: ChangeSet) -> list[Item]:
    """The modules outside the tests and src roots that the base revision's property files
    import (directly or through their helpers), edited, removed or moved: oracle, as the
    property files are (rules 44, 47)."""
    if changes.base_view is None:
        return []
    touched = {p for c in changes.changes for p in (c.path, c.old_path) if p}
    if not any(p.endswith('.py') and not cfg.is_test(p) and not cfg.is_src(p)
               for p in touched):
        return []  # no such module changed: the base's imports need not be followed
    from oracle_guard.gate.reference_tree import oracle_helpers

    helpers = set(oracle_helpers(cfg, changes.base_view))
    lines = []
    for change in sorted(changes.changes, key=lambda c: c.path):
        old = change.old_path or change.path
        if old in helpers:
            what = STATUS.get(change.status, change.status)
            if change.old_path:
                what += f' to {_code(change.path)}'
            lines.append(Item(old, f'- {_code(old)}: {what} (a property imports it)'))
    return lines


def _tests(view: TreeView | None, path: str) -> dict[str, tuple[str, str]]:
    """identity -> (function name, body as syntax) of each test pytest's default rules
    collect from one file of ``view``."""
    from oracle_guard.gate.inventory import file_inventory
    from oracle_guard.hooks.forbid_mixed_oracle_diff import test_body
    from oracle_guard.reading.scanner import parse_python
    from oracle_guard.reading.scanner import ScanError
    from oracle_guard.reading.scanner import test_functions

    source = view.read(path) if view is not None else None
    if source is None:
        return {}
    try:
        nodes = dict(test_functions(parse_python(source, path)))
    except ScanError:
        return {}
    return {test.identity: test_body(test.identity, nodes.get(test.identity))
            for test in file_inventory(source, path)}


def removed_tests_section(cfgs: Sequence[Config], changes: ChangeSet
                          ) -> tuple[list[Item], list[Item]]:
    """(test identities defined at the base in a touched test file and nowhere after,
    tests moved with their name and body unchanged). A move is not a removal (rule 52):
    a test that left its identity is moved when a test of the change, in a touched test
    file, has its name and the same body (compared as syntax, as rule 30 does). A test
    moved onto one the pytest configuration leaves out (``--ignore``, ``--deselect``,
    ``collect_ignore``, ``testpaths``) is removed all the same: nothing runs it there."""
    from oracle_guard.reading.scanner import is_test_module

    touched = sorted(p for p in changes.touched()
                     if any(c.is_test(p) for c in cfgs) and is_test_module(p))
    if not touched:
        return [], []
    after: dict[str, set[str]] = {}  # identity -> the files defining it after
    bodies: dict[tuple[str, str], list[str]] = {}  # (name, body) -> where it is after
    for path in touched:
        for identity, body in _tests(changes.new, path).items():
            after.setdefault(identity, set()).add(path)
            bodies.setdefault(body, []).append(f'{path}::{identity}')
    left_out: list[set[str]] = []

    def runs(nodeid: str) -> bool:  # rules 30 and 52: where the configuration runs it
        if not left_out:
            from oracle_guard.reading.pytest_exclusions import excluded_tests

            left_out.append({n for c in cfgs for n in excluded_tests(changes.new, c)})
        return nodeid not in left_out[0]

    removed, moved = [], []
    for path in touched:
        for identity, body in sorted(_tests(changes.base_view, path).items()):
            others = after.get(identity, set())
            if path in others or any(runs(f'{o}::{identity}') for o in sorted(others)):
                continue
            to = next((n for n in bodies.get(body, ()) if runs(n)), None) if body[1] else None
            if to is not None:
                moved.append(Item(path, f'- {_code(f"{path}::{identity}")} -> '
                                  f'{_code(to)} (name and body unchanged)',
                                  needs_approval=False))
            else:
                removed.append(Item(path, f'- {_code(f"{path}::{identity}")}'))
    return removed, moved


def control_section(cfgs: Sequence[Config], changes: ChangeSet) -> list[Item]:
    """pytest configuration, conftest test-run control, the guard's own configuration."""
    from oracle_guard.hooks.forbid_mixed_oracle_diff import oracle_changes

    detailed = {c.ledger for c in cfgs} | {c.domain_lock for c in cfgs} | \
        {c.manifest for c in cfgs} | {getattr(c, 'baseline', '') for c in cfgs}
    lines = []
    for path, what in oracle_changes(cfgs, changes):
        if path in detailed or any(c.is_property(path) for c in cfgs):
            continue  # shown in their own section
        lines.append(Item(path, f'- {_code(path)}: {what}'))
    return lines


WORKFLOWS = '.github/workflows/'
ACTION_NAMES = ('action.yml', 'action.yaml')
GATE_WORDS = (b'oracle-guard', b'oracle_guard')


def workflow_section(changes: ChangeSet) -> list[Item]:
    """The CI configuration that runs the gate: a workflow under ``.github/workflows/`` or an
    action file that names oracle-guard on either side, and the action at the root. A pull
    request that edits it could stop the gate from judging it (rule 47)."""
    lines = []
    for change in sorted(changes.changes, key=lambda c: c.path):
        for path in dict.fromkeys(p for p in (change.path, change.old_path) if p):
            name = path.rsplit('/', 1)[-1]
            workflow = path.startswith(WORKFLOWS) and name.endswith(('.yml', '.yaml'))
            if not workflow and name not in ACTION_NAMES:
                continue
            if path not in ACTION_NAMES:  # the root action always counts
                sides = (changes.read_base(path) or b'', changes.read_new(path) or b'')
                if not any(word in side for side in sides for word in GATE_WORDS):
                    continue
            what = STATUS.get(change.status, change.status)
            lines.append(Item(path, f'- {_code(path)}: {what} (it runs the gate)'))
            break
    return lines


def capabilities_section(ctx: RunContext) -> list[Item]:
    """One line per use rule 54 lists (its kind named) that the change adds to code
    ``src/`` runs, each needing approval (OG741)."""
    from oracle_guard.gate.capabilities import added_uses
    from oracle_guard.gate.capabilities import CODE

    items = []
    for added in added_uses(ctx):
        via = f' (reached from {_code(added.via)})' if added.via else ''
        items.append(Item(added.path, f'- {_code(f"{added.path}:{added.use.line}")}: '
                                      f'{added.use.kind} {_code(added.use.expression)}{via}',
                          at=added.use.line, code=CODE))
    return items


def build_notes_section(ctx: RunContext) -> list[Item]:
    """What of the pull request's build configuration the gate could not read statically
    (a ``setup.py`` computing its package folders): where the build takes its code from
    is the reviewer's to check there (rule 54, ``gate/packaging``). No approval needed."""
    from oracle_guard.gate.packaging import build_review

    changes = ctx.changes
    if not changes.has_base or changes.base_view is None:
        return []
    notes = build_review(changes, [ctx.cfg, ctx.base_cfg])[1]
    return [Item(path, f'- {_code(path)}: {what}; where the build takes its code from is not '
                       f'read (check that it ships the src the tests judged)',
                 needs_approval=False) for path, what in notes]


def report_sections(ctx: RunContext) -> list[Section]:
    """Every section of the report, empty ones included, in the order shown."""
    changes = ctx.changes
    cfgs = [ctx.cfg, ctx.base_cfg]
    cfg = ctx.cfg
    loosened, edited = lock_sections(cfg, changes)
    added, changed = ledger_sections(cfg, changes)
    removed, moved = removed_tests_section(cfgs, changes)
    return [
        Section('Lock entries loosened', loosened),
        Section('Lock entries edited', edited),
        Section('Freeze rows added', added, ('| id | test | class | owner | expires | evidence |',
                                             '|---|---|---|---|---|---|')),
        Section('Freeze rows changed or removed', changed),
        Section('Baseline grown', baseline_section(cfg, changes)),
        Section('Fixtures added or rehashed', fixtures_section(cfg, changes)),
        Section('Properties edited', properties_section(cfgs, changes)),
        Section('Oracle helpers edited (outside the tests roots)',
                oracle_helpers_section(cfg, changes)),
        Section('Tests removed', removed),
        Section('Tests moved (name and body unchanged)', moved),
        Section('Test-run control and configuration changed', control_section(cfgs, changes)),
        Section('CI workflow changed', workflow_section(changes)),
        Section(CAPABILITIES_TITLE, capabilities_section(ctx)),
        Section('Build configuration not read', build_notes_section(ctx)),
    ]


def review_report(ctx: RunContext, approval: Approval | None = None,
                  sections: Sequence[Section] | None = None,
                  evidence: Sequence[tuple[str, list[str]]] = ()) -> str:
    """The report; ``evidence`` adds the sections of the gate's own runs (the reference
    run and the evidence for freezes and new tests, ``gate/reference.py``)."""
    changes = ctx.changes
    if sections is None:
        sections = report_sections(ctx)
    where = f'{changes.description}' + (f' (merge-base `{changes.base[:12]}`)'
                                         if changes.base else '')
    out = [TITLE, '', f'Range: {where}.', '']
    if approval is not None and approval.changes:
        out += [approval.describe(), '']
    shown = [section for section in sections if section.items]
    if not shown:
        out += [NO_CHANGE, '']
    for section in shown:
        out += [f'### {section.title}', '', *section.header,
                *(item.line for item in section.items), '']
    for title, lines in evidence:  # the gate's own runs (gate/reference.py)
        if lines:
            out += [f'### {title}', '', *lines, '']
    return '\n'.join(out)
