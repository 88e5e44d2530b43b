"""A pytest plugin for the gate's freeze reruns only (``-p oracle_guard.runtime.unfrozen``).

A freeze added in a pull request is earned by a measured flip (rule 48): the gate reruns
the frozen test and counts how often it passes. The freeze itself (the ledger row the
oracle-guard plugin applies as a skip marker, or an ``FZ-<n>`` marker in the test file)
would hide the very outcome the rerun is for, so in that run every selected test loses its
skip and xfail markers, on itself and on its class and module, just before pytest reads
them. An imperative ``pytest.skip()`` in the body still skips: that is the test's own
outcome. The gate selects only the frozen tests in that run, so nothing else is touched.
"""
from __future__ import annotations

from typing import Any

import pytest

SILENCE_MARKS = frozenset(('skip', 'skipif', 'xfail'))


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: Any) -> None:
    # trylast: after the oracle-guard plugin applied the ledger's freezes as markers.
    for item in session.items:
        node = item
        while node is not None:
            node.own_markers[:] = [m for m in node.own_markers if m.name not in SILENCE_MARKS]
            node = node.parent
