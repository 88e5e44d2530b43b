"""What a check returns: findings (rule broken, exit 1) and errors (bad input, exit 2)."""
from __future__ import annotations

from oracle_guard.oracle.records import FrozenRecord


class Finding(FrozenRecord):
    """One broken rule at one place. Checks return these; they never print."""

    __slots__ = ('path', 'line', 'col', 'code', 'message', 'hint')
    path: str
    line: int
    col: int
    code: str
    message: str
    hint: str

    def __init__(self, path: str, line: int, col: int, code: str, message: str,
                 hint: str = '') -> None:
        self._set(path=path, line=line, col=col, code=code, message=message, hint=hint)

    def sort_key(self) -> tuple[str, int, int, str, str, str]:
        # The whole record: findings are printed from a set, so a key that stopped at the
        # code would leave two findings of one place and code in hash order, which changes
        # from one run to the next.
        return (self.path, self.line, self.col, self.code, self.message, self.hint)


class ConfigError(Exception):
    """Input oracle-guard cannot read: a malformed file, a bad setting.

    Reported as ``path:line: message`` with exit code 2, never as a traceback.
    """

    def __init__(self, path: str, line: int, message: str, hint: str = '') -> None:
        super().__init__(message)
        self.path = path
        self.line = line
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        where = f'{self.path}:{self.line}' if self.line else self.path
        return f'{where}: {self.message}'


def line_of_offset(text: str, offset: int) -> int:
    """1-based line number of a character offset."""
    return text.count('\n', 0, offset) + 1
