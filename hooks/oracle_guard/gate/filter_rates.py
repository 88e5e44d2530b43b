"""Rule 55 in the reference run: a base property whose filters reject a larger share of its
draws against the pull request's ``src`` than the domain lock records (OG742).

The plugin counts, per test call, the test cases Hypothesis drew and those it rejected
(``runtime/draw_rates``, the ``draws`` field of the record's call event); the base's lock,
in the reference tree, holds each property's ``rejected_share`` as ``oracle-guard lock
--rates`` measured it on the base. A property a predicate of ``src`` now refuses most
inputs of (a ``src`` function in its ``.filter()``, an ``assume`` that calls ``src``)
never sees the inputs that would show a bug, and fails nothing: the share is what moves.
The tolerance is ``oracle/rejected_share``. An entry without the field is not judged.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from oracle_guard.config import Config
from oracle_guard.findings import ConfigError
from oracle_guard.findings import Finding
from oracle_guard.oracle.domain_lock import DomainLock
from oracle_guard.oracle.domain_lock import read_lock_bytes
from oracle_guard.oracle.ledger import function_of
from oracle_guard.oracle.ledger import identity_of
from oracle_guard.oracle.rejected_share import rose
from oracle_guard.oracle.rejected_share import share
from oracle_guard.runtime.run_record import RunRecord

CODE = 'OG742'
HINT = ('a predicate the property calls (a src function in its .filter(), an assume that '
        'calls src) now refuses inputs it accepted at base, so the property never sees '
        'them: make src accept them again. If the property\'s domain really changed, a '
        'person records the new share with `oracle-guard lock --rates --allow-loosen`, in '
        'a change of its own (it needs approval)')


def _lock(root: str, cfg: Config) -> DomainLock | None:
    path = os.path.join(root, cfg.domain_lock)
    try:
        with open(path, 'rb') as f:
            raw = f.read()
    except OSError:
        return None
    try:
        return read_lock_bytes(raw, cfg.domain_lock)
    except ConfigError:
        return None  # a broken lock is the lock checks' finding, not this rule's


def _item_path(record: RunRecord, nodeid: str, root: str) -> str:
    """The repository path of a run's item (its node id's file, if never collected)."""
    item = record.items.get(nodeid)
    if not isinstance(item, dict) or not item.get('path'):
        return nodeid.split('::', 1)[0]
    path = os.path.relpath(os.path.realpath(str(item['path'])), os.path.realpath(root))
    return path.replace(os.sep, '/')


def judge_rates(record: RunRecord, root: str, cfg: Config,
                lines: Mapping[tuple[str, str], Any]) -> list[Finding]:
    """OG742 for every property of the reference run (``root``, its tree) whose rejected
    share rose past the tolerance over its lock entry's; ``lines``: (path, identity) ->
    the test's inventory entry (its ``line``)."""
    lock = _lock(root, cfg)
    if lock is None:
        return []
    drawn: dict[tuple[str, str], list[int]] = {}
    for nodeid, event in record.calls.items():
        draws = event.get('draws') if isinstance(event, dict) else None
        if not (isinstance(draws, list) and len(draws) == 2 and
                all(isinstance(n, int) and not isinstance(n, bool) for n in draws)):
            continue
        path = _item_path(record, nodeid, root)
        if not cfg.is_property(path):
            continue
        key = (path, function_of(identity_of(nodeid)))
        total = drawn.setdefault(key, [0, 0])
        total[0] += draws[0]
        total[1] += draws[1]
    findings = []
    for (path, identity), (draws, rejected) in sorted(drawn.items()):
        entry = lock.entries.get(identity)
        locked = entry.fields.get('rejected_share') if entry is not None else None
        if locked is None or not rose(locked, draws, rejected):
            continue
        test = lines.get((path, identity))
        findings.append(Finding(
            path, getattr(test, 'line', 1), 1, CODE,
            f'reference run: {identity} rejected {rejected} of {draws} drawn test cases '
            f'({share(draws, rejected):.0%}) against your src/ through its filters, assume '
            f'or preconditions; the domain lock records {locked:.0%} on the base (rule 55)',
            HINT))
    return findings
