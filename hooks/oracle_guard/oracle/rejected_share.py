"""When a property's rejected share has risen (rule 55): the tolerance the lock and the
gate share.

A property's rejected share is the share of the test cases Hypothesis drew for it that its
filters, ``assume`` calls or state-machine preconditions refused (``runtime/draw_rates``).
``oracle-guard lock --rates`` records it on the base, against the base's ``src``; the gate's
reference run measures it again against the pull request's ``src``. The two are samples of
a random run, so a rise counts only when all three hold:

* the reference run drew at least ``MIN_DRAWS`` test cases for the property (the lock
  records a share only from as many);
* the share rose by at least ``MIN_RISE`` (absolute): the standard deviation of a share
  measured over n test cases is at most 0.5/sqrt(n), 0.071 for 50, so the difference of
  two measurements has at most 0.1, and 0.25 is two and a half of it in the worst case
  (a share near one half); for a share near 0, the common case (no predicate of ``src``
  in the property), the spread is far smaller;
* the share is at least ``FACTOR`` times the locked one: a property that refused a third
  of its draws at base and refuses half of them now is noise more than a narrowed domain.

A predicate that hides a bug refuses most inputs: from near 0 to above one half.
"""
from __future__ import annotations

MIN_DRAWS = 50
MIN_RISE = 0.25
FACTOR = 2.0


def share(draws: int, rejected: int) -> float | None:
    """The rejected share of ``draws`` test cases, rounded as the lock writes it; None
    below ``MIN_DRAWS``."""
    if draws < MIN_DRAWS:
        return None
    return round(rejected / draws, 3)


def rose(locked: float, draws: int, rejected: int) -> bool:
    """Whether ``rejected`` of ``draws`` test cases is a rise past the tolerance over the
    ``locked`` share."""
    now = share(draws, rejected)
    return now is not None and now - locked >= MIN_RISE and now >= FACTOR * locked
