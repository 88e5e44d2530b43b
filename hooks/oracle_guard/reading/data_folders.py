"""Which data files are fixtures: the data folders under the tests roots.

A **data folder** is a folder below a tests root (never the root itself) with no Python
file anywhere below it: ``tests/data/``, ``tests/fixtures/``, ``pkg/tests/fixtures/``, a
vendored JSON test suite. What it holds is data the tests read, an answer key like any
fixture, so ``oracle-guard init`` names each one in ``fixtures`` and writes a manifest row
for every file in it. A folder that holds Python code is part of the suite (django's
``tests/fixtures/`` package, a folder of example scripts); its data files, and data files
lying beside test modules, are named by ``init`` as not guarded, with the reason.
"""
from __future__ import annotations

from collections.abc import Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from oracle_guard.config import Config

# Files beside test modules that configure the run or are the guard's own: not data.
NOT_DATA = ('pytest.ini', 'tox.ini', 'setup.cfg', 'conftest.py', 'pyproject.toml')


def _folders(path: str) -> list[str]:
    """The folders a path lies in, outermost first (``a/``, ``a/b/``)."""
    parts = path.split('/')[:-1]
    return ['/'.join(parts[:i]) + '/' for i in range(1, len(parts) + 1)]


def _not_data_folder(folder: str) -> bool:
    name = folder.rstrip('/').rpartition('/')[2]
    return name.startswith('.') or name == '__pycache__'


class DataFolders:
    """The data folders of a repository's files under ``cfg``'s tests roots, and the data
    files init leaves unguarded (each with its reason)."""

    def __init__(self, files: Sequence[str], cfg: Config,
                 links: Sequence[str] = ()) -> None:
        # A folder with a Python file (or a symlink, which cannot be a fixture) below it
        # is not a data folder.
        blocked: set[str] = set()
        for path in (*files, *links):
            if path.endswith('.py') or path in links:
                blocked.update(_folders(path))
        self.folders: list[str] = []
        self.beside_code: list[str] = []
        oracle = set(cfg.oracle_files()) | {cfg.manifest, cfg.traces}
        found: set[str] = set()
        for path in files:
            if path.endswith('.py') or not cfg.is_test(path) or path in oracle \
                    or cfg.is_fixture(path) or path in links:
                continue
            folder = next((f for f in _folders(path)
                           if f not in blocked and _below_root(f, cfg)), None)
            if folder is None or any(_not_data_folder(f) for f in _folders(path)):
                name = path.rpartition('/')[2]
                if folder is None and not name.startswith('.') and name not in NOT_DATA \
                        and not any(_not_data_folder(f) for f in _folders(path)):
                    self.beside_code.append(path)
                continue
            found.add(folder)
        self.folders = sorted(found)


def _below_root(folder: str, cfg: Config) -> bool:
    """Whether ``folder`` lies below a tests root (its parent is the root or inside it)."""
    parent = folder[:-1].rpartition('/')[0]
    return bool(parent) and cfg.is_test(f'{parent}/')
