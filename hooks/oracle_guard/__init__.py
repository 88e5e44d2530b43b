"""oracle-guard: pre-commit hooks that keep test oracles honest."""
from __future__ import annotations

__version__ = '0.1.0'
