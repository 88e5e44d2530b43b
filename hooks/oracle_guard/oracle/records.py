"""Plain value classes for the hooks' hot path.

``dataclasses`` imports ``inspect`` (and with it ``ast``, ``dis``, ``tokenize``,
``linecache``): in a clean interpreter that costs more than a one-file commit's own work.
A value class here lists its fields in ``__slots__``, writes its ``__init__`` by hand and
gets equality, ``repr`` and ``replace`` from :class:`Record`; :class:`FrozenRecord` adds
immutability and a hash, as ``@dataclass(frozen=True)`` did.
"""
from __future__ import annotations

TYPE_CHECKING = False  # typing itself costs milliseconds at import
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any
    from typing import TypeVar

    R = TypeVar('R', bound='Record')


class Record:
    """Equality, ``repr`` and ``replace`` over the fields named in ``__slots__``."""

    __slots__ = ()
    # Fields left out of equality and repr (a cache, a flag that is not part of the value).
    _uncompared: tuple[str, ...] = ()

    def _compared(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__
                     if name not in self._uncompared)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._compared() == other._compared()  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]  # mutable: unhashable, as a dataclass

    def __repr__(self) -> str:
        shown = ', '.join(f'{name}={getattr(self, name)!r}' for name in self.__slots__
                          if name not in self._uncompared)
        return f'{type(self).__name__}({shown})'

    def replace(self: R, **changes: Any) -> R:
        """A copy with some fields changed (``dataclasses.replace``)."""
        values = {name: getattr(self, name) for name in self.__slots__}
        values.update(changes)
        return type(self)(**values)


class FrozenRecord(Record):
    """A :class:`Record` whose fields cannot be reassigned; hashable by its value."""

    __slots__ = ()

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f'cannot assign to field {name!r} of a frozen {type(self).__name__}')

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f'cannot delete field {name!r} of a frozen {type(self).__name__}')

    def __hash__(self) -> int:
        return hash(self._compared())

    def _set(self, **values: object) -> None:
        """For ``__init__`` only."""
        for name, value in values.items():
            object.__setattr__(self, name, value)
