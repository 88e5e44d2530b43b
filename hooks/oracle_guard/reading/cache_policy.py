"""Where oracle-guard's per-user caches live, and when they are used.

The scan cache (``reading/scan_cache.py``) and the property verdict cache
(``reading/verdict_cache.py``) share one rule: under ``$XDG_CACHE_HOME/oracle-guard/``
(``~/.cache/oracle-guard/``), never in the repository; off when ``CI`` is set (a cache
restored in CI may have been written by a pull request's own code) unless
``ORACLE_GUARD_SCAN_CACHE=1``; ``ORACLE_GUARD_SCAN_CACHE=0`` turns both off everywhere.
Nothing here imports more than ``os``: a commit asks on every run.
"""
from __future__ import annotations

import os

ENV = 'ORACLE_GUARD_SCAN_CACHE'


def enabled(environ: dict[str, str] | os._Environ[str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    choice = env.get(ENV, '')
    if choice in ('0', 'false', 'no', 'off'):
        return False
    if choice in ('1', 'true', 'yes', 'on'):
        return True
    return not env.get('CI')


def cache_folder() -> str:
    base = os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
    return os.path.join(base, 'oracle-guard')


def append(path: str, text: str, max_bytes: int) -> bool:
    """Append ``text`` (whole lines) to a cache file, started afresh past ``max_bytes``;
    False when it cannot be written, which is no error. After a line torn by a run that
    stopped, the new lines start a line of their own (glued on, they would be lost)."""
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        if os.path.exists(path) and os.path.getsize(path) > max_bytes:
            os.remove(path)
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            size = os.fstat(fd).st_size
            torn = size > 0 and os.pread(fd, 1, size - 1) != b'\n'
            os.write(fd, (('\n' if torn else '') + text).encode('utf-8'))
        finally:
            os.close(fd)
    except OSError:
        return False
    return True
