"""What a change adds to production code, a move counting as nothing (rules 43 and 54).

A use that rule 43 (``reading/test_run_reach``: a site of code reaching into the test run)
or rule 54 (``reading/capabilities``: a use of an interpreter capability) finds is new only
when the change does not remove the same use from production code. The same use: the same
identity, which each reader gives as its normalised statement of the use and never holds a
file, a line or a column. Rule 43's is the site's ``what``: what the code does with the
name it resolves to, through imports and assignments (``uses sys.setprofile (a tracer sees
the test run)``, ``imports pytest``, ``names the module 'pytest'``). Rule 54's is the use's
kind and its expression's text, whitespace collapsed (``('frames', 'sys._getframe')``).

The uses are counted as a multiset over the production files of the change: each file's
uses are matched first with its own base side (the file before a rename), so a use that
stays keeps its place and the one added is the one reported; what is left is matched with
what the change's other files lost (a module split, a function moved to a new module, a
module renamed with a shim left under its old name, a file deleted). A move within a file,
between files or by a rename adds nothing; a move that also adds a use reports that one;
a use removed vouches for the same use only, never for another capability.
"""
from __future__ import annotations

TYPE_CHECKING = False  # typing costs a commit milliseconds at import
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from collections.abc import Hashable
    from collections.abc import Iterable
    from collections.abc import Sequence
    from typing import TypeVar
    from typing import Union

    U = TypeVar('U')
    Uses = Union[Iterable[U], None, Callable[[], Union[Iterable[U], None]]]


def _given(uses: Uses[U]) -> Iterable[U]:
    if callable(uses):
        uses = uses()
    return uses if uses is not None else ()


def _count(counts: dict[Hashable, int], uses: Iterable[U], key: Callable[[U], Hashable]
           ) -> None:
    for use in uses:
        name = key(use)
        counts[name] = counts.get(name, 0) + 1


def _take(counts: dict[Hashable, int], uses: Iterable[U], key: Callable[[U], Hashable]
          ) -> list[U]:
    """The uses ``counts`` does not vouch for, in their order; each match spends one."""
    left = []
    for use in uses:
        name = key(use)
        if counts.get(name):
            counts[name] -= 1
        else:
            left.append(use)
    return left


def unvouched(sides: Sequence[tuple[Sequence[U], Uses[U]]], others: Uses[U],
              key: Callable[[U], Hashable]) -> list[list[U]]:
    """For each production file of a change, ``(its uses now, its base side's uses)``;
    ``others``: the uses of the base sides of the change's other production files (deleted,
    renamed from, or not read on the new side). Returns, file by file, the uses now that
    nothing the change removes vouches for (see the module's docstring), in their order.

    A base side may be given as a function, called only when it is needed: a file's own
    when the file has a use now, the others' (and the base sides of files without a use
    now) only when a use is left after each file's own base side."""
    pool: dict[Hashable, int] = {}
    left: list[list[U]] = []
    for now, before in sides:
        if not now:
            left.append([])
            continue
        counts: dict[Hashable, int] = {}
        _count(counts, _given(before), key)
        left.append(_take(counts, now, key))
        for name, number in counts.items():
            if number:
                pool[name] = pool.get(name, 0) + number
    if not any(left):
        return left
    for now, before in sides:
        if not now:
            _count(pool, _given(before), key)
    _count(pool, _given(others), key)
    return [_take(pool, uses, key) for uses in left]
