"""What one run of the rules judges: the configuration, the change, today's date.

Every hook's check takes a ``RunContext``; the runner builds one from the command line, the
gate from its base revision, and history mode one per commit.
"""
from __future__ import annotations

from oracle_guard.config import Config
from oracle_guard.config import PYPROJECT
from oracle_guard.config import table_config
from oracle_guard.findings import Finding
from oracle_guard.repo.changeset import Change
from oracle_guard.repo.changeset import detect_change_set
from oracle_guard.repo.changeset import NO_BASE

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    import argparse
    import datetime
    from collections.abc import Callable

    from oracle_guard.repo.changeset import ChangeSet
    from oracle_guard.repo.tree_view import TreeView


class RunContext:
    __slots__ = ('cfg', 'filenames', 'from_ref', 'to_ref', 'all_files', 'require_base',
                 '_today', 'notes', 'staged', 'judged', 'arguments', '_changes', '_base_cfg')

    def __init__(
            self, cfg: Config,
            filenames: list[str] | None = None,  # as passed by pre-commit, when it passes files
            from_ref: str | None = None, to_ref: str | None = None, all_files: bool = False,
            require_base: bool = False, today: datetime.date | None = None,
            notes: list[str] | None = None,
            staged: tuple[str | None, tuple[Change, ...]] | None = None,  # asked of git once
            judged: TreeView | None = None,  # the side documents are read from (judged_view)
            # The parsed command line: history mode applies hook args to each commit's config.
            arguments: argparse.Namespace | None = None,
            _changes: ChangeSet | None = None, _base_cfg: Config | None = None,
    ) -> None:
        self.cfg = cfg
        self.filenames = filenames
        self.from_ref = from_ref
        self.to_ref = to_ref
        self.all_files = all_files
        self.require_base = require_base
        self._today = today
        self.notes = [] if notes is None else notes
        self.staged = staged
        self.judged = judged
        self.arguments = arguments
        self._changes = _changes
        self._base_cfg = _base_cfg

    @property
    def today(self) -> datetime.date:
        """The date expiries are compared with: UTC today unless the run was given one.
        Worked out when a rule first asks (most commits never do: datetime is not free)."""
        if self._today is None:
            self._today = utc_today()
        return self._today

    @today.setter
    def today(self, value: datetime.date) -> None:
        self._today = value

    @property
    def changes(self) -> ChangeSet:
        """The change under judgement, computed once per process and only when asked."""
        if self._changes is None:
            self._changes = detect_change_set(
                self.cfg, from_ref=self.from_ref, to_ref=self.to_ref, all_files=self.all_files,
                staged=self.staged,
                # the judged index view, with what it has read already (runner.judged_view)
                index=self.judged if self.judged is not None and self.judged.rev == '' else None,
            )
        return self._changes

    @property
    def base_cfg(self) -> Config:
        """The configuration at the base revision (the current one if it did not change)."""
        if self._base_cfg is None:
            self._base_cfg = base_config(self.cfg, self.changes)
        return self._base_cfg

    def missing_base(self, hook: str) -> list[Finding]:
        """Findings (or a note) for a change rule that has no base to compare with."""
        cs = self.changes
        if cs.mode != NO_BASE:
            return []
        if self.require_base:
            return [Finding('.', 1, 1, 'OG001', f'{hook}: no base revision: {cs.description}',
                            'fetch full history (actions/checkout fetch-depth: 0) or pass '
                            '--from-ref/--to-ref')]
        self.notes.append(cs.not_checked_note(hook))
        return []


def base_config(cfg: Config, changes: ChangeSet) -> Config:
    """The configuration as it was at the base: a change that edits the table to move
    ``src``, the ledger or the lock elsewhere is still judged by where they were."""
    if PYPROJECT not in changes.touched():
        return cfg
    return table_config(cfg.root, changes.read_base(PYPROJECT)) or cfg


def utc_today() -> datetime.date:
    """Today in UTC: an expiry means the same on every machine, whatever its time zone."""
    import datetime

    return datetime.datetime.now(datetime.timezone.utc).date()


if TYPE_CHECKING:  # pragma: no cover
    Check = Callable[[RunContext], list[Finding]]
else:  # the same name for modules that import it; collections.abc is not worth importing
    Check = 'Callable[[RunContext], list[Finding]]'
