"""Where the helper modules under the tests roots are, without parsing them (rule 14).

``HelperPaths`` finds the module an import names the way pytest's default import mode
does (``reading/helper_modules.py`` reads what the module binds). ``reaches_helpers``
is the byte prefilter's second question, asked of a test file that spells no silence
word: does it import a helper module that may pass one on? ``from helpers import later``
after ``later = pytest.mark.skip`` in ``tests/helpers.py`` is a skip although the test
file never says so. Neither imports ``ast`` or the scanner: the file's imports are read
from the syntax tree ``compile`` builds in C (``_ast``), and a helper may pass a
silence on only when its bytes hold a silence word, or it imports a helper that may.
"""
from __future__ import annotations

import bisect
import os
import posixpath
import sys

from oracle_guard.reading.silence_prefilter import as_python_reads
from oracle_guard.reading.silence_prefilter import MARKER_WORDS

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from collections.abc import Iterator
    from collections.abc import Sequence

    from oracle_guard.config import Config
    from oracle_guard.repo.tree_view import TreeView

# Imports no helper module can answer: the runners themselves (a module of the
# repository shadowing them is rule 34's) and the standard library.
NOT_HELPERS = frozenset(('pytest', '_pytest', 'unittest', 'hypothesis', '__future__',
                         *getattr(sys, 'stdlib_module_names', ())))
_ONLY_AST = 0x400  # ast.PyCF_ONLY_AST: the tree, from C, without importing ast
_BLOCKS = ('body', 'orelse', 'finalbody', 'handlers', 'cases')

# What a test file's import reaches (``reaches_helpers``)
NO_HELPER, QUIET_HELPER, SILENCING_HELPER = 0, 1, 2


class _Listing:
    """Tracked paths (git's bytes, sorted): which is a file, which a folder."""

    def __init__(self, names: list[bytes]) -> None:
        self.names = names
        self.files = frozenset(names)

    def is_file(self, path: str) -> bool:
        return os.fsencode(path) in self.files

    def is_folder(self, path: str) -> bool:
        prefix = os.fsencode(path) + b'/'
        at = bisect.bisect_left(self.names, prefix)
        return at < len(self.names) and self.names[at].startswith(prefix)


class HelperPaths:
    """The helper modules' paths on one side of the repository (cached listings)."""

    def __init__(self, view: TreeView, is_test_code: Callable[[str], bool],
                 test_roots: Sequence[str], src_roots: Sequence[str] = (),
                 is_src: Callable[[str], bool] | None = None) -> None:
        self.view = view
        self.is_test_code = is_test_code
        # Outside the tests roots, a module of the repository that is not code under test
        # is a helper too (a root testing/harness.py can pass silences on); without
        # ``is_src``, none is.
        self.is_src = is_src
        self.test_roots = list(test_roots)
        self.bases = [r.rstrip('/') for r in src_roots if r.rstrip('/') and '*' not in r]
        self._tracked: _Listing | None = None
        self._outside: dict[str, _Listing] = {}
        # The prefilter asks the working tree by stat, not by listing each folder: on a
        # case-insensitive disk that finds more modules than there are, never fewer.
        self.by_stat = False
        self._folders: dict[str, dict[str, bool]] = {}
        self._modules: dict[tuple[str, str | None, int], str | None] = {}
        # Every candidate of an import, per (folder, name, level): the test files of one
        # folder import the same names (``numpy``), each asking every folder above it.
        self._every: dict[tuple[str, str | None, int], tuple[str, ...]] = {}
        self._stats: dict[str, tuple[bool, bool]] = {}  # by_stat: path -> (file, folder)
        self._tops: dict[tuple[str, str | None], list[str]] = {}
        self._may_silence: dict[str, bool] = {}
        self._helper: dict[str, bool] = {}

    @classmethod
    def of(cls, cfg: Config, view: TreeView):  # type: ignore[no-untyped-def]
        return cls(view, cfg.is_test_code, cfg.test_roots(), cfg.src_roots(), cfg.is_src)

    def is_helper(self, path: str) -> bool:
        """Test code, or a Python module of the repository outside the code under test.
        Kept per path: sympy's ``from sympy import (...)`` of a hundred names asks each
        candidate module of each name, and a glob tests root makes each answer dear."""
        found = self._helper.get(path)
        if found is None:
            found = self._helper[path] = self.is_test_code(path) or (
                self.is_src is not None and path.endswith('.py') and not self.is_src(path))
        return found

    def _in_test_roots(self, path: str) -> bool:
        return any(path.startswith(root) for root in self.test_roots)

    def _above_test_roots(self, path: str) -> bool:
        """A folder a tests root lies in (``pkg`` of ``pkg/testing/``): the listing of the
        roots knows it, though it may be code under test (``from pkg.testing.pytest
        import XFAIL`` walks through it, in a commit as in the working tree)."""
        prefix = f'{path}/'
        return any(root.startswith(prefix) for root in self.test_roots)

    def _outside_kind(self, path: str) -> str | None:
        """'file', 'folder' or None for a path outside the tests roots, on a side read from
        git: one listing per top-level name (``X`` and ``X.py`` together), none for a
        folder of code under test."""
        if self.is_src is None or self.is_src(f'{path}/__init__.py'):
            return None
        if '/' not in path:  # a name at the top (`sympy.py`): git's root tree says
            kinds = self.view.top_kinds()
            kind = kinds.get(path) if kinds is not None else '?'
            if kind != '?':
                return None if kind is None else 'folder' if kind == 'tree' else 'file'
        top = path.split('/', 1)[0]
        name = top[:-3] if top.endswith('.py') else top
        if name not in self._outside:
            top = self.view.top_names()  # one git process for every name (most are absent)
            self._outside[name] = _Listing([]) if top is not None and \
                name not in top and f'{name}.py' not in top else \
                _Listing(self.view.path_names([name, f'{name}.py']))
        listed = self._outside[name]
        if listed.is_file(path):
            return 'file'
        return 'folder' if listed.is_folder(path) else None

    def _folder(self, folder: str) -> dict[str, bool]:
        """Name -> is a folder, of what ``folder`` holds in the working tree (cached)."""
        if folder in self._folders:
            return self._folders[folder]
        found: dict[str, bool] = {}
        try:  # untracked files too (the plugin)
            with os.scandir(os.path.join(self.view.root, folder or '.')) as entries:
                for entry in entries:
                    found[entry.name] = entry.is_dir()
        except OSError:
            pass
        self._folders[folder] = found
        return found

    def _listing(self) -> _Listing:
        """The test code's paths on a side read from git: one listing per run."""
        if self._tracked is None:
            self._tracked = _Listing(self.view.path_names(self.test_roots))
        return self._tracked

    def _stat(self, path: str) -> tuple[bool, bool]:
        """(is a file, is a folder) of the working tree's ``path``, asked once a run."""
        found = self._stats.get(path)
        if found is None:
            import stat

            try:
                mode = os.stat(os.path.join(self.view.root, path)).st_mode
                found = (stat.S_ISREG(mode), stat.S_ISDIR(mode))
            except (OSError, ValueError):
                found = (False, False)
            self._stats[path] = found
        return found

    def is_file(self, path: str) -> bool:
        if self.view.rev is None:
            if self.by_stat:
                return self._stat(path)[0]
            folder, name = posixpath.split(path)
            return self._folder(folder).get(name) is False
        if not self._in_test_roots(path):
            return self._outside_kind(path) == 'file'
        return self._listing().is_file(path)

    def is_folder(self, path: str) -> bool:
        if self.view.rev is None:
            if self.by_stat:
                return self._stat(path)[1]
            folder, name = posixpath.split(path)
            return bool(self._folder(folder).get(name))
        if not self._in_test_roots(path) and not self._above_test_roots(path):
            return self._outside_kind(path) == 'folder'
        return self._listing().is_folder(path)

    def module_file(self, stem: str) -> str | None:
        """``stem.py`` or ``stem/__init__.py`` when it is a helper on this side."""
        for candidate in (f'{stem}.py', posixpath.join(stem, '__init__.py')):
            if self.is_helper(candidate) and self.is_file(candidate):
                return candidate
        return None

    def module(self, folder: str, name: str | None, level: int) -> str | None:
        """The helper module ``import name`` (``from .name``) in ``folder`` finds."""
        key = (folder, name, level)
        if key not in self._modules:
            self._modules[key] = next(self._candidates(folder, name, level), None)
        return self._modules[key]

    def _holding(self, folder: str, top: str | None) -> list[str]:
        """The folders an absolute import in ``folder`` searches: each folder up to the
        top, the top, the ``src`` roots; with ``top`` (the first package of a dotted
        name) in the working tree, only those where it is a folder: no module of that
        import is found anywhere else. Kept per (folder, top): the names a folder's test
        files import from one package share the answer. A side read from git is asked
        base by base, in order, as far as the first module found: past the tests roots
        an answer costs a git process."""
        key = (folder, top)
        found = self._tops.get(key)
        if found is None:
            bases = []
            while folder:
                bases.append(folder)
                folder = posixpath.dirname(folder)
            found = self._tops[key] = [
                base for base in (*bases, '', *self.bases)
                if top is None or self.view.rev is not None or
                self.is_folder(posixpath.join(base, top))]
        return found

    def _candidates(self, folder: str, name: str | None, level: int) -> Iterator[str]:
        """Every helper module the import could name, the one it finds first."""
        if level:
            for _ in range(level - 1):
                if not folder:
                    return  # above the repository
                folder = posixpath.dirname(folder)
            if not name:
                found = self.module_file(folder) if folder else None
                if found is not None:
                    yield found
                return
            bases = [folder]
        else:
            if not name or name.split('.', 1)[0] in NOT_HELPERS:
                return
            bases = self._holding(folder, name.split('.', 1)[0] if '.' in name else None)
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
                    yield found

    # -- the prefilter's question -----------------------------------------------------------

    def reaches_helpers(self, path: str, source: bytes) -> int:
        """NO_HELPER, QUIET_HELPER (it imports helper modules, none of which may pass on a
        silence) or SILENCING_HELPER, for a test file at ``path``. Every module an import
        could name on this side counts, not only the one it finds first: in a commit
        this is asked of the working tree, which holds the index's files and maybe more."""
        imported = self._imported_helpers(path, source)
        if imported is None:
            return SILENCING_HELPER  # not readable here: the scanner judges it (OG307)
        if not imported:
            return NO_HELPER
        seen = {path}
        return SILENCING_HELPER if any(self._passes_on(p, seen) for p in imported) \
            else QUIET_HELPER

    def _passes_on(self, path: str, seen: set[str]) -> bool:
        """Whether the helper at ``path`` may bind a name to a silence: its bytes hold a
        silence word (``parametrize`` too: ``later = pytest.mark.parametrize``), or it
        imports a helper that may."""
        if path in self._may_silence:
            return self._may_silence[path]
        if path in seen:
            return False  # an import cycle: judged where it started
        seen.add(path)
        source = self.view.read(path)
        if source is None:
            verdict = False
        else:
            text = as_python_reads(source)
            if any(word in text for word in MARKER_WORDS):
                verdict = True
            else:
                imported = self._imported_helpers(path, source)
                verdict = imported is None or any(self._passes_on(p, seen) for p in imported)
        self._may_silence[path] = verdict
        return verdict

    def _imported_helpers(self, path: str, source: bytes) -> list[str] | None:
        """The helper modules (paths) the file's imports could name; None when the file
        cannot be compiled here."""
        imports = imports_of(source, path)
        if imports is None:
            return None
        folder = posixpath.dirname(path)
        found: dict[str, None] = {}
        for level, module, names in imports:
            wanted = [module] if module else []
            if module and not level:  # `import a.b.c` runs a/__init__.py and a/b/__init__.py
                parts = module.split('.')
                wanted = ['.'.join(parts[:i]) for i in range(1, len(parts) + 1)]
            if level and not module:
                wanted.append(None)  # `from . import x`: the package's __init__.py
            for name in names:  # `from pkg import sub`: a submodule
                if name != '*':
                    wanted.append(f'{module}.{name}' if module else name)
            for name in wanted:
                key = (folder, name, level)
                every = self._every.get(key)
                if every is None:
                    every = self._every[key] = tuple(self._candidates(folder, name, level))
                for candidate in every:
                    if candidate != path:
                        found[candidate] = None
        return list(found)


Import = tuple  # (level, module or None, imported names)


def imports_of(source: bytes, path: str = '<test>') -> list[Import] | None:
    """(level, module, imported names) of every import statement at any depth, and maybe
    of text that only looks like one (in a string); None when the bytes do not compile.
    Without the word ``import`` there is none to read. The bytes are read first: the
    first ``compile`` of a process costs as much as the whole commit's other work."""
    text = as_python_reads(source)
    if b'import' not in text:
        return []
    found = _imports_in_bytes(text)
    return found if found is not None else _compiled_imports(source, path)


_NAME_BYTES = frozenset(b'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_'
                        ) | frozenset(range(0x80, 0x100))
_BLANKS = b' \t\f'
_ENDS = (b'\n', b'\r', b';', b':')


def _imports_in_bytes(text: bytes) -> list[Import] | None:
    """Every ``import`` keyword of the text and the statement it begins or ends, without
    compiling: a line continuation is joined first, a statement begins after a line end,
    ``;`` or ``:``. None when a statement is not one this reading is sure of."""
    for joint in (b'\\\r\n', b'\\\n', b'\\\r'):
        text = text.replace(joint, b' ')
    found: list[Import] = []
    at = text.find(b'import')
    while at >= 0:
        end = at + 6
        before = text[at - 1] if at else 0x20
        after = text[end] if end < len(text) else 0x20
        if before in _NAME_BYTES or after in _NAME_BYTES:
            at = text.find(b'import', end)
            continue  # part of a name (import_module, __import__); `from .import x` is not
        start = max(text.rfind(end_byte, 0, at) for end_byte in _ENDS) + 1
        head = text[start:at].strip(_BLANKS)
        names, end = _imported_names(text, end)
        if head.startswith(b'#'):
            pass  # a comment
        elif not head:
            for name in names:
                dotted = _dotted(_before_as(name))
                if dotted is None:
                    return None
                found.append((0, dotted, ()))
        elif head.startswith(b'from') and (len(head) == 4 or head[4] not in _NAME_BYTES):
            module = head[4:].strip(_BLANKS)
            level = 0
            while module.startswith(b'.'):
                level += 1
                module = module[1:].lstrip(_BLANKS)
            dotted = _dotted(module) if module else ''
            if dotted is None or (not dotted and not level):
                return None
            imported = []
            for name in names:
                first = _before_as(name)
                if first == b'*':
                    imported.append('*')
                elif _dotted(first):
                    imported.append(_dotted(first))  # type: ignore[arg-type]
            found.append((level, dotted or None, tuple(imported)))
        at = text.find(b'import', end)
    return found


def _imported_names(text: bytes, at: int) -> tuple[list[bytes], int]:
    """The comma-separated names after ``import`` (a parenthesised list may span lines,
    comments in it dropped), and where they end."""
    pos = at
    while pos < len(text) and text[pos] in _BLANKS:
        pos += 1
    if pos < len(text) and text[pos] == 0x28:  # (
        close = text.find(b')', pos)
        close = len(text) if close < 0 else close
        body = b'\n'.join(line.split(b'#', 1)[0] for line in
                          text[pos + 1:close].replace(b'\r', b'\n').split(b'\n'))
        end = close
    else:
        end = len(text)
        for stop in (b'\n', b'\r', b';', b'#'):
            found = text.find(stop, pos, end)
            if found >= 0:
                end = found
        body = text[pos:end]
    names = [part.strip() for part in body.replace(b'\n', b' ').split(b',')]
    return [n for n in names if n], end


def _before_as(name: bytes) -> bytes:
    """``a . b as c`` -> ``a.b``: the tokens before ``as``, joined."""
    tokens = name.split()
    if b'as' in tokens:
        tokens = tokens[:tokens.index(b'as')]
    return b''.join(tokens)


def _dotted(name: bytes) -> str | None:
    """``a . b`` as ``a.b`` when every part is an identifier, else None."""
    parts = [part.strip(_BLANKS) for part in name.split(b'.')]
    try:
        text = [part.decode('utf-8') for part in parts]
    except UnicodeDecodeError:
        return None
    return '.'.join(text) if all(part.isidentifier() for part in text) else None


def _compiled_imports(source: bytes, path: str) -> list[Import] | None:
    if source.startswith(b'\xef\xbb\xbf'):
        source = source[3:]
    try:
        if b'\\' in source:  # a SyntaxWarning for an odd escape is not ours to print
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter('ignore')
                tree = compile(source, path, 'exec', _ONLY_AST, dont_inherit=True)
        else:
            tree = compile(source, path, 'exec', _ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    found: list[tuple[int, str | None, tuple[str, ...]]] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        for block in _BLOCKS:
            for child in getattr(node, block, None) or ():
                kind = type(child).__name__
                if kind == 'Import':
                    found += [(0, alias.name, ()) for alias in child.names]
                elif kind == 'ImportFrom':
                    found.append((child.level or 0, child.module,
                                  tuple(alias.name for alias in child.names)))
                else:
                    todo.append(child)
    return found
