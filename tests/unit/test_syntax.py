"""``reading/syntax`` is the standard ``ast`` module for what the scanner asks of it.

The scanner parses and walks with ``reading/syntax`` (``_ast`` alone: ``import ast`` costs
a hook more than its work on a one-file commit). Held here to ``ast`` itself on real
files: this repository's own sources and the standard library's.
"""
from __future__ import annotations

import ast
import glob
import os
import sysconfig

import pytest

import oracle_guard
from oracle_guard.reading import syntax

# The checkout: oracle_guard is imported from its hooks/ folder.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(oracle_guard.__file__))))


def real_files() -> list[str]:
    ours = glob.glob(os.path.join(ROOT, 'hooks', '**', '*.py'), recursive=True) + \
        glob.glob(os.path.join(ROOT, 'tests', '**', '*.py'), recursive=True)
    stdlib = sysconfig.get_paths()['stdlib']
    theirs = [os.path.join(stdlib, name) for name in
              ('ast.py', 'typing.py', 'dataclasses.py', 'argparse.py', 'inspect.py')]
    return sorted(ours)[:60] + theirs


FILES = real_files()


@pytest.fixture(params=FILES, ids=lambda p: os.path.relpath(p, ROOT))
def source(request: pytest.FixtureRequest) -> tuple[str, bytes]:
    with open(request.param, 'rb') as f:
        return request.param, f.read()


def test_parse_builds_the_tree_ast_parse_builds(source: tuple[str, bytes]) -> None:
    path, data = source
    ours, theirs = syntax.parse(data, path), ast.parse(data, path)
    assert type(ours) is ast.Module
    assert ast.dump(ours, include_attributes=True) == ast.dump(theirs, include_attributes=True)


def test_walk_and_iter_child_nodes_visit_what_ast_visits_in_its_order(
        source: tuple[str, bytes]) -> None:
    path, data = source
    tree = ast.parse(data, path)
    assert [id(n) for n in syntax.walk(tree)] == [id(n) for n in ast.walk(tree)]
    for node in ast.walk(tree):
        assert [id(c) for c in syntax.iter_child_nodes(node)] == \
            [id(c) for c in ast.iter_child_nodes(node)]


def test_node_visitor_dispatches_as_ast_node_visitor_does(source: tuple[str, bytes]) -> None:
    path, data = source
    tree = ast.parse(data, path)

    def recorder(base: type) -> list[str]:
        seen: list[str] = []

        class Visitor(base):  # type: ignore[misc, valid-type]
            def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
                seen.append(f'def {node.name}')
                self.generic_visit(node)

            def visit_Call(self, node: ast.Call) -> None:
                seen.append(f'call {node.lineno}:{node.col_offset}')
                self.generic_visit(node)

            def visit_Constant(self, node: ast.Constant) -> None:
                seen.append(f'constant {node.lineno}')

            def generic_visit(self, node: ast.AST) -> None:
                seen.append(type(node).__name__)
                super().generic_visit(node)

        Visitor().visit(tree)
        return seen

    assert recorder(syntax.NodeVisitor) == recorder(ast.NodeVisitor)


@pytest.mark.parametrize('bad', [b'def f(:\n', b'x = (\n', b'\xff\xfe', b'if x:\npass\n',
                                 b'# -*- coding: latin-1 -*-\nx = "\xe9"\n', b'a\0b'])
def test_bad_sources_fail_or_parse_as_they_do_in_ast(bad: bytes) -> None:
    try:
        expected = ast.dump(ast.parse(bad, 'f.py'))
    except (SyntaxError, ValueError) as exc:
        with pytest.raises(type(exc)) as raised:
            syntax.parse(bad, 'f.py')
        assert getattr(raised.value, 'lineno', None) == getattr(exc, 'lineno', None)
    else:
        assert ast.dump(syntax.parse(bad, 'f.py')) == expected


def test_the_scanner_and_the_properties_hook_do_not_import_ast_or_re(tmp_path) -> None:
    # What the module is for: a hook that parses property modules pays for `_ast` only.
    import subprocess
    import sys
    code = ('import sys\n'
            'from oracle_guard.reading.scanner import parse_python, scan_tests\n'
            'from oracle_guard.hooks.check_properties_present import module_verdict\n'
            'verdict, parsed = module_verdict(b"def test_x():\\n    assert 1 + 1 == 2\\n",'
            ' "tests/properties/test_x.py")\n'
            'assert parsed and tuple(verdict.real) == ("test_x",), verdict\n'
            'print(sorted(m for m in ("ast", "re", "enum") if m in sys.modules))\n')
    # -S: no site-packages, whose .pth files may import anything; the package from source.
    env = {**os.environ, 'PYTHONPATH': os.path.join(ROOT, 'hooks')}
    out = subprocess.run([sys.executable, '-S', '-c', code], capture_output=True, text=True,
                         cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == '[]', out.stdout + out.stderr


def test_get_source_segment_gives_what_ast_gives(source: tuple[str, bytes]) -> None:
    path, data = source
    text = data.decode('utf-8')
    tree = ast.parse(data, path)
    nodes = list(ast.walk(tree))
    for node in nodes[::max(1, len(nodes) // 150)]:
        assert syntax.get_source_segment(text, node) == ast.get_source_segment(text, node)


@pytest.mark.parametrize('text', ['', 'x = 1', 'x = 1\n', 'a = (1,\r\n 2)\r\n', 'a = (\r1,\r2)',
                                  'a = 1\n\x0cb = 2\n', 'é = "\u2028"\nf(é,\n  é)\n', '\n\n'])
def test_split_lines_splits_where_the_parser_counts_lines(text: str) -> None:
    lines = ast._splitlines_no_ff(text)  # type: ignore[attr-defined]
    if lines[-1:] == ['']:  # Python 3.13's splitter ends with the empty match at the text's end
        lines.pop()
    assert syntax.split_lines(text) == lines
    if text:
        tree = ast.parse(text)
        for node in ast.walk(tree):
            assert syntax.get_source_segment(text, node) == ast.get_source_segment(text, node)
