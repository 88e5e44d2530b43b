"""Regular expressions compiled on first use.

``import re`` costs a hook about 0.2× a bare interpreter's start-up, and ``enum`` and
``functools`` with it another 0.4×: more than most one-file commits ask of a hook. A
module-level pattern that only some runs use is a ``LazyPattern``, and ``re`` is imported
when one of them is first asked.
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    import re


class LazyPattern:
    """``re.compile(pattern, flags)``, compiled when first used."""

    __slots__ = ('_args', '_compiled')

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._args = (pattern, flags)
        self._compiled: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            import re

            self._compiled = re.compile(*self._args)
        return self._compiled

    def match(self, text: str) -> re.Match[str] | None:
        return self.compiled().match(text)

    def search(self, text: str) -> re.Match[str] | None:
        return self.compiled().search(text)

    def findall(self, text: str) -> list[str]:
        return self.compiled().findall(text)
