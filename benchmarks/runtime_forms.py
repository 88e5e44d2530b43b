"""Static forms against live forms under the installed Hypothesis and Python.

Usage (any environment with hypothesis installed; oracle-guard importable)::

    python benchmarks/runtime_forms.py

Writes two property modules to a temporary folder (every strategy kind; every default),
reads their forms statically as ``oracle-guard lock`` does, imports them, builds the live
forms from the strategy objects as the pytest plugin does, and prints every place where
the plugin would see a difference (there must be none). Exit 1 on a difference.
"""
from __future__ import annotations

import ast
import importlib.util
import os
import sys
import tempfile

import hypothesis

from oracle_guard.reading.property_reader import read_properties
from oracle_guard.runtime.lock_runtime import live_forms
from oracle_guard.oracle.strategy_form import comparable_at_run_time
from oracle_guard.oracle.strategy_form import compare

EVERY_KIND = 'import enum\nfrom hypothesis import given, settings, strategies as st\n\n\nclass Colour(enum.Enum):\n    RED = 1\n    BLUE = 2\n\n\ndef positive(n):\n    return n > 0\n\n\n@st.composite\ndef pairs(draw, n=3):\n    return draw(st.text(alphabet="ab", max_size=n)), draw(st.integers(0, 9))\n\n\n@settings(max_examples=5, deadline=None)\n@given(\n    a=st.lists(st.text(alphabet="abcdefghijklmnopqrstuvwxyz ", max_size=20), max_size=3),\n    b=st.sampled_from(["GET", "PUT"]) | st.none(),\n    c=st.integers(0, 100).filter(lambda n: n % 2 == 0).map(str),\n    d=st.builds(dict, k=st.floats(0, 1)),\n    e=st.fixed_dictionaries({"k": st.binary(max_size=8)}, optional={"o": st.just(1)}),\n    f=st.tuples(st.booleans(), st.integers().filter(positive)),\n    g=pairs(n=2),\n    h=st.recursive(st.none(), st.lists, max_leaves=3),\n    i=st.sampled_from(Colour),\n    j=st.text(alphabet=st.characters(max_codepoint=127), max_size=4),\n    k=st.data(),\n)\ndef test_every_kind(a, b, c, d, e, f, g, h, i, j, k):\n    assert k.draw(st.integers(0, 3)) <= 3\n'
EVERY_DEFAULT = 'from hypothesis import given, strategies as st\n\n@given(a=st.text(), b=st.from_regex("a+"), c=st.lists(st.integers()), d=st.floats(), e=st.characters(), f=st.dictionaries(st.text(), st.none()), g=st.recursive(st.none(), st.lists))\ndef test_defaults(a, b, c, d, e, f, g):\n    pass\n'


def differences(path: str) -> list[str]:
    with open(path, encoding='utf-8') as f:
        source = f.read()
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    found = []
    for prop in read_properties(path, ast.parse(source)):
        live = live_forms(getattr(module, prop.identity))
        for arg, form in prop.forms.items():
            for difference in compare(form, comparable_at_run_time(form, live[arg])):
                found.append(f'{prop.identity} args.{arg}: {difference.describe()}')
    return found


def main() -> int:
    found = []
    with tempfile.TemporaryDirectory() as scratch:
        for name, text in (('every_kind', EVERY_KIND), ('every_default', EVERY_DEFAULT)):
            path = os.path.join(scratch, f'{name}.py')
            with open(path, 'w', encoding='utf-8') as f:
                f.write(text)
            found += differences(path)
    for line in found:
        print(line)
    print(f'hypothesis {hypothesis.__version__}, Python {sys.version.split()[0]}: '
          f'{len(found)} differences')
    return 1 if found else 0


if __name__ == '__main__':
    raise SystemExit(main())
