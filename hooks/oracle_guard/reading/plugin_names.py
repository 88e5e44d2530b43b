"""The modules a conftest or a test module names in ``pytest_plugins``.

pytest imports each of them as a plugin when it loads the file, so they are that file's
helpers as much as the modules it imports: a reference tree holds them beside it
(``gate/reference.py``), or the base oracle cannot even start there.
"""
from __future__ import annotations

import ast


def plugin_names(tree: ast.Module) -> list[str]:
    """The module names a module-level ``pytest_plugins`` binds (``= "a"``, ``= ["a", "b"]``,
    a tuple, ``+=``, an annotated assignment): its string literals; what is computed names
    nothing a reader can follow."""
    found: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == 'pytest_plugins' for t in node.targets):
            value = node.value
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and \
                isinstance(node.target, ast.Name) and node.target.id == 'pytest_plugins':
            value = node.value
        else:
            continue
        items = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
        found += [item.value for item in items
                  if isinstance(item, ast.Constant) and isinstance(item.value, str)]
    return found
