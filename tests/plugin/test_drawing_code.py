"""Hypothesis's drawing code kept at the plugin's start, and what changed since (rule 43 at
run time, docs/rules.md: OG717). In-process: each test changes Hypothesis in this process
as a ``src`` module would at import, and puts it back; the replacements are functions of a real module file under ``src``.
"""

from __future__ import annotations

import gc
import importlib.util
import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import assume
from hypothesis import control
from hypothesis import given
from hypothesis import HealthCheck
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.internal.conjecture.data import ConjectureData
from hypothesis.strategies._internal.strategies import MappedStrategy
from hypothesis.strategies._internal.strategies import SearchStrategy

from builders.recorded_runs import recorded_events
from builders.recorded_runs import recorded_run
from oracle_guard.runtime.drawing_code import DrawingCode


SRC = '''\
def draw(self, strategy, *args, **kwargs):
    return strategy.do_draw(self)


def do_draw(self, data):
    return self.pack(data.draw(self.mapped_strategy))


def map(self, pack):
    return None


exec(compile('def generated(self, strategy, *args, **kwargs):\\n    return None\\n',
             '<draw>', 'exec'))
'''


LINE = {name: n for n, text in enumerate(SRC.splitlines(), 1)
        for name in ('draw', 'do_draw', 'map') if text.startswith(f'def {name}(')}


@pytest.fixture
def root(tmp_path) -> str:  # type: ignore[no-untyped-def]
    os.makedirs(tmp_path / 'src' / 'dd')
    (tmp_path / 'src' / 'dd' / '__init__.py').write_text(SRC)
    return str(tmp_path)


@pytest.fixture
def dd(root: str) -> Any:
    path = os.path.join(root, 'src', 'dd', '__init__.py')
    spec = importlib.util.spec_from_file_location('dd_drawing', path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def kept() -> Iterator[DrawingCode]:
    found = DrawingCode.keep()
    assert found is not None
    yield found
    gc.collect()  # a subclass made by a test leaves __subclasses__ once collected


_ABSENT = object()


def put(owner: Any, name: str, value: Any) -> Iterator[None]:
    """``owner.name`` (a class's own attribute, a function's ``__code__``) is ``value`` for
    the loop's one turn, then what it was again (or gone, if it was not there)."""
    own = vars(owner).get(name, _ABSENT) if isinstance(owner, type) else \
        getattr(owner, name, _ABSENT)
    setattr(owner, name, value)
    try:
        yield
    finally:
        if own is _ABSENT:
            delattr(owner, name)
        else:
            setattr(owner, name, own)


def test_honest_properties_change_nothing(kept: DrawingCode, root: str) -> None:
    @settings(max_examples=30, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(st.lists(st.integers(0, 20)).map(sorted).filter(lambda xs: len(xs) != 1),
           st.integers().flatmap(lambda n: st.just(n)), st.data())
    def prop(xs: list[int], n: int, data: Any) -> None:
        assume(n != 3)
        data.draw(st.builds(tuple, st.lists(st.booleans())))

    prop()
    assert kept.changes(root) == []


@pytest.mark.parametrize(('cls', 'name', 'function', 'where'), [
    (ConjectureData, 'draw', 'draw', f"src/dd/__init__.py:{LINE['draw']}"),  # 131d
    (MappedStrategy, 'do_draw', 'do_draw', f"src/dd/__init__.py:{LINE['do_draw']}"),  # 131
    (SearchStrategy, 'map', 'map', f"src/dd/__init__.py:{LINE['map']}"),  # 131b's way in
    (ConjectureData, 'draw', 'generated', 'src/dd/__init__.py (compiled as <draw>, line 1)'),
], ids=['draw', 'do_draw', 'map', 'generated'])
def test_a_method_of_a_drawing_class_replaced_is_named_with_its_code(
        kept: DrawingCode, root: str, dd: Any, cls: Any, name: str, function: str,
        where: str) -> None:
    for _ in put(cls, name, getattr(dd, function)):
        assert kept.changes(root) == [
            f"Hypothesis's {cls.__name__}.{name} was replaced (by {where})"]
    assert kept.changes(root) == []


def test_a_method_whose_code_is_swapped_in_place_is_named(kept: DrawingCode, root: str,
                                                          dd: Any) -> None:
    for _ in put(ConjectureData.__dict__['draw'], '__code__', dd.draw.__code__):
        assert kept.changes(root) == [
            "Hypothesis's ConjectureData.draw runs other code "
            f"(by src/dd/__init__.py:{LINE['draw']})"]
    assert kept.changes(root) == []


def test_assume_replaced_and_a_name_added_to_a_class_are_named(kept: DrawingCode, root: str,
                                                              dd: Any) -> None:
    for _ in put(control, 'assume', dd.map):
        assert kept.changes(root) == [
            "Hypothesis's hypothesis.control.assume was replaced "
            f"(by src/dd/__init__.py:{LINE['map']})"]
    for _ in put(MappedStrategy, '_draw_again', dd.map):
        assert kept.changes(root) == [
            "Hypothesis's MappedStrategy._draw_again was added "
            f"(by src/dd/__init__.py:{LINE['map']})"]
    assert kept.changes(root) == []


def test_a_strategy_copied_changes_nothing(kept: DrawingCode, root: str, dd: Any) -> None:
    """``copy.copy`` of a strategy has copyreg cache its class's ``__slotnames__`` (natsort's
    tests copy text and bytes strategies): pickling's own cache, not drawing code. Code
    bound to that name is still named."""
    import copy

    strategy = st.text().wrapped_strategy  # type: ignore[attr-defined]
    cls = type(strategy)
    assert '__slotnames__' not in vars(cls)
    try:
        copy.copy(strategy)
        assert isinstance(vars(cls).get('__slotnames__'), list)
        assert kept.changes(root) == []
        cls.__slotnames__ = dd.map
        assert kept.changes(root) == [
            f"Hypothesis's {cls.__name__}.__slotnames__ was added "
            f"(by src/dd/__init__.py:{LINE['map']})"]
    finally:
        if '__slotnames__' in vars(cls):
            delattr(cls, '__slotnames__')


def test_a_map_subclass_holding_hypothesis_own_do_draw_is_named(kept: DrawingCode,
                                                                root: str) -> None:
    """131b: ``.map`` makes a subclass whose ``do_draw`` is Hypothesis's own, taken before
    the plugin wraps ``MappedStrategy``'s: no attribute of a kept class changed."""
    sub = type('MappedStrategy', (MappedStrategy,), {
        'do_draw': MappedStrategy.__dict__['do_draw'], '__module__': MappedStrategy.__module__})
    assert kept.changes(root) == [
        'a subclass of MappedStrategy made after Hypothesis loaded (MappedStrategy, claiming '
        'hypothesis.strategies._internal.strategies) has its own do_draw '
        "(Hypothesis's own MappedStrategy.do_draw, out of the plugin's reach)"]
    del sub
    gc.collect()
    assert kept.changes(root) == []


def test_a_map_subclass_that_draws_through_its_base_is_not_named(kept: DrawingCode,
                                                                 root: str) -> None:
    class Sorted(MappedStrategy):  # type: ignore[type-arg]
        pass

    assert kept.changes(root) == []


def test_the_plugins_own_wrapper_is_known_by_identity(kept: DrawingCode, root: str,
                                                      dd: Any) -> None:
    for _ in put(MappedStrategy, 'do_draw', dd.do_draw):
        assert kept.changes(root, own=(dd.do_draw,)) == []
        # another function with the same code is not the wrapper in place
        other = type(dd.do_draw)(dd.do_draw.__code__, dd.do_draw.__globals__)
        assert kept.changes(root, own=(other, None)) != []


# -- in a recorded pytest run, as the gate's runs are ------------------------------------------
RECORDED_SRC = '''\
def _draw(self, strategy, *args, **kwargs):
    return _own(self, strategy, *args, **kwargs)


def replace(cls):
    global _own
    _own = cls.__dict__['draw']
    cls.draw = _draw
'''


RECORDED_TESTS = '''\
from hypothesis import given, settings, strategies as st
from hypothesis.internal.conjecture.data import ConjectureData

import dd


@settings(max_examples=5, database=None)
@given(st.integers())
def test_honest(n):
    assert n == n


@settings(max_examples=5, database=None)
@given(st.integers())
def test_replaces_while_called(n):
    if ConjectureData.__dict__['draw'] is not dd._draw:
        dd.replace(ConjectureData)
'''


def test_the_record_opens_with_its_start_when_pytest_rewrites_hypothesis_first(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Keeping the drawing code imports Hypothesis, and pytest's rewriter compiles its
    modules when it finds no rewritten copy (a fresh environment; here a fresh
    ``PYTHONPYCACHEPREFIX``, where pytest looks for them): each compile is an event, and
    one sent before the process's start opened the stream as a forged run would (OG720,
    seen on a fresh 3.13 environment in CI)."""
    events = recorded_events(tmp_path / 'repo', {
        'src/dd/__init__.py': RECORDED_SRC, 'tests/test_it.py': RECORDED_TESTS},
        {'PYTHONPYCACHEPREFIX': str(tmp_path / 'pycache')})
    compiled = [e['path'] for e in events if e.get('event') == 'compiled']
    assert any(os.sep + 'hypothesis' + os.sep in path for path in compiled), compiled
    assert events[0]['event'] == 'start', events[:3]


def test_a_draw_replaced_while_a_property_runs_is_in_its_call_record(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The second look, before the plugin takes its wrappers off: a change made by the
    property's own call (code under src it calls, here) is in that call's record."""
    calls = recorded_run(tmp_path, {'src/dd/__init__.py': RECORDED_SRC,
                                    'tests/test_it.py': RECORDED_TESTS})
    assert 'drawing_replaced' not in calls['test_honest'], calls
    assert calls['test_replaces_while_called'].get('drawing_replaced') == [
        "Hypothesis's ConjectureData.draw was replaced (by src/dd/__init__.py:1)"], calls
