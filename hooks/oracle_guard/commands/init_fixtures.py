"""What ``oracle-guard init`` guards as fixtures besides its own fixture folder.

The data folders under the tests roots (``reading.data_folders``) are named in ``fixtures``
next to the folder init creates, so each of their files gets a manifest row in the
adoption commit and an edited byte in one fails the hooks and the gate like any fixture.
``--leave-out DIR`` keeps one out; data files beside test modules are named as not guarded.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from oracle_guard.config import Config
from oracle_guard.config import config_from_table
from oracle_guard.config import normalize_path
from oracle_guard.findings import ConfigError
from oracle_guard.reading.data_folders import DataFolders

# Data files named in a message before "(+N more)".
SHOWN = 5
DRAFT_KEYS = ('tests', 'properties', 'fixtures', 'manifest', 'traces', 'ledger', 'domain-lock',
              'baseline')


def _shown(paths: Sequence[str]) -> str:
    extra = f' (+{len(paths) - SHOWN} more)' if len(paths) > SHOWN else ''
    return ', '.join(paths[:SHOWN]) + extra


def data_folders(root: str, files: Sequence[str], cfg: Config) -> DataFolders:
    links = [f for f in files if cfg.is_test(f) and os.path.islink(os.path.join(root, f))]
    return DataFolders(files, cfg, links)


def guard_data_folders(root: str, files: Sequence[str], layout: dict[str, Any],
                       values: dict[str, Any], leave_out: Sequence[str],
                       said: list[str]) -> None:
    """Add the data folders under the tests roots to ``layout['fixtures']`` (the table
    init writes), and say which ones it guards, which it leaves out and why."""
    draft = config_from_table(root, {k: values[k] for k in DRAFT_KEYS})
    found = data_folders(root, files, draft)
    left = [normalize_path(v, folder=True, source='command line', line=0, key='leave-out')
            for v in leave_out]
    for folder in left:
        if folder not in found.folders:
            raise ConfigError('command line', 0, f'--leave-out {folder}: not a data folder '
                              'init found under the tests roots',
                              f'data folders: {", ".join(found.folders) or "none"}')
    guarded = [f for f in found.folders if f not in left]
    if guarded:
        layout['fixtures'] = [*draft.fixtures, *guarded]
        said.append(f'fixtures: {", ".join(layout["fixtures"])} (each data folder under the '
                    'tests roots, a folder with no Python file below it, is a fixture folder: '
                    'every file in it gets a manifest row; leave one out with '
                    '`oracle-guard init --leave-out DIR`)')
    for folder in left:
        said.append(f'{folder}: a data folder left out (--leave-out), not guarded: an edit '
                    'of its files passes the hooks and the gate')
    if found.beside_code:
        said.append(f'{len(found.beside_code)} data file(s) beside test code, not guarded: '
                    f'{_shown(found.beside_code)} (their folder holds Python code, so they '
                    'are not a data folder; move them into one (tests/data/) and name it in '
                    '`fixtures` to guard them)')


def unguarded_data_folders(root: str, files: Sequence[str], cfg: Config,
                           leave_out: Sequence[str]) -> list[str]:
    """Notes on the data folders an existing ``[tool.oracle-guard]`` table leaves out."""
    left = {normalize_path(v, folder=True, source='command line', line=0, key='leave-out')
            for v in leave_out}
    missing = [f for f in data_folders(root, files, cfg).folders if f not in left]
    if not missing:
        return []
    return [f'data folder(s) under the tests roots not guarded: {_shown(missing)} '
            f'([tool.oracle-guard] names fixtures = {list(cfg.fixtures)}); to guard them add '
            'them to `fixtures` in a commit of their own, then run `oracle-guard fixtures add '
            'DIR --source human --purpose "…"`']
