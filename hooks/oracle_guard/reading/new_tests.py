"""Which tests a change adds: absent from the base revision, in any file there.

A new test may bring its new lock entry in the same change as ``src/`` (row 51: a new entry
loosens nothing); an entry that exists is changed only in a change of its own. So an
unlocked property that the change adds gets a hint that says so, and that names the command
that adds its entry alone (``oracle-guard lock IDENTITY``), not "commit the lock in a change
of its own".
"""
from __future__ import annotations

from oracle_guard.findings import Finding

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from oracle_guard.context import RunContext

NEW_TEST_HINT = ('run `oracle-guard lock {identity}`, which adds this entry alone, and review '
                 'it: a test new in this change may bring its new entry in the same change, '
                 'src/ included (changing an existing entry stays a change of its own)')


def defined_at_base(ctx: RunContext, paths: list[str]) -> set[str] | None:
    """The test identities the base revision defines in ``paths`` (None: no base)."""
    from oracle_guard.reading.scanner import parse_python
    from oracle_guard.reading.scanner import ScanError
    from oracle_guard.reading.scanner import test_functions

    changes = ctx.changes
    if not changes.has_base:
        return None
    found: set[str] = set()
    for path in paths:
        raw = changes.read_base(path)
        if raw is None:
            continue
        try:
            found.update(identity for identity, _ in test_functions(parse_python(raw, path)))
        except ScanError:
            return None  # what the base defined cannot be told: the plain hint stays
    return found


def hint_unlocked_new_tests(ctx: RunContext, findings: list[Finding]) -> list[Finding]:
    """``findings`` with the hint of each unlocked property (OG601 without an entry) that
    the change adds saying that its new entry may come in the same change."""
    unlocked = [f for f in findings if f.code == 'OG601' and 'has no entry in' in f.message]
    if not unlocked:
        return findings
    old = defined_at_base(ctx, sorted({f.path for f in unlocked}))
    if old is None:
        return findings
    fixed = []
    for finding in findings:
        if finding in unlocked:
            identity = finding.message.split(': ', 1)[1].split(' has no entry', 1)[0]
            if identity not in old:
                finding = Finding(finding.path, finding.line, finding.col, finding.code,
                                  f'{finding.message}, and the test is new in this change',
                                  NEW_TEST_HINT.format(identity=identity))
        fixed.append(finding)
    return fixed
