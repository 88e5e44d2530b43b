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
import posixpath

from oracle_guard.reading.helper_paths import HelperPaths
from oracle_guard.reading.import_aliases import HELPER
from oracle_guard.reading.import_aliases import ImportAliases
from oracle_guard.reading.import_aliases import is_runner_object
from oracle_guard.reading.scanner import parse_python
from oracle_guard.reading.scanner import ScanError

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from collections.abc import Sequence

    from oracle_guard.repo.tree_view import TreeView


class HelperModules(HelperPaths):
    """The helper modules of one side of the repository, read lazily, once each."""

    def __init__(self, view: TreeView, is_test_code: Callable[[str], bool],
                 test_roots: Sequence[str], src_roots: Sequence[str] = (),
                 is_src: Callable[[str], bool] | None = None) -> None:
        super().__init__(view, is_test_code, test_roots, src_roots, is_src)
        self._exports: dict[str, dict[str, str]] = {}
        self._all: dict[str, tuple[str, ...] | None] = {}
        self._reading: set[str] = set()

    def seen_from(self, path: str) -> ImportingFile:
        return ImportingFile(self, path)

    def recorded_from(self, path: str) -> RecordingFile:
        """``seen_from``, keeping every question asked and its answer (the scan cache)."""
        return RecordingFile(self, path)

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

    def owns(self, path: str, name: str) -> bool:
        """Whether ``name`` is a class of the helper with attributes it exports."""
        return any(n.startswith(f'{name}.') for n in self.exports(path))

    def star(self, path: str) -> dict[str, str]:
        """What ``from helper import *`` binds: ``__all__``, else the public names (a
        class's attributes, ``H.later``, with their class)."""
        found = self.exports(path)
        names = self._all.get(path)
        if names is not None:
            return {n: t for n, t in found.items() if n.split('.', 1)[0] in names}
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

    def owns(self, path: str, name: str) -> bool:
        return self.helpers.owns(path, name)

    def star(self, path: str) -> dict[str, str]:
        return self.helpers.star(path)


class RecordingFile(ImportingFile):
    """An ImportingFile that keeps the questions the scanner asked of the helpers and
    their answers, in order. What a test file's scan finds is a function of its bytes and
    of these answers alone (the scanner reaches the helpers through these four questions
    only), so a cached scan holds while ``answers_hold`` says the helpers answer the same
    (rule 14: the scan cache of check-named-freezes)."""

    def __init__(self, helpers: HelperModules, path: str) -> None:
        super().__init__(helpers, path)
        self.asked: list[list] = []  # [question, arguments..., answer]

    def module(self, name: str | None, level: int) -> str | None:
        found = super().module(name, level)
        self.asked.append(['module', name, level, found])
        return found

    def export(self, path: str, name: str) -> str | None:
        found = super().export(path, name)
        self.asked.append(['export', path, name, found])
        return found

    def owns(self, path: str, name: str) -> bool:
        found = super().owns(path, name)
        self.asked.append(['owns', path, name, found])
        return found

    def star(self, path: str) -> dict[str, str]:
        found = super().star(path)
        self.asked.append(['star', path, sorted([k, v] for k, v in found.items())])
        return found


def answers_hold(importing: ImportingFile, asked: list) -> bool:
    """Whether the helpers, as ``importing`` sees them now, answer every question of
    ``asked`` (a RecordingFile's) as they did then."""
    for entry in asked:
        if not isinstance(entry, list) or not entry:
            return False
        question, *arguments = entry
        try:
            if question == 'module' and len(arguments) == 3:
                now = importing.module(arguments[0], arguments[1])
            elif question in ('export', 'owns') and len(arguments) == 3:
                now = getattr(importing, question)(arguments[0], arguments[1])
            elif question == 'star' and len(arguments) == 2:
                now = sorted([k, v] for k, v in importing.star(arguments[0]).items())
                if now != arguments[1]:
                    return False
                continue
            else:
                return False
        except (TypeError, AttributeError, ValueError):
            return False  # not a record this scanner writes
        if now != arguments[-1]:
            return False
    return True


def _declared_all(tree: ast.Module) -> tuple[str, ...] | None:
    """A module-level ``__all__`` of string literals, or None."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == '__all__' for t in node.targets) and \
                isinstance(node.value, (ast.List, ast.Tuple)):
            return tuple(e.value for e in node.value.elts
                         if isinstance(e, ast.Constant) and isinstance(e.value, str))
    return None
