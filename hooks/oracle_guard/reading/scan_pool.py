"""Scanning many test files on every core: ``--all-files`` and history mode.

A run over the whole tree parses every test file whose scan is not in the scan cache (all
of them with the cache off, as in CI). Above ``MIN_BYTES`` of such files, the scans are
split over one process per core the run may use: each is a fork of the hook's own
process, so it scans with the same configuration, the same helper modules and the same
judgement of environment conditions, and hands back each file's scan as the scan cache
writes it (``scan_cache.encode_scan``). What the hook then judges and prints is what the
one-process path gives: a scan read from the cache is the same record.

Below the size, or where no fork is available (Windows), or when a worker dies, the
files are scanned in this process. ``ORACLE_GUARD_SCAN_PROCESSES=N`` sets the number of
processes (``1``: one process) and drops the size bar.
"""
from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from collections.abc import Sequence

    from oracle_guard.reading.scan_cache import FileScan

ENV = 'ORACLE_GUARD_SCAN_PROCESSES'
# Below this many bytes to parse, starting the workers (a fork each, the results sent
# back) costs about what the second core saves.
MIN_BYTES = 512 << 10
# Files handed to a worker at once: few enough that the cores finish together.
_CHUNK = 16

# The scan of one file, set before the workers are forked (they inherit it).
_SCAN: Callable[[str, bytes], FileScan] | None = None


def processes(total_bytes: int, environ: dict[str, str] | None = None) -> int:
    """How many processes scan ``total_bytes`` of test files (1: this one alone)."""
    env = os.environ if environ is None else environ
    choice = env.get(ENV, '').strip()
    if choice:
        try:
            return max(1, int(choice))
        except ValueError:
            pass  # not a number: as if unset
    if total_bytes < MIN_BYTES:
        return 1
    try:
        cores = len(os.sched_getaffinity(0))  # the cores this run may use
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, total_bytes // MIN_BYTES))


def _scan_chunk(items: list[tuple[str, bytes]]) -> list[tuple[str, bool]]:
    """In a worker: each file's scan as the scan cache writes it, and ``uses_helpers``."""
    from oracle_guard.reading.scan_cache import encode_scan

    assert _SCAN is not None  # set by scan_many before the fork
    out = []
    for path, source in items:
        scan = _SCAN(path, source)
        out.append((encode_scan(scan), scan.uses_helpers))
    return out


def scan_many(items: Sequence[tuple[str, bytes]], scan: Callable[[str, bytes], FileScan]
              ) -> dict[str, FileScan] | None:
    """Path -> scan of each ``(path, source)``, made by worker processes; None when they
    would not pay (or cannot run): the caller then scans in its own process."""
    global _SCAN

    count = processes(sum(len(source) for _, source in items))
    if count < 2 or len(items) < 2:
        return None
    import multiprocessing

    if 'fork' not in multiprocessing.get_all_start_methods():
        return None
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    from oracle_guard.reading.scan_cache import decode_scan

    # Largest first: a big file handed out last would leave the other cores idle.
    ordered = sorted(items, key=lambda item: -len(item[1]))
    # The smallest scanned here first: the modules a scan imports, and what it learns of
    # the helper modules, are then inherited by every worker instead of made in each.
    path, source = ordered.pop()
    found: dict[str, FileScan] = {path: scan(path, source)}
    chunks = [ordered[i:i + _CHUNK] for i in range(0, len(ordered), _CHUNK)]
    _SCAN = scan
    # What this process holds now is never garbage in a worker: frozen, the workers'
    # collections do not walk it, nor copy the memory pages they would write to.
    import gc

    gc.freeze()
    try:
        with ProcessPoolExecutor(count, mp_context=multiprocessing.get_context('fork')) as pool:
            for chunk, results in zip(chunks, pool.map(_scan_chunk, chunks)):
                for (path, _source), (raw, uses_helpers) in zip(chunk, results):
                    decoded = decode_scan(raw)
                    if decoded is None:  # cannot happen: what encode_scan wrote
                        return None
                    decoded.uses_helpers = uses_helpers
                    found[path] = decoded
    except (BrokenProcessPool, OSError):
        return None  # a worker died (memory, a signal): this process scans them all
    finally:
        _SCAN = None
        gc.unfreeze()
    return found


def scan_misses(sources: dict[str, bytes | None], cache,  # type: ignore[no-untyped-def]
                scan: Callable[[str, bytes], FileScan]) -> dict[str, FileScan]:
    """Path -> scan of each readable file the scan ``cache`` (a ScanCache, or None when
    off) holds no entry for, made by worker processes; {} when they would not pay: the
    caller scans those in its own process."""
    items = [(path, source) for path, source in sources.items() if source is not None and
             (cache is None or cache.key(source) not in cache.known)]
    return scan_many(items, scan) or {}
