"""What the audit of one run reads (``AuditContext``): the run record, the inventory, the
ledger and the adoption baseline, the src modules, and what the base revision collected."""
from __future__ import annotations

import datetime
from dataclasses import dataclass
from dataclasses import field

from oracle_guard.config import Config
from oracle_guard.gate.inventory import TestDef
from oracle_guard.oracle.ledger import FreezeLedger
from oracle_guard.oracle.ledger import FreezeRow
from oracle_guard.oracle.ledger import function_of
from oracle_guard.repo.tree_view import TreeView
from oracle_guard.runtime.run_record import RunRecord


@dataclass(frozen=True)
class SilenceOutcome:
    """A test that was skipped or xfailed in the run (or whose module was skipped)."""

    nodeid: str
    path: str  # repository-relative
    identity: str  # Class::function[params]
    kind: str  # skip, skipif, xfail, unittest-skip, expectedFailure, collection-skip
    reason: str
    where: tuple[str, int] | None  # the location pytest reported for the skip
    markers: tuple[tuple[str, str, str], ...]  # (name, args repr, kwargs repr)
    # the module its reason says could not be imported was loaded in that process (rule 41)
    imported: bool = False


@dataclass
class BaseCollection:
    """``path::identity`` of the base revision's own collection (rule 39b): what it kept,
    what it left out; ``error`` when it did not complete (then nothing recorded is
    accepted). Written by ``gate.base_collection``."""

    kept: frozenset[str] = frozenset()
    left_out: frozenset[str] = frozenset()
    error: str = ''
    # ``path::function`` -> the ``path::case`` ids of it in ``kept``.
    kept_functions: dict[str, frozenset[str]] = field(default_factory=dict)
    # Test files of the base -> their content, to tell an unchanged file.
    sources: dict[str, bytes] = field(default_factory=dict)
    # ``path::identity`` of kept tests with a ``skipif`` the base ran (none held there).
    unskipped: frozenset[str] = frozenset()


@dataclass
class AuditContext:
    cfg: Config  # the widened configuration (both sides of the change)
    record: RunRecord
    inventory: dict[tuple[str, str], TestDef]
    ledger: FreezeLedger | None
    today: datetime.date
    src_modules: dict[str, str] = field(default_factory=dict)  # top-level name -> path
    tracked: frozenset[str] = frozenset()  # files at HEAD, for what the record names
    junit_expected: str | None = None  # the JUnit file the run was asked to write
    view: TreeView | None = None  # HEAD: where the baseline and test files are read
    # The base revision's own collection (rule 39b): a BaseCollection, or None when the
    # baseline records nothing left out (or there is no base).
    base_collection: BaseCollection | None = None
    # Modules that lived under the src roots at the base revision and are gone from the
    # side that ran (``src_gone``): an importorskip of one explains no skip (rule 41).
    src_gone: frozenset[str] = frozenset()
    _accepted: dict[str, dict[str, list]] = field(default_factory=dict)  # type: ignore[type-arg]
    _judge: object = None
    _helpers: object = None
    _baseline: object = None

    def head(self) -> TreeView:
        return self.view or TreeView(self.cfg.root, None)

    def accepted(self, path: str) -> dict[str, list]:  # type: ignore[type-arg]
        """Rules 39-41: the silences of a test file that need no freeze (baselined,
        environment conditions, declared imports), as check-named-freezes judges them."""
        if path not in self._accepted:
            from oracle_guard.reading.silence_acceptance import accepted_silences
            from oracle_guard.reading.silence_acceptance import SilenceJudge

            from oracle_guard.reading.helper_modules import HelperModules

            if self._judge is None:
                self._judge = SilenceJudge.of_view(self.cfg, self.head())
                self._helpers = HelperModules.of(self.cfg, self.head())
            source = self.head().read(path)
            self._accepted[path] = {} if source is None else \
                accepted_silences(path, source, self._judge,  # type: ignore[arg-type]
                                  self._helpers)
        return self._accepted[path]

    def excluded_at_adoption(self) -> dict[str, str]:
        """nodeid -> what left it out, from the baseline's ``excluded`` list."""
        if self._baseline is None:
            from oracle_guard.oracle.baseline import read_baseline
            from oracle_guard.findings import ConfigError

            try:
                baseline = read_baseline(self.head(), self.cfg.baseline)
            except ConfigError:
                baseline = None  # check-named-freezes reports it
            self._baseline = baseline.excluded_nodeids() if baseline else {}
        return self._baseline  # type: ignore[return-value]

    def rows_for(self, path: str, identity: str) -> list[FreezeRow]:
        """Live ledger rows that name this test (its file, or a file that no longer
        defines it: the test was moved)."""
        if self.ledger is None:
            return []
        found = []
        for row in self.ledger.rows:
            if not row.identity or not row.is_live(self.today):
                continue
            if '[' in row.identity:
                if row.identity != identity:
                    continue
            elif function_of(identity) != row.identity:
                continue
            old_file = row.nodeid.split('::', 1)[0]
            if old_file == path or (old_file, row.identity) not in self.inventory:
                found.append(row)
        return found
