"""Whether a test file may hold properties or Hypothesis settings profiles, decided from its
bytes before any parse: check-generator-lock's prefilter, which lets a commit of test files
without a property return before the property reader is imported."""
from __future__ import annotations

import posixpath

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover

    from oracle_guard.repo.tree_view import TreeView


def mentions_profile_words(raw: bytes) -> bool:
    """``register_profile`` or ``load_profile`` in the bytes (no regex to compile)."""
    if not raw.isascii():
        from oracle_guard.reading.silence_prefilter import as_python_reads

        raw = as_python_reads(raw)
    return b'register_profile' in raw or b'load_profile' in raw


def might_hold_properties(source: bytes) -> bool:
    """The byte prefilter: a module that never says `given` holds no @given test, and one
    that never says `StateMachine` runs no state machine (rule 23). A word on a line
    whose first character after the indentation is ``#`` does not count: that is a
    comment, or the inside of a multi-line string, and neither is a name the property
    reader resolves (sympy's ``# no vargs given`` made a module a property module),
    unless a quote or a brace comes before it on the line: a multi-line string may end
    there, or an f-string's replacement field begin, and code follow."""
    if not source.isascii():  # `\uff47iven` is `given` to Python
        from oracle_guard.reading.silence_prefilter import as_python_reads

        source = as_python_reads(source)
    for word in (b'given', b'StateMachine'):
        at = source.find(word)
        while at >= 0:
            # a line ends at \n, \r\n or a lone \r, as Python reads it
            start = max(source.rfind(b'\n', 0, at), source.rfind(b'\r', 0, at)) + 1
            head = source[start:at]
            if not head.lstrip(b' \t\f').startswith(b'#') or \
                    any(c in head for c in (b'"', b"'", b'{')):
                return True
            at = source.find(word, at + len(word))
    return False


def is_conftest(path: str) -> bool:
    return posixpath.basename(path) == 'conftest.py'


PROFILE_WORDS = ('register_profile', 'load_profile', 'hypothesis-profile', 'HYPOTHESIS_PROFILE')


def can_narrow(view: TreeView, path: str) -> bool:
    raw = view.read(path)
    return raw is not None and (might_hold_properties(raw) or mentions_profile_words(raw))


def mentions_profiles(view: TreeView, path: str) -> bool:
    raw = view.read(path)
    return raw is not None and mentions_profile_words(raw)
