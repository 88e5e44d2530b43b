"""What the baseline accepts of test code besides its silences (rule 39): upstream content
that check-named-freezes would fail at adoption and that no freeze can name.

* a test file nobody can parse here, by its bytes (OG307);
* a line of test code that changes pytest (OG308) or reaches it by a name nobody can read
  (OG310): a pytest plugin's own suite assigns attributes of pytest objects. The same line
  in the same file is accepted as often as the baseline lists it; one more is judged;
* a test file shipped as a symlink to something not reviewed as test code (OG307), with the
  target it named then.

``oracle-guard baseline`` records them with the hook's own scan, and the hook (in a commit,
in ``--all-files`` and in ``oracle-guard ci`` alike) subtracts exactly what was recorded.
"""
from __future__ import annotations

import os
import posixpath

from oracle_guard.oracle.baseline import patch_digest
from oracle_guard.oracle.baseline import PytestPatch
from oracle_guard.oracle.baseline import LinkedTestFile

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from collections.abc import Iterable

    from oracle_guard.config import Config
    from oracle_guard.findings import Finding
    from oracle_guard.oracle.baseline import Baseline
    from oracle_guard.repo.tree_view import TreeView

# Findings on a line of test code that predates the guard and that a baseline entry accepts.
PATCH_CODES = ('OG308', 'OG310')


def _line_text(source: bytes, line: int) -> str:
    lines = source.split(b'\n')
    raw = lines[line - 1] if 0 < line <= len(lines) else b''
    return raw.decode('utf-8', 'surrogateescape').strip()


def patches_in(path: str, source: bytes, findings: Iterable[Finding]) -> list[PytestPatch]:
    """The baseline entries for a file's OG308 and OG310 findings."""
    return [PytestPatch(path, f.code, f.message, _line_text(source, f.line))
            for f in findings if f.code in PATCH_CODES]


def accepted_at_adoption(path: str, source: bytes, baseline: Baseline,
                         findings: list[Finding],
                         exists: Callable[[str], bool] | None = None) -> list[Finding]:
    """A file's findings without those the baseline accepts: OG307 when it holds these
    very bytes as a file adoption could not read, and each OG308/OG310 on a line it lists
    (as often as it lists that line in this file, or in a file that no longer
    ``exists``: moving a file keeps the match, a copy beside it does not)."""
    if any(f.code == 'OG307' for f in findings) and baseline.accepts_unparsable(path, source):
        findings = [f for f in findings if f.code != 'OG307']
    if not baseline.patches or not any(f.code in PATCH_CODES for f in findings):
        return findings
    gone: dict[str, bool] = {}  # path -> it no longer exists (asked once a path)

    def moved_from(other: str) -> bool:
        if exists is None:
            return False
        if other not in gone:
            gone[other] = not exists(other)
        return gone[other]

    left: dict[str, int] = {}
    for patch in baseline.patches:
        if patch.path == path or moved_from(patch.path):
            left[patch.digest] = left.get(patch.digest, 0) + 1
    kept = []
    for finding in findings:
        if finding.code in PATCH_CODES:
            digest = patch_digest(finding.code, finding.message,
                                  _line_text(source, finding.line))
            if left.get(digest, 0):
                left[digest] -= 1
                continue
        kept.append(finding)
    return kept


def link_target(view: TreeView, path: str) -> str:
    """What a tracked symlink points at, as git records it ('' when unknown)."""
    if view.rev is None:  # the working tree: reading the path would follow the link
        try:
            return os.readlink(os.path.join(view.root, path))
        except OSError:
            return ''
    raw = view.read(path)
    return raw.decode('utf-8', 'replace') if raw is not None else ''


def unreviewed_links(view: TreeView, cfg: Config, entries: Iterable
                     ) -> tuple[list[LinkedTestFile], set[str]]:
    """(test files among ``entries`` that are symlinks to something not reviewed here,
    with their targets; every symlinked test file). A symlink to a tracked test file of
    the repository is reviewed: the file it names is scanned as test code in its own
    right."""
    links = sorted(e.path for e in entries if e.is_symlink and cfg.is_test_code(e.path))
    if not links:
        return [], set()
    named, targets = {}, {}
    for path in links:
        target = named[path] = link_target(view, path)
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
        if target and not target.startswith('/') and not resolved.startswith('../') and \
                resolved != '..' and cfg.is_test_code(resolved):
            targets[path] = resolved
    found = {e.path: e for e in view.entries(sorted(set(targets.values())))} \
        if targets else {}
    reviewed = {path for path, target in targets.items()
                if target in found and not found[target].is_symlink}
    return [LinkedTestFile(p, named[p]) for p in links if p not in reviewed], set(links)


def accepted_link(baseline: Baseline, link: LinkedTestFile) -> bool:
    """Whether the baseline holds this symlink, to this very target."""
    return any(k.path == link.path and k.target == link.target for k in baseline.links)

