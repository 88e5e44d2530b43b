"""The test interpreter itself, before and after the pull request's code runs (rule 46).

The install step can replace the test environment's ``bin/python`` (in a venv, a link) with
a wrapper that runs code of its own before it hands over, or answers the gate's probes
itself; no ``RECORD`` lists it. The gate notes what ``--test-python`` is before the install
step (each link along the way and where it points, the digest of the file it ends at, the
venv's ``pyvenv.cfg``) and compares it after the install step and after the test command:

OG726 the test interpreter is not what it was before the install step
"""
from __future__ import annotations

import hashlib
import os

from oracle_guard.findings import Finding


def identity(python: str) -> tuple[str, ...]:
    """What ``python`` is: every link from it on and its target, the sha256 of the file it
    ends at, and the bytes of the ``pyvenv.cfg`` beside it or one folder up."""
    seen: list[str] = []
    path = os.path.abspath(python)
    for _ in range(40):  # a chain of links, as the kernel follows it
        if not os.path.islink(path):
            break
        target = os.readlink(path)
        seen.append(f'{path} -> {target}')
        path = os.path.normpath(os.path.join(os.path.dirname(path), target))
    digest = hashlib.sha256()
    try:
        with open(path, 'rb') as f:
            for block in iter(lambda: f.read(1 << 20), b''):
                digest.update(block)
        seen.append(f'{path} sha256 {digest.hexdigest()}')
    except OSError as exc:
        seen.append(f'{path} unreadable: {exc.strerror}')
    here = os.path.dirname(os.path.abspath(python))
    for folder in (here, os.path.dirname(here)):
        cfg = os.path.join(folder, 'pyvenv.cfg')
        try:
            with open(cfg, 'rb') as f:
                seen.append(f'{cfg}: {f.read().decode("utf-8", "replace")}')
        except OSError:
            continue
    return tuple(seen)


def changed(python: str, before: tuple[str, ...], when: str) -> list[Finding]:
    """OG726 when ``python`` is not what ``before`` says it was."""
    now = identity(python)
    if now == before:
        return []
    first = next((b for a, b in zip(before, now) if a != b), None) or \
        (now[len(before)] if len(now) > len(before) else before[len(now)])
    shown = first if len(first) < 120 else first[:117] + '...'
    return [Finding('.', 1, 1, 'OG726', f'the test machinery was changed: the test interpreter '
                    f'{python} is not what it was before the install step ({shown}) ({when})',
                    'reinstall the test environment; a pull request must not replace the '
                    'interpreter its tests run in')]
