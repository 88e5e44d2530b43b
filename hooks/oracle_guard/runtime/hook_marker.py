"""``pytest.hookimpl`` for the run record's plugin objects, without importing pytest into the
``oracle-guard ci`` process (which reads records and never runs a hook)."""
from __future__ import annotations

from typing import Any

try:  # pytest.hookimpl itself, without importing pytest into the ci process
    from pluggy import HookimplMarker
    hookimpl = HookimplMarker('pytest')
except ImportError:  # pragma: no cover -- the ci process reads records without pytest
    def hookimpl(**_options: Any) -> Any:  # type: ignore[misc,no-redef]
        return lambda function: function
