"""Helper modules under the tests roots, and the runner names they pass on (rule 14).

``pyflakes/test/harness.py`` says ``skip = unittest.skip``, and its tests write
``from pyflakes.test.harness import TestCase, skip`` and then ``@skip("todo")``: that is
``unittest.skip``, a silence, however many modules it went through. The scanner asks
this module what a name imported from a helper is bound to there: a name of pytest's or
unittest's (``unittest.skip``, ``pytest.mark``, ``pytest``), or another helper module.

A helper is a module of the repository that is test code (under the tests roots),
found the way pytest's default import mode finds it: a relative import from the
importing file's package; an absolute one below one of the importing file's folders or
the repository's top, or below a ``src`` root. Every helper is read from the same side
as the file being judged (the index, a commit, or the working tree), so a commit, a
range, history mode and the gate agree (rule 50). Each helper is parsed once per run,
and a module reached again while it is being read (an import cycle) binds nothing more.
A module that is not test code (the package under ``src``, an installed library) is
never read here.
"""
from __future__ import annotations

import ast
import os
import posixpath
import sys

from oracle_guard.reading.scanner import HELPER
from oracle_guard.reading.scanner import ImportAliases
from oracle_guard.reading.scanner import is_runner_object
from oracle_guard.reading.scanner import parse_python
from oracle_guard.reading.scanner import ScanError

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from collections.abc import Sequence

    from oracle_guard.config import Config
    from oracle_guard.repo.gitrepo import TreeView

# Imports no helper module can answer: the runners themselves (a module of the
# repository shadowing them is rule 34's) and the standard library.
_NOT_HELPERS = frozenset(('pytest', '_pytest', 'unittest', 'hypothesis', '__future__',
                          *getattr(sys, 'stdlib_module_names', ())))


class HelperModules:
    """The helper modules of one side of the repository, read lazily, once each."""

    def __init__(self, view: TreeView, is_test_code: Callable[[str], bool],
                 test_roots: Sequence[str], src_roots: Sequence[str] = ()) -> None:
        self.view = view
        self.is_test_code = is_test_code
        self.test_roots = list(test_roots)
        self.bases = [r.rstrip('/') for r in src_roots if r.rstrip('/') and '*' not in r]
        self._tracked: dict[str, dict[str, bool]] | None = None
        self._folders: dict[str, dict[str, bool]] = {}
        self._modules: dict[tuple[str, str | None, int], str | None] = {}
        self._exports: dict[str, dict[str, str]] = {}
        self._all: dict[str, tuple[str, ...] | None] = {}
        self._reading: set[str] = set()

    @classmethod
    def of(cls, cfg: Config, view: TreeView) -> HelperModules:
        return cls(view, cfg.is_test_code, cfg.test_roots(), cfg.src_roots())

    def seen_from(self, path: str) -> ImportingFile:
        return ImportingFile(self, path)

    def _folder(self, folder: str) -> dict[str, bool]:
        """Name -> is a folder, of what ``folder`` holds on this side (cached)."""
        if folder in self._folders:
            return self._folders[folder]
        found: dict[str, bool] = {}
        if self.view.rev is None:  # the working tree, untracked files too (the plugin)
            try:
                with os.scandir(os.path.join(self.view.root, folder or '.')) as entries:
                    for entry in entries:
                        found[entry.name] = entry.is_dir()
            except OSError:
                pass
        else:
            if self._tracked is None:  # one listing per run, of the test code only
                self._tracked = self._listing()
            found = self._tracked.get(folder, {})
        self._folders[folder] = found
        return found

    def _listing(self) -> dict[str, dict[str, bool]]:
        tree: dict[str, dict[str, bool]] = {}
        for path in (self.view.paths(self.test_roots) if self.test_roots else ()):
            folder, name = posixpath.split(path)
            tree.setdefault(folder, {})[name] = False
            while folder:
                folder, name = posixpath.split(folder)
                tree.setdefault(folder, {})[name] = True
        return tree

    def is_file(self, path: str) -> bool:
        folder, name = posixpath.split(path)
        return self._folder(folder).get(name) is False

    def is_folder(self, path: str) -> bool:
        folder, name = posixpath.split(path)
        return bool(self._folder(folder).get(name))

    def module_file(self, stem: str) -> str | None:
        """``stem.py`` or ``stem/__init__.py`` when it is test code on this side."""
        for candidate in (f'{stem}.py', posixpath.join(stem, '__init__.py')):
            if self.is_file(candidate) and self.is_test_code(candidate):
                return candidate
        return None

    def module(self, folder: str, name: str | None, level: int) -> str | None:
        """The helper module ``import name`` (``from .name``) in ``folder`` finds."""
        key = (folder, name, level)
        if key not in self._modules:
            self._modules[key] = self._find(folder, name, level)
        return self._modules[key]

    def _find(self, folder: str, name: str | None, level: int) -> str | None:
        if level:
            for _ in range(level - 1):
                if not folder:
                    return None  # above the repository
                folder = posixpath.dirname(folder)
            if not name:
                return self.module_file(folder) if folder else None
            bases = [folder]
        else:
            if not name or name.split('.', 1)[0] in _NOT_HELPERS:
                return None
            bases = []
            while folder:
                bases.append(folder)
                folder = posixpath.dirname(folder)
            bases += ['', *self.bases]
        *packages, last = name.split('.')
        for base in bases:
            stem = base
            for part in packages:  # each package a folder: most bases fail at the first
                stem = posixpath.join(stem, part)
                if not self.is_folder(stem):
                    break
            else:
                found = self.module_file(posixpath.join(stem, last))
                if found is not None:
                    return found
        return None

    def exports(self, path: str) -> dict[str, str]:
        """Name -> what the helper binds it to, for the names worth passing on: pytest's
        and unittest's objects, and helper modules."""
        if path in self._exports:
            return self._exports[path]
        if path in self._reading:
            return {}  # an import cycle: what is being read binds nothing yet
        self._reading.add(path)
        found: dict[str, str] = {}
        names: tuple[str, ...] | None = None
        try:
            source = self.view.read(path)
            tree = parse_python(source, path) if source is not None else None
            if tree is not None:
                aliases = ImportAliases(tree, self.seen_from(path))
                found = {name: target for name, target in aliases.names.items()
                         if is_runner_object(target) or target.startswith(HELPER)}
                names = _declared_all(tree)
        except (ScanError, RecursionError):
            pass  # check-named-freezes reports the helper itself (OG307)
        finally:
            self._reading.discard(path)
        self._exports[path] = found
        self._all[path] = names
        return found

    def star(self, path: str) -> dict[str, str]:
        """What ``from helper import *`` binds: ``__all__``, else the public names."""
        found = self.exports(path)
        names = self._all.get(path)
        if names is not None:
            return {n: t for n, t in found.items() if n in names}
        return {n: t for n, t in found.items() if not n.startswith('_')}


class ImportingFile:
    """The helper modules as one test file imports them."""

    def __init__(self, helpers: HelperModules, path: str) -> None:
        self.helpers = helpers
        self.path = path

    def module(self, name: str | None, level: int) -> str | None:
        """The path of the helper module an import names, or None."""
        found = self.helpers.module(posixpath.dirname(self.path), name, level)
        return None if found == self.path else found

    def export(self, path: str, name: str) -> str | None:
        """What ``name`` is in the helper at ``path``: a runner name, a helper module (a
        name it imports, or its submodule), or None."""
        helpers = self.helpers
        found = helpers.exports(path).get(name)
        if found is not None:
            return found
        if posixpath.basename(path) == '__init__.py':
            sub = helpers.module_file(posixpath.join(posixpath.dirname(path), name))
            return None if sub is None else HELPER + sub
        return None

    def star(self, path: str) -> dict[str, str]:
        return self.helpers.star(path)


def _declared_all(tree: ast.Module) -> tuple[str, ...] | None:
    """A module-level ``__all__`` of string literals, or None."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == '__all__' for t in node.targets) and \
                isinstance(node.value, (ast.List, ast.Tuple)):
            return tuple(e.value for e in node.value.elts
                         if isinstance(e, ast.Constant) and isinstance(e.value, str))
    return None
