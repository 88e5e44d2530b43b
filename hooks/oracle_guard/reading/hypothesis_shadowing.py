"""Row 28 of check-generator-lock: a tracked module that would import as Hypothesis (or its
pytest plugin) in place of the library, and test code that rebinds the library itself."""
from __future__ import annotations

from oracle_guard.findings import Finding

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    import ast
    from collections.abc import Sequence

    from oracle_guard.reading.import_aliases import ImportAliases
    from oracle_guard.repo.tree_view import TreeView


_SHADOW_NAMES = ('hypothesis', '_hypothesis_pytestplugin')
_SHADOW_FILE = r'^(hypothesis|_hypothesis_pytestplugin)(\.[\w.-]+)?\.(py|pyc|so|pyd)$'


def _shadow_file(part: str) -> bool:
    """Whether a file name imports as hypothesis (or its pytest plugin)."""
    if not part.startswith(_SHADOW_NAMES):
        return False  # every commit: most names are decided without compiling a regex
    import re

    return re.match(_SHADOW_FILE, part) is not None


def shadowing_paths(paths: Sequence[str], has_file) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    """(module location, example path) for tracked files that would import as hypothesis.

    A folder is on ``sys.path`` (pytest's rootdir/basedir insertion, a src layout) when it
    is not itself a package, so ``X/hypothesis.py`` shadows the library unless X has an
    ``__init__.py``.
    """
    found: dict[str, str] = {}
    for path in paths:
        parts = path.split('/')
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            if last and _shadow_file(part):
                module = part.split('.', 1)[0]
            elif not last and part == 'hypothesis' and path.endswith('.py'):
                module = part
            else:
                continue
            folder = '/'.join(parts[:i])
            if folder and has_file(f'{folder}/__init__.py'):
                continue
            found.setdefault(f'{folder}/{module}' if folder else module, path)
            break
    return sorted(found.items())


def check_shadowing(view: TreeView, paths: Sequence[str], tracked: set[str] | None
                    ) -> list[Finding]:
    def has_file(path: str) -> bool:
        return path in tracked if tracked is not None else view.read(path) is not None

    return [
        Finding(example, 1, 1, 'OG607',
                f'{module} would be imported instead of the real hypothesis library, so '
                'no property in this repository could be trusted',
                f'rename or remove {example} (git rm {example})')
        for module, example in shadowing_paths(paths, has_file)
    ]


_PATCH_HINTS = rb'setattr|sys\.modules|\.\w+\s*=(?!=)'


def _hypothesis_name(aliases: ImportAliases, node: ast.AST) -> str | None:
    import ast

    if type(node).__name__ == 'Index':  # Python < 3.9's subscript wrapper
        node = node.value  # type: ignore[attr-defined]
    name = aliases.resolve(node)
    if name and (name == 'hypothesis' or name.startswith('hypothesis.')):
        return name
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
            node.value.split('.')[0] == 'hypothesis':
        return node.value  # monkeypatch.setattr('hypothesis.given', …)
    return None


def patched_hypothesis(path: str, raw: bytes) -> list[Finding]:
    """Row 28 without a file: test code that rebinds the library itself.

    ``hypothesis.given = …``, ``setattr(hypothesis, …)``, ``monkeypatch.setattr(
    'hypothesis.settings', …)`` or ``sys.modules['hypothesis'] = …`` in a conftest or a
    test module can hollow out every property while each one still reads as locked.
    """
    if b'hypothesis' not in raw:
        return []
    import ast
    import re

    from oracle_guard.reading.import_aliases import ImportAliases
    from oracle_guard.reading.scanner import parse_python
    from oracle_guard.reading.scanner import ScanError

    if not re.search(_PATCH_HINTS, raw):
        return []
    try:
        tree = parse_python(raw, path)
    except ScanError:
        return []  # reported by the hooks that must read the file
    aliases = ImportAliases(tree)
    found = []
    for node in ast.walk(tree):
        what = None
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Attribute) and \
                        _hypothesis_name(aliases, target.value):
                    what = f'assigns {_hypothesis_name(aliases, target.value)}.{target.attr}'
                elif isinstance(target, ast.Subscript) and \
                        aliases.resolve(target.value) == 'sys.modules' and \
                        _hypothesis_name(aliases, target.slice):
                    what = f'replaces sys.modules[{_hypothesis_name(aliases, target.slice)!r}]'
        elif isinstance(node, ast.Call) and node.args and (
                (isinstance(node.func, ast.Name) and node.func.id == 'setattr') or
                (isinstance(node.func, ast.Attribute) and node.func.attr == 'setattr')):
            name = _hypothesis_name(aliases, node.args[0])
            if name:
                what = f'patches {name} with setattr'
        if what:
            found.append(Finding(
                path, node.lineno, node.col_offset + 1, 'OG607',  # type: ignore[attr-defined]
                f'test code {what}: the hypothesis library itself is changed, so no '
                'property in this repository could be trusted',
                'remove the patch; configure Hypothesis with settings profiles instead',
            ))
    return found
