"""The pytest plugin: the runtime twin of the hooks (filled in by the ledger work)."""
from __future__ import annotations
