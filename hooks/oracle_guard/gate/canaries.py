"""Canaries (rule 45): tests the gate plants into a run, whose outcomes it knows in advance.

``plant_canaries(folder, secret, ...)`` writes the canary modules into the gate's own
temporary folder and returns a ``CanaryPlan``; its ``env()`` names the plan for the plugin
(``runtime/canary_items.py``), which collects each module at a place in the test tree that
does not exist on disk, so the conftests and hooks of that folder apply to it as to the
real tests beside it. Names, places and numbers come from a per-run secret: a pull request
cannot predict them. The canaries:

* must fail: a plain ``assert`` of two different numbers; a Hypothesis property that no
  example satisfies (where the project's tests use Hypothesis); the *twin* of an oracle
  test: a copy of one of its tests whose ``==`` compares the test's own value with a fresh
  sentinel object, which only a value whose ``__eq__`` lies can equal;
* must pass: a plain ``assert`` that holds, and a property that holds.

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
    optional: bool = False  # a twin: its module may not import away from its folder
    message: str = ''  # what its failure must say (a twin fails at its sentinel)

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


# The twin's sentinel: a value no honest object equals, of the expected value's own type
# where one can be built, so that an `__eq__` that lies only to its own kind
# (`isinstance(other, list)`) meets one too.
SENTINEL = '''\
class FRESH:
    """A value no honest object equals."""

    @classmethod
    def like(cls, value):
        marker = cls()
        shapes = ((list, [marker]), (tuple, (marker,)), (dict, {marker: marker}),
                  (set, {marker}), (frozenset, {marker}), (str, repr(marker)),
                  (bytes, repr(marker).encode()), (int, id(marker) << 70 | 1),
                  (float, id(marker) + 0.5))
        for kind, shape in shapes if not isinstance(value, bool) else ():
            if isinstance(value, kind):
                try:
                    return type(type(value).__name__, (type(value),), {})(shape)
                except Exception:
                    return marker
        return marker
'''


class _Sentinel(ast.NodeTransformer):
    def __init__(self, fresh: str) -> None:
        self.fresh = fresh

    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        if _is_eq_assert(node):
            compare = node.test
            assert isinstance(compare, ast.Compare)
            like = ast.Attribute(value=ast.Name(id=self.fresh, ctx=ast.Load()), attr='like',
                                 ctx=ast.Load())
            if isinstance(compare.comparators[0], ast.Constant) or \
                    not isinstance(compare.left, ast.Constant):
                compare.comparators = [ast.Call(func=like, args=[compare.comparators[0]],
                                                keywords=[])]
            else:
                compare.left = ast.Call(func=like, args=[compare.left], keywords=[])
            # The judge asks for this message: the twin must fail at its sentinel, not on
            # something else its copy lacks.
            node.msg = ast.Constant(value=f'{self.fresh} differs')
        return node


def _kept(node: ast.stmt, tests: set[str]) -> bool:
    """What the twin keeps of the module besides its test: every module-level statement
    (imports, helpers, data read at import, ``if``/``try``/``with`` blocks) except the other
    tests, ``pytestmark``, ``pytest_*`` plugin names, and statements that name a test left
    behind (``test_x.__code__ = ...``)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return not node.name.startswith(('test', 'Test'))
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    return not names & tests and not any(n.startswith('pytest') for n in names)


def twin_source(source: bytes, name: str, fresh: str) -> tuple[str, str] | None:
    """(the twin module's source, the test it twins) for the first test function of a
    module whose own body asserts ``a == b``; None when the module has none."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    if any(isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == 'pytestmark' for t in node.targets)
            for node in tree.body) or any(
            isinstance(node, ast.ImportFrom) and node.level for node in ast.walk(tree)):
        return None  # a module skipped as a whole, or one that imports relative to itself
    chosen = None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith('test') and \
                _plain_decorators(node) and _surely_asserts(node.body) and \
                not _may_silence(node):
            chosen = node
            break
    if chosen is None:
        return None
    original = chosen.name
    tests = {n.name for n in tree.body if isinstance(
        n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and
        n.name.startswith(('test', 'Test'))}
    body: list[ast.stmt] = []
    for node in tree.body:
        if node is chosen:
            chosen.name = name
            _Sentinel(fresh).visit(chosen)
            body.append(node)
        elif _kept(node, tests):
            body.append(node)
    sentinel = ast.parse(SENTINEL.replace('FRESH', fresh))
    tree.body = [*body, *sentinel.body]
    return ast.unparse(ast.fix_missing_locations(tree)) + '\n', original


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
    settings = ('@settings(database=None, max_examples=20, deadline=None, derandomize=True, '
                'suppress_health_check=list(HealthCheck))')
    source = ('from hypothesis import given, HealthCheck, settings, strategies as st\n\n\n'
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
            optional: bool = False, message: str = '') -> None:
        token = _token(secret, label)
        file_name = f'test_{token}.py'
        real = os.path.join(folder, f'c{token}.py')
        with open(real, 'w', encoding='utf-8') as f:
            f.write(source)
        modules.append({'virtual': os.path.join(root, where, file_name), 'real': real,
                        'name': f'oracle_guard_canary_{token}', 'optional': optional,
                        'at': [_fraction(secret, f'{label}-{i}') for i in range(len(tests))]})
        canaries.extend(Canary(file_name, name, expect, kind, optional, message)
                        for name, expect, kind in tests)

    add('plain', home, *_plain_module(secret))
    if hypothesis:
        add('property', home, *_property_module(secret))
    for path in [*oracle_files, *[p for p in test_files if p not in oracle_files]]:
        source = read(path)
        name = f'test_{_token(secret, "twin")}'
        fresh = f'Fresh{_token(secret, "fresh", 8)}'
        twin = twin_source(source, name, fresh) if source else None
        if twin is not None:
            add('twin', os.path.dirname(path), twin[0],
                [(name, FAIL, f'the twin of {path}::{twin[1]} (its == against a fresh '
                              'sentinel object)')], optional=True,
                message=f'{fresh} differs')
            break
    plan_file = os.path.join(folder, 'plan.json')
    with open(plan_file, 'w', encoding='utf-8') as f:
        json.dump({'modules': modules}, f)
    return CanaryPlan(plan_file, tuple(canaries))


# -- judging -------------------------------------------------------------------------------
def dropped_notes(plan: CanaryPlan, record: RunRecord) -> list[str]:
    return [f'oracle-guard ci: note: the twin canary ({c.kind}) was not planted: its module '
            f'does not import away from its folder ({record.canaries_dropped[c.module]})'
            for c in plan.canaries if c.optional and c.module in record.canaries_dropped]


def _refused_the_sentinel(crash: str) -> bool:
    """Whether a twin failed because the comparison itself raised, not at an assert: an
    honest ``__eq__`` may refuse a foreign type (pyrsistent's ``PBag`` raises
    ``TypeError``), and an array compared with a sentinel has no truth value
    (``ValueError``). The twin then cannot tell a lying ``==`` from an honest one: it is
    inconclusive, not a forged run (a limit named in docs/ci.md)."""
    name = crash.split(':', 1)[0].strip()
    return bool(name) and name.isidentifier() and name != 'AssertionError' and \
        (name.endswith('Error') or name.endswith('Exception'))


def inconclusive_notes(plan: CanaryPlan, record: RunRecord) -> list[str]:
    notes = []
    for canary in plan.canaries:
        if not canary.message:
            continue
        for nodeid in (n for n in record.items if canary.matches(n)):
            crash = str((record.reports.get(nodeid, {}).get('call') or {}).get('crash', ''))
            if record.outcome(nodeid) == canary.expect and canary.message not in crash and \
                    _refused_the_sentinel(crash):
                notes.append(f'oracle-guard ci: note: {canary.kind}: the canary is '
                             f'inconclusive: the compared value refused the sentinel '
                             f'({crash[:120]}), so its == was not checked')
    return notes


def judge_canaries(plan: CanaryPlan, record: RunRecord) -> list[Finding]:
    findings: list[Finding] = []
    hint = ('something in the pull request changes how tests end (a wrapped runtest, a patched '
            'engine, a lying __eq__, a rewritten report, a stopped session): remove it')
    for canary in plan.canaries:
        nodeids = [n for n in record.items if canary.matches(n)]
        if not nodeids and canary.optional and canary.module in record.canaries_dropped:
            continue  # dropped_notes says so
        if not nodeids:
            findings.append(Finding(
                '.', 1, 1, 'OG725', f'forged run: a canary the gate planted ({canary.kind}, '
                f'must have {canary.expect}) is missing from the run: dropped, deselected or '
                'never collected', hint))
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
                if report.get('outcome') == 'failed':
                    findings.append(Finding(
                        '.', 1, 1, 'OG724', f'a canary the gate planted ({canary.kind}) '
                        f'failed in its {when}, where it cannot fail by itself: '
                        f'{str(report.get("crash", ""))[:200] or "no message"}',
                        'a fixture of the run (often a session-scoped one, whose teardown '
                        'lands on the last test) fails: fix it, it fails the run'))
            if outcome == canary.expect and canary.message and canary.message not in crash:
                if _refused_the_sentinel(crash):
                    continue  # inconclusive_notes says so
                findings.append(Finding(
                    '.', 1, 1, 'OG724', f'forged run: a canary the gate planted ({canary.kind}) '
                    f'failed, but not at its sentinel: {crash[:200] or "no message"}', hint))
            elif outcome != canary.expect:
                findings.append(Finding(
                    '.', 1, 1, 'OG724', f'forged run: a canary the gate planted '
                    f'({canary.kind}) {outcome or "never ran"}, it must have {canary.expect}',
                    hint))
    return findings
