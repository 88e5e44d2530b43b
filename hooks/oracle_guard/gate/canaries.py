"""Canaries (rule 45): tests the gate plants into a run, whose outcomes it knows in advance.

``plant_canaries(folder, secret, ...)`` writes the canary modules into the gate's own
temporary folder and returns a ``CanaryPlan``; its ``env()`` names the plan for the plugin
(``runtime/canary_items.py``), which collects each module at a place in the test tree that
does not exist on disk, so the conftests and hooks of that folder apply to it as to the
real tests beside it. Names, places and numbers come from a per-run secret: a pull request
cannot predict them. The canaries:

* must fail: a plain ``assert`` of two different numbers; a Hypothesis property that no
  example satisfies (where the project's tests use Hypothesis); a *twin* of each oracle
  test whose assertion compares a value (within a budget): a copy of it whose ``==``
  compares the test's own value with the expected value perturbed in its own type and
  structure, which must fail there (the comparison is reached);
* must pass: a plain ``assert`` that holds, a property that holds, and the other twin of
  the same test, which asserts for every example that the value does *not* equal the
  perturbed one: only a value whose ``__eq__`` lies (on any input) fails it.

The twins run in a copy of the namespace their original module was imported into
(``runtime/canary_items.py``); one that cannot be built there is missing from the run
(OG725), one whose original was not imported is left out with a note.

``judge_canaries(plan, record)`` is the verdict on them (OG724 a canary ended otherwise than
planted, OG725 a canary is missing from the record); ``plan.without(record)`` is the record
with the canaries taken out, which is what the audit judges. Canaries never reach the
user's tree or the review report.
"""
from __future__ import annotations

import ast
import dataclasses
import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from oracle_guard.findings import Finding
from oracle_guard.runtime.canary_items import CANARY_ENV
from oracle_guard.runtime.run_record import RunRecord

FAIL = 'failed'
PASS = 'passed'


@dataclass(frozen=True)
class Canary:
    module: str  # the file name it is collected under (test_<secret>.py)
    name: str  # its function name
    expect: str  # FAIL or PASS
    kind: str  # what it is, for the finding: assert, property, twin of <nodeid>
    optional: bool = False  # a twin: it is planted only where its original was imported
    message: str = ''  # what its failure says (a twin's, at its sentinel)
    original: str = ''  # a twin: ``path::test`` of the test it is a copy of

    def matches(self, nodeid: str) -> bool:
        path, _, rest = nodeid.partition('::')
        return rest.split('[', 1)[0] == self.name and \
            (path == self.module or path.endswith('/' + self.module))


@dataclass(frozen=True)
class CanaryPlan:
    plan_file: str
    canaries: tuple[Canary, ...]

    def env(self) -> dict[str, str]:
        return {CANARY_ENV: self.plan_file}

    def is_canary(self, nodeid: str) -> bool:
        return any(c.matches(nodeid) for c in self.canaries)

    def without(self, record: RunRecord) -> RunRecord:
        """The record with every canary taken out: the outcomes the gate judges."""
        keep = lambda nodeid: not self.is_canary(nodeid)  # noqa: E731
        modules = {c.module for c in self.canaries}
        return dataclasses.replace(
            record,
            items={k: v for k, v in record.items.items() if keep(k)},
            deselected={k: v for k, v in record.deselected.items() if keep(k)},
            collect_problems=[p for p in record.collect_problems
                              if os.path.basename(str(p.get('nodeid', '')).split('::')[0])
                              not in modules],
            reports={k: v for k, v in record.reports.items() if keep(k)},
            calls={k: v for k, v in record.calls.items() if keep(k)},
            code={k: v for k, v in record.code.items() if keep(k)},
        )


def _token(secret: str, label: str, size: int = 12) -> str:
    return hashlib.sha256(f'{secret}:{label}'.encode()).hexdigest()[:size]


def _number(secret: str, label: str) -> int:
    return 1000 + int(_token(secret, label, 8), 16) % 900000


def _fraction(secret: str, label: str) -> float:
    return int(_token(secret, label, 8), 16) / 0xFFFFFFFF


# -- the twin of an oracle test ------------------------------------------------------------
def _is_eq_assert(node: ast.AST) -> bool:
    return isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare) and \
        len(node.test.ops) == 1 and isinstance(node.test.ops[0], ast.Eq)


RUNNING_DECORATORS = ('parametrize', 'given', 'settings', 'example')


def _plain_decorators(function: ast.FunctionDef) -> bool:
    """No decorator but ``pytest.mark.parametrize`` and Hypothesis's ``given``,
    ``settings`` and ``example``: nothing that skips the test or runs it another way."""
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else (
            target.id if isinstance(target, ast.Name) else '')
        if name not in RUNNING_DECORATORS:
            return False
    return True


def _surely_asserts(body: list[ast.stmt]) -> bool:
    """An ``assert a == b`` in the body itself or in the body of a ``for`` loop in it (a
    loop over the examples a test checks), not under an ``if``."""
    return any(_is_eq_assert(s) or (isinstance(s, ast.For) and _surely_asserts(s.body))
               for s in body)


def _may_silence(function: ast.FunctionDef) -> bool:
    """A test that can skip or xfail itself would not fail as its twin must."""
    words = {'skip', 'skipif', 'xfail', 'importorskip', 'exit'}
    return any((isinstance(n, ast.Name) and n.id in words) or
               (isinstance(n, ast.Attribute) and n.attr in words) for n in ast.walk(function))


# The twin's sentinel: the expected value itself perturbed in its own type and structure:
# one element's value changed, the length, the element types and the keys kept (a list of
# 2-tuples of ints stays one, of the same length; a number moved by a secret offset; a
# string with its last character changed). An `__eq__` that lies to its own kind, or that
# inspects the other side's type, shape or content, cannot tell it from the value the test
# compares with. Only an empty container grows by one element (it has none to change). A
# value of any other type meets a fresh object of the sentinel's class.
# `check` is what the twin's assert asks of `==`: False against the sentinel (the twin
# that must pass, for every example it runs), or True (the twin that must fail at its
# sentinel: the comparison was reached).
SENTINEL = '''\
class FRESH:
    """The expected value perturbed in its own shape: what no honest value equals."""

    OFFSET = 0
    SUFFIX = ''
    EQUAL = False
    MESSAGE = ''

    @classmethod
    def check(cls, same):
        return same if cls.EQUAL else not same

    @classmethod
    def _step(cls, item, depth):
        more = cls._perturbed(item, depth + 1, 1)
        return item if more is None else more

    @classmethod
    def _changed(cls, items, depth):
        """The items with one of them (the last that can be) changed in its own shape."""
        for at in range(len(items) - 1, -1, -1):
            more = cls._perturbed(items[at], depth + 1, 1)
            if more is not None and type(more) is type(items[at]):
                return [*items[:at], more, *items[at + 1:]]
        return None

    @classmethod
    def _letter(cls, text):
        """Its last character changed to another one (a string of the same length)."""
        last = text[-1:]
        other = next((c for c in cls.SUFFIX + 'xy' if c != last), 'x')
        return text[:-1] + other

    @classmethod
    def _perturbed(cls, value, depth=0, offset=None):
        offset = cls.OFFSET if offset is None else offset
        if depth > 4:
            return None
        kind = type(value)
        if isinstance(value, bool):
            return not value
        for base in (int, float, complex):
            if isinstance(value, base):
                shifted = [value + offset, value * 2 + offset, -value - offset]
                return cls._built(kind, base, next((v for v in shifted if v != value), None))
        if isinstance(value, str):
            return cls._built(kind, str, cls._letter(str(value)) if value else cls.SUFFIX)
        if isinstance(value, bytes):
            text = bytes(value).decode('latin-1')
            return cls._built(kind, bytes, (cls._letter(text) if text else cls.SUFFIX
                                            ).encode('latin-1'))
        if isinstance(value, (list, tuple)):
            base = list if isinstance(value, list) else tuple
            items = list(value)
            changed = cls._changed(items, depth) if items else [offset]
            return None if changed is None else cls._built(kind, base, changed)
        if isinstance(value, (set, frozenset)):
            base = set if isinstance(value, set) else frozenset
            if not value:
                return cls._built(kind, base, [offset])
            for item in value:
                other, seen = cls._step(item, depth), 0
                while other in value and seen < 8:
                    other, seen = cls._step(other, depth), seen + 1
                if other not in value and type(other) is type(item):
                    return cls._built(kind, base, [*(v for v in value if v is not item),
                                                   other])
            return None
        if isinstance(value, dict):
            if not value:
                return cls._built(kind, dict, {cls.SUFFIX: offset})
            keys = list(value)
            for key in reversed(keys):
                other = cls._perturbed(value[key], depth + 1, 1)
                if other is not None and type(other) is type(value[key]):
                    changed = dict(value)
                    changed[key] = other
                    return cls._built(kind, dict, changed)
            return None
        return None

    @staticmethod
    def _built(kind, base, items):
        if items is None:
            return None
        for make in (kind, base):
            try:
                return make(items)
            except Exception:
                continue
        return None

    @classmethod
    def like(cls, value):
        try:
            shaped = cls._perturbed(value)
            kind = next((k for k in (bool, int, float, complex, str, bytes, list, tuple,
                                     set, frozenset, dict) if isinstance(value, k)), None)
            # Compared by the built-in type's own ==, which no subclass can change.
            if shaped is not None and kind is not None and \\
                    kind.__eq__(value, shaped) is False:
                return shaped
        except Exception:
            pass
        return cls()

    @staticmethod
    def bounded(test, examples):
        """A Hypothesis twin held to the budget: at most ``examples`` examples, generated
        (and explicit) only, no database; as Hypothesis's own pytest plugin sets a test's
        settings. Any other test as it is."""
        current = getattr(test, '_hypothesis_internal_use_settings', None)
        if current is None or getattr(test, 'hypothesis', None) is None:
            return test
        try:
            from hypothesis import Phase, settings
            phases = [p for p in current.phases if p in (Phase.explicit, Phase.generate)]
            test._hypothesis_internal_use_settings = settings(
                current, max_examples=min(current.max_examples, examples),
                phases=phases or current.phases, database=None)
        except Exception:
            pass
        return test

    @staticmethod
    def failing(test):
        """The twin that must fail, when it is a Hypothesis test: its settings as they are
        but for the phases that come after a failure (shrink, explain) and the example
        database. It fails at the first example that reaches its sentinel all the same;
        shrinking that failure and explaining it (Hypothesis re-runs it under a tracer)
        would only make the report of a planted failure shorter."""
        current = getattr(test, '_hypothesis_internal_use_settings', None)
        if current is None or getattr(test, 'hypothesis', None) is None:
            return test
        try:
            from hypothesis import Phase, settings
            phases = [p for p in current.phases if p not in (Phase.shrink, Phase.explain)]
            test._hypothesis_internal_use_settings = settings(
                current, phases=phases or current.phases, database=None)
        except Exception:
            pass
        return test
'''


class _Sentinel(ast.NodeTransformer):
    def __init__(self, fresh: str) -> None:
        self.fresh = fresh

    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        if _is_eq_assert(node):
            compare = node.test
            assert isinstance(compare, ast.Compare)
            fresh = ast.Name(id=self.fresh, ctx=ast.Load())
            like = ast.Attribute(value=fresh, attr='like', ctx=ast.Load())
            if isinstance(compare.comparators[0], ast.Constant) or \
                    not isinstance(compare.left, ast.Constant):
                compare.comparators = [ast.Call(func=like, args=[compare.comparators[0]],
                                                keywords=[])]
            else:
                compare.left = ast.Call(func=like, args=[compare.left], keywords=[])
            node.test = ast.Call(func=ast.Attribute(value=fresh, attr='check', ctx=ast.Load()),
                                 args=[compare], keywords=[])
            # The judge asks for this message: the twin must end at its sentinel, not on
            # something else.
            node.msg = ast.Attribute(value=fresh, attr='MESSAGE', ctx=ast.Load())
        return node


def twin_source(source: bytes, names: Sequence[str], fresh: str, full: int = 0,
                examples: int = 0) -> tuple[str, list[tuple[str, str]]] | None:
    """(the twins' source, [(twin, the test it twins)]) for the test functions of a module
    whose own body asserts ``a == b``, at most ``len(names)`` of them, in their order;
    None when the module has none. The first ``full`` twins run as many examples as
    their originals, the others (of a Hypothesis test) at most ``examples``. Each twin
    is such a function alone, renamed, its ``==`` asserts put to the sentinel, and the
    sentinel's class once: the plugin runs them in a copy of the namespace their original
    module was imported into (``runtime/canary_items.py``), so nothing of the module runs a second time and its
    imports resolve as they did for the original (a sibling helper, a relative import)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    if any(isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == 'pytestmark' for t in node.targets)
            for node in tree.body):
        return None  # a module skipped as a whole
    chosen = [node for node in tree.body
              if isinstance(node, ast.FunctionDef) and node.name.startswith('test') and
              _plain_decorators(node) and _surely_asserts(node.body) and
              not _may_silence(node)][:len(names)]
    if not chosen:
        return None
    pairs = []
    body: list[ast.stmt] = []
    bounded: list[ast.stmt] = []
    for at, (node, name) in enumerate(zip(chosen, names)):
        pairs.append((name, node.name))
        node.name = name
        _Sentinel(fresh).visit(node)
        body.append(node)
        if at >= full and examples:  # held to the budget (fewer examples, no shrinking)
            bounded += ast.parse(f'{name} = {fresh}.bounded({name}, {int(examples)})').body
    sentinel = ast.parse(SENTINEL.replace('FRESH', fresh))
    module = ast.Module(body=[*body, *sentinel.body, *bounded], type_ignores=[])
    return ast.unparse(ast.fix_missing_locations(module)) + '\n', pairs


def sentinel_values(secret: str, fresh: str, equal: bool, names: Sequence[str] = ()) -> str:
    """The sentinel's class attributes for one twin module, from the run's secret: ``equal``
    for the twins that must fail at their sentinel (``names``: those twins, which then
    neither shrink nor explain their failure: ``failing``)."""
    message = f'{fresh} {"differs" if equal else "equal"}'
    return (f'\n{fresh}.OFFSET = {_number(secret, "offset")}\n'
            f'{fresh}.SUFFIX = {_token(secret, "suffix", 6)!r}\n'
            f'{fresh}.EQUAL = {equal!r}\n{fresh}.MESSAGE = {message!r}\n'
            + ''.join(f'{name} = {fresh}.failing({name})\n' for name in names if equal))


# The twins' budget: at most this many oracle tests twinned in a run, and every twin of a
# Hypothesis test but the first at most this many examples (generated, not shrunk), so the
# twins cost at most a few runs of the first test. A lie told on every input of its kind
# (any list of pairs) shows at the first example; one told on rare inputs only is left to
# the first twin, which draws all its original draws (docs/threat-model.md).
TWIN_TESTS = 20
TWIN_EXAMPLES = 25


# -- planting ------------------------------------------------------------------------------
def _plain_module(secret: str) -> tuple[str, list[tuple[str, str, str]]]:
    fail, ok = f'test_{_token(secret, "assert-fail")}', f'test_{_token(secret, "assert-pass")}'
    a, b = _number(secret, 'a'), _number(secret, 'b')
    source = (f'def {fail}():\n    value = {a}\n    assert value == {a + b}\n\n\n'
              f'def {ok}():\n    assert {a} + {b} == {a + b}\n')
    return source, [(fail, FAIL, 'a plain failing assert'), (ok, PASS, 'a plain assert')]


def _property_module(secret: str) -> tuple[str, list[tuple[str, str, str]]]:
    fail = f'test_{_token(secret, "property-fail")}'
    ok = f'test_{_token(secret, "property-pass")}'
    n = _number(secret, 'n')
    # Only the generate phase: the failing one fails at its first example, and shrinking
    # and explaining that failure (Hypothesis re-runs it under a tracer) was a tenth of a
    # small project's whole gate, in each of the two runs. Its outcome does not change.
    settings = ('@settings(database=None, max_examples=20, deadline=None, derandomize=True, '
                'suppress_health_check=list(HealthCheck), phases=[Phase.generate])')
    source = ('from hypothesis import given, HealthCheck, Phase, settings, strategies as st'
              '\n\n\n'
              f'{settings}\n@given(st.integers(min_value=0, max_value={n}))\n'
              f'def {fail}(x):\n    assert x + {n} < {n}\n\n\n'
              f'{settings}\n@given(st.integers(min_value=0, max_value={n}))\n'
              f'def {ok}(x):\n    assert x + {n} >= {n}\n')
    return source, [(fail, FAIL, 'a failing Hypothesis property'),
                    (ok, PASS, 'a Hypothesis property that holds')]


def plant_canaries(folder: str, secret: str, *, root: str, test_files: Sequence[str],
                   read: Any, oracle_files: Sequence[str] = (), hypothesis: bool = True
                   ) -> CanaryPlan:
    """Write the canary modules into ``folder`` (outside the checkout) and the plan the
    plugin reads.

    ``root``: the tree the tests run in; ``test_files``: its test modules (relative paths),
    whose folders the canaries are collected in; ``oracle_files``: the human-owned tests to
    take the twin from (the properties first); ``read(path) -> bytes | None`` reads one of
    them. The reference run plants into its own tree the same way.
    """
    os.makedirs(folder, exist_ok=True)
    folders = sorted({os.path.dirname(p) for p in test_files}) or ['tests']
    home = folders[int(_token(secret, 'folder', 8), 16) % len(folders)]
    modules: list[dict[str, Any]] = []
    canaries: list[Canary] = []

    def add(label: str, where: str, source: str, tests: list[tuple[str, str, str]],
            optional: bool = False, message: str = '', original: str = '',
            originals: dict[str, str] | None = None) -> None:
        token = _token(secret, label)
        file_name = f'test_{token}.py'
        real = os.path.join(folder, f'c{token}.py')
        with open(real, 'w', encoding='utf-8') as f:
            f.write(source)
        entry = {'virtual': os.path.join(root, where, file_name), 'real': real,
                 'name': f'oracle_guard_canary_{token}', 'optional': optional,
                 'at': [_fraction(secret, f'{label}-{i}') for i in range(len(tests))],
                 'fail': [name for name, expect, _ in tests if expect == FAIL]}
        if original:
            entry['original'] = os.path.join(root, *original.split('::', 1)[0].split('/'))
        modules.append(entry)
        canaries.extend(Canary(file_name, name, expect, kind, optional, message,
                               (originals or {}).get(name, original))
                        for name, expect, kind in tests)

    add('plain', home, *_plain_module(secret))
    if hypothesis:
        add('property', home, *_property_module(secret))
    # Every oracle test whose assertion compares a value is twinned, within the budget: at
    # most TWIN_TESTS tests; the first runs as its original does, every other one at most
    # TWIN_EXAMPLES examples. Where the oracle has none, the first such test of the other
    # test files is.
    budget, full = TWIN_TESTS, 1
    fresh = f'Fresh{_token(secret, "fresh", 8)}'
    others = [p for p in test_files if p not in oracle_files]
    for at, path in enumerate([*oracle_files, *others]):
        if at == len(oracle_files):
            if budget < TWIN_TESTS:
                break  # the oracle's tests are twinned
            budget = 1
        if budget <= 0:
            break
        source = read(path)
        names = [f'test_{_token(secret, f"twin:{path}:{i}")}' for i in range(budget)]
        twin = twin_source(source, names, fresh, full, TWIN_EXAMPLES) if source else None
        if twin is None:
            continue
        code, pairs = twin
        budget, full = budget - len(pairs), 0
        # Two twins of each test, the same code but for what `check` asks: one must
        # pass (no example's value equals its expected value perturbed: an `__eq__`
        # that lies on some inputs only fails it), one must fail at its sentinel
        # (the comparison is reached: a twin made to return early fails it).
        for label, equal, expect in (('twin-pass', False, PASS), ('twin', True, FAIL)):
            message = f'{fresh} {"differs" if equal else "equal"}'
            add(f'{label}:{path}', os.path.dirname(path),
                code + sentinel_values(secret, fresh, equal, [name for name, _ in pairs]),
                [(name, expect, f'the twin of {path}::{original} (its == against the '
                                'expected value perturbed)') for name, original in pairs],
                optional=True, message=message, original=f'{path}::{pairs[0][1]}',
                originals={name: f'{path}::{original}' for name, original in pairs})
    plan_file = os.path.join(folder, 'plan.json')
    with open(plan_file, 'w', encoding='utf-8') as f:
        json.dump({'modules': modules}, f)
    return CanaryPlan(plan_file, tuple(canaries))


# -- judging -------------------------------------------------------------------------------
# The plugin's reason for a twin it could not build where its original was imported
# (runtime/canary_items.py): nothing of the module ran again, so nothing honest fails.
BESIDE = 'beside its original: '


def _twins(plan: CanaryPlan) -> dict[str, list[Canary]]:
    found: dict[str, list[Canary]] = {}
    for canary in plan.canaries:
        if canary.original:
            found.setdefault(canary.original, []).append(canary)
    return found


def dropped_notes(plan: CanaryPlan, record: RunRecord) -> list[str]:
    """A twin not planted because its original module was not imported in the run (it
    could not be: that is judged as the original's own collection error or absence)."""
    notes = []
    for original, twins in _twins(plan).items():
        why = next((record.canaries_dropped[c.module] for c in twins
                    if c.module in record.canaries_dropped), None)
        if why is not None and not why.startswith(BESIDE):
            notes.append(f'oracle-guard ci: note: the twin canaries of {original} were not '
                         f'planted: {why}')
    return notes


def _refused_the_sentinel(crash: str) -> bool:
    """Whether a twin failed because the comparison itself raised, not at an assert: an
    honest ``__eq__`` may refuse a foreign type (pyrsistent's ``PBag`` raises
    ``TypeError``), and an array compared with a sentinel has no truth value
    (``ValueError``). The twin then cannot tell a lying ``==`` from an honest one: it is
    inconclusive, not a forged run (a limit named in docs/threat-model.md)."""
    name = crash.split(':', 1)[0].strip()
    return bool(name) and name.isidentifier() and name != 'AssertionError' and \
        (name.endswith('Error') or name.endswith('Exception'))


def _crash(record: RunRecord, nodeid: str) -> str:
    return str((record.reports.get(nodeid, {}).get('call') or {}).get('crash', ''))


def _inconclusive(canary: Canary, record: RunRecord, nodeid: str) -> bool:
    """A twin that failed because the comparison raised, or the twin that must pass
    failing on something else than its sentinel: a Hypothesis deadline or health check
    met while it runs every example as its original does, which the original, run once,
    may escape on a loaded machine. Neither says whether an `==` lied."""
    crash = _crash(record, nodeid)
    if not canary.message or record.outcome(nodeid) != FAIL or canary.message in crash:
        return False
    return _refused_the_sentinel(crash) or canary.expect == PASS


def inconclusive_notes(plan: CanaryPlan, record: RunRecord) -> list[str]:
    notes = []
    for original, twins in _twins(plan).items():
        for canary in twins:
            refused = [n for n in record.items if canary.matches(n) and
                       _inconclusive(canary, record, n)]
            if refused:
                crash = _crash(record, refused[0])
                why = ('the compared value refused the sentinel' if _refused_the_sentinel(crash)
                       else 'the one that must pass failed on something else than its sentinel')
                notes.append(f'oracle-guard ci: note: the twin canaries of {original} are '
                             f'inconclusive: {why} ({crash[:120]}), so its == was not checked')
                break
    return notes


def _original_failed(canary: Canary, record: RunRecord) -> bool:
    """Whether the test a twin copies failed in the same run: a twin that fails on
    something of its copy other than its sentinel (an assert the bug breaks in both) says
    nothing the original's failure does not."""
    return any(record.outcome(n) == FAIL for n in record.items
               if n.split('[', 1)[0] == canary.original or
               n.split('[', 1)[0].endswith('/' + canary.original))


def _original_failed_so(canary: Canary, record: RunRecord, when: str, crash: object) -> bool:
    """Whether the test a twin copies failed in the same phase with the same error in the
    same run (its fixture needs what the machine lacks: a locale): the failure is in the
    run, on the original, not one taken out with the canary."""
    return bool(canary.original) and any(
        ((record.reports.get(n) or {}).get(when) or {}).get('outcome') == 'failed' and
        (record.reports[n][when].get('crash') or '') == (crash or '')
        for n in record.items if n.split('[', 1)[0] == canary.original or
        n.split('[', 1)[0].endswith('/' + canary.original))


def judge_canaries(plan: CanaryPlan, record: RunRecord) -> list[Finding]:
    findings: list[Finding] = []
    hint = ('something in the pull request changes how tests end (a wrapped runtest, a patched '
            'engine, a lying __eq__, a rewritten report, a stopped session): remove it')
    # The oracle-guard plugin stopped a session before its tests ran: the audit names its
    # reason (OG716), and a canary that never ran follows from it, not from a forged run.
    guard_stopped = any(process.guard_stopped for process in record.processes)
    for canary in plan.canaries:
        nodeids = [n for n in record.items if canary.matches(n)]
        dropped = record.canaries_dropped.get(canary.module) if canary.optional else None
        if not nodeids and dropped is not None and not dropped.startswith(BESIDE):
            continue  # dropped_notes says so
        if not nodeids:
            how = (f' (it could not be built {dropped[:200]})' if dropped else
                   ': dropped, deselected or never collected')
            findings.append(Finding(
                '.', 1, 1, 'OG725', f'forged run: a canary the gate planted ({canary.kind}, '
                f'must have {canary.expect}) is missing from the run{how}', hint))
            continue
        for nodeid in nodeids:
            outcome = record.outcome(nodeid)
            phases = record.reports.get(nodeid, {})
            crash = str((phases.get('call') or {}).get('crash', ''))
            # A canary is planted to end in its call. A failed set-up or teardown on it is
            # the run's own failure that landed there (a session-scoped fixture's teardown
            # lands on the last item, which the secret may make a canary): taken out with
            # the canary it would go unseen (rule 45).
            for when in ('setup', 'teardown'):
                report = phases.get(when) or {}
                if report.get('outcome') == 'failed' and not _original_failed_so(
                        canary, record, when, report.get('crash')):
                    findings.append(Finding(
                        '.', 1, 1, 'OG724', f'a canary the gate planted ({canary.kind}) '
                        f'failed in its {when}, where it cannot fail by itself: '
                        f'{str(report.get("crash", ""))[:200] or "no message"}',
                        'a fixture of the run (often a session-scoped one, whose teardown '
                        'lands on the last test) fails: fix it, it fails the run'))
            if _inconclusive(canary, record, nodeid):
                continue  # inconclusive_notes says so
            at_sentinel = bool(canary.message) and canary.message in crash
            if canary.expect == PASS and outcome == FAIL and at_sentinel:
                findings.append(Finding(
                    '.', 1, 1, 'OG724', f'forged run: a canary the gate planted ({canary.kind}) '
                    'failed: on some input its == said the value equals the expected value '
                    'perturbed in its own shape (an __eq__ that lies), it must have passed',
                    hint))
            elif outcome == FAIL and canary.expect == FAIL and canary.message and \
                    not at_sentinel:
                if canary.original and _original_failed(canary, record):
                    continue
                findings.append(Finding(
                    '.', 1, 1, 'OG724', f'forged run: a canary the gate planted ({canary.kind}) '
                    f'failed, but not at its sentinel: {crash[:200] or "no message"}', hint))
            elif outcome != canary.expect:
                if outcome == FAIL and canary.original and _original_failed(canary, record):
                    continue
                if outcome is None and guard_stopped:
                    continue
                findings.append(Finding(
                    '.', 1, 1, 'OG724', f'forged run: a canary the gate planted '
                    f'({canary.kind}) {outcome or "never ran"}, it must have {canary.expect}',
                    hint))
    return findings
