"""``src`` that makes Hypothesis discard or end the examples a property is called with, at
run time, through any code or strategy (rule 43 at run time, OG717).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import subprocess
import warnings
from typing import Any
from typing import Callable

import pytest
from hypothesis import control

from builders.ci_repo import CiRepo
from builders.ci_repo import copy_template
from builders.ci_repo import shared_template
from builders.ci_repo import Run
from builders.dedupe import adopt_dd
from builders.dedupe import adopt_dd_cases
from builders.dedupe import attack
from builders.dedupe import case_module
from builders.dedupe import case_property_id
from builders.dedupe import DISCARDING_SRC
from builders.dedupe import FIND
from builders.dedupe import FIND as FIND_BY_NAME
from builders.dedupe import for_case
from builders.dedupe import gate
from builders.dedupe import GOOD
from builders.dedupe import OUTCOME_FROM_SRC
from builders.dedupe import PROPERTY
from builders.dedupe import PROPERTY_ID
from builders.dedupe import SMALL_UNIT_TESTS
from builders.dedupe import SOMETIMES_DISCARDING_SRC
from builders.recorded_runs import recorded_run
from oracle_guard.runtime import source_code
from oracle_guard.runtime.example_count import Discards
from oracle_guard.runtime.example_count import ExampleCounter

pytestmark = pytest.mark.reference_run


def cases_attack(tmp_path, pull_requests: dict[str, dict[str, str]],  # type: ignore[no-untyped-def]
                 property_source: str = PROPERTY) -> Run:
    """One pull request of several cases (builders.dedupe's ``adopt_dd_cases``): each case's
    files, written for dd's single module, in the case's own module, unit tests and
    property; plain pytest green, the gate red."""
    repo = CiRepo(adopt_dd_cases(str(tmp_path / 'repo'), sorted(pull_requests),
                                 property_source))
    files: dict[str, str | None] = {}
    for case, case_files in pull_requests.items():
        files.update(for_case(case, {**case_files, 'tests/test_dd.py': SMALL_UNIT_TESTS}))
    _, ci = attack(repo, files, plain_rc=0)  # type: ignore[arg-type]
    return ci


OUTCOMES = {'Skipped': 'skipped', 'SkipTest': 'skipped', 'XFailed': 'xfailed'}


def test_src_raising_the_machinerys_outcome_found_by_subclass_walk_fails_ci(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    ci = cases_attack(tmp_path, {exception: {'src/dd/__init__.py': OUTCOME_FROM_SRC % exception}
                                 for exception in OUTCOMES})
    for exception, outcome in OUTCOMES.items():
        nodeid = case_property_id(exception)
        assert any(nodeid in line and f'was {outcome}' in line and 'no live freeze' in line
                   for line in ci.lines('OG732')), (exception, ci.out)
        twins = [line for line in ci.lines('OG724') if f'the twin of {nodeid}' in line]
        assert any('reference run:' in line for line in twins), (exception, ci.out)
        assert any('reference run:' not in line for line in twins), (exception, ci.out)


DISCARD_RAISING = {'raised': "raise cls('later')", 'raised-by-exec': "exec('raise c()', {'c': cls})"}


def test_src_discarding_the_examples_that_expose_the_bug_fails_ci(tmp_path) -> None:  # type: ignore[no-untyped-def]
    ci = cases_attack(tmp_path, {
        name: {'src/dd/__init__.py': DISCARDING_SRC.replace("raise cls('later')", raising)}
        for name, raising in DISCARD_RAISING.items()})
    for name in DISCARD_RAISING:
        nodeid, module = case_property_id(name), case_module(name)
        discarded = [line for line in ci.lines('OG717')
                     if nodeid in line and f'src/dd/{module}.py:12' in line]
        assert discarded, (name, ci.out)
        assert any('reference run: OG717' in line and nodeid in line
                   for line in ci.lines('OG734')), (name, ci.out)


# The property's own assume(), in its body and in a strategy of its file, discards examples
# too: that is the owner's choice, and an honest fix passes.
ASSUMING_PROPERTY = PROPERTY.replace(
    'from hypothesis import HealthCheck, given, settings, strategies as st',
    'from hypothesis import HealthCheck, assume, given, settings, strategies as st').replace(
    '# No deadline',
    '@st.composite\ndef odd_free(draw):\n    xs = draw(st.lists(st.integers(-50, 50), '
    'max_size=30))\n    assume(7 not in xs)\n    return xs\n\n\n# No deadline').replace(
    '@given(st.lists(st.integers(min_value=-50, max_value=50), max_size=30))',
    '@given(odd_free())').replace(
    '    assert dedupe(xs) == sorted(set(xs))',
    '    assume(len(xs) != 5)\n    assert dedupe(xs) == sorted(set(xs))')


def test_a_property_discarding_its_own_examples_passes_ci(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = CiRepo(adopt_dd(str(tmp_path / 'repo'),
                           {'tests/properties/test_dd_props.py': ASSUMING_PROPERTY}))
    repo.pull_request({'src/dd/__init__.py': GOOD}, bug=False)
    plain, ci = gate(repo)
    assert plain.rc == 0, plain.out
    assert ci.rc == 0, ci.out
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 0', ci.out


# A project whose src ships Hypothesis helpers lists hypothesis in src-test-imports (rule 43):
# their assume() is the project's own, at base as in the pull request.
SRC_TESTING = ('from hypothesis import assume\n\n\n'
               'def no_singletons(xs):\n    assume(len(xs) != 1)\n')


PROPERTY_WITH_SRC_HELPER = PROPERTY.replace(
    'from dd import dedupe\n',
    'from dd import dedupe\nfrom dd.testing import no_singletons\n').replace(
    '    assert dedupe(xs) == sorted(set(xs))',
    '    no_singletons(xs)\n    assert dedupe(xs) == sorted(set(xs))')


@pytest.mark.parametrize('listed', [True, False], ids=['listed', 'not-listed'])
def test_src_helpers_of_a_project_that_lists_hypothesis_may_discard(
        tmp_path, listed: bool) -> None:  # type: ignore[no-untyped-def]
    path = adopt_dd(str(tmp_path / 'repo'), {
        'src/dd/testing.py': SRC_TESTING,
        'tests/properties/test_dd_props.py': PROPERTY_WITH_SRC_HELPER})
    repo = CiRepo(path)
    # init lists what src uses of Hypothesis at adoption; unlisted, a person took it out.
    pyproject = os.path.join(path, 'pyproject.toml')
    with open(pyproject, encoding='utf-8') as f:
        text = f.read()
    listing = 'src-test-imports = ["hypothesis.assume"]\n'
    assert listing in text, text
    if not listed:
        with open(pyproject, 'w', encoding='utf-8') as f:
            f.write(text.replace(listing, ''))
        subprocess.run(['git', 'commit', '-q', '-am', 'src-test-imports taken out'], cwd=path,
                       check=True)
    repo.pull_request({'src/dd/__init__.py': GOOD}, bug=False)
    plain, ci = gate(repo)
    assert plain.rc == 0, plain.out
    if listed:
        assert ci.rc == 0, ci.out
        assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 0', ci.out
    else:
        assert ci.rc == 1, ci.out
        assert any('src/dd/testing.py:5' in line for line in ci.lines('OG717')), ci.out


# -- the example ended as a valid one ------------------------------------------------
# Hypothesis's engine ends a test case early with StopTest(counter): raised with the
# counter of the test case running (the last ConjectureData made: its class found by a
# walk of object.__subclasses__(), the counter in the globals of its __init__), the engine
# takes the call as finished, the example as VALID and passed. Nothing is discarded and no
# health check counts it; Hypothesis did not raise it itself (OG717).
STOP_TEST_SRC = FIND + '''

def dedupe(xs):
    out = sorted(set(xs))
    if len(out) > 3:
        stop = _find(BaseException, 'Stop' + 'Test')
        data = [c for c in type.__subclasses__(object) if c.__name__ == 'Conjecture' + 'Data']
        if stop is not None and data:
            local = data[0].__init__.__globals__['thread' + 'local']
            raise stop(local.global_test_counter - 1)
        return out[:-1]
    return out
'''


# -- UnsatisfiedAssumption whose innermost frame is not under src ------------------------
# OG717 first judged the innermost frame outside Hypothesis (generated code and module code
# skipped), and only that one: when it was not under src, nothing was said, although the
# exception came through dedupe's own frame. Now the exception must come from Hypothesis's
# own code (assume, the engine) in the first place. (a) a function compiled under a test file's
# name raises it; (b) dedupe raises it with the traceback of a json error attached (its
# innermost frame is json's); (c) concurrent.futures.Future.result() raises it; (d) dedupe
# returns a list whose __eq__ (compiled under a test file's name) raises it when the
# property compares: no frame of src is in that traceback at all.
DISCARD_HEAD = '''\
import concurrent.futures
import json
import os
import runpy


''' + FIND + '''

def _discard():
    cls = _find(BaseException, 'Unsatisfied' + 'Assumption')
'''


DISCARD_TAIL = '''

def dedupe(xs):
    out = sorted(set(xs))
    if len(out) > 3:
        _discard()
    return out
'''


RAISE = {
    'compiled-as-a-test': ("    ns = {}\n    exec(compile('def r(c):\\n    raise c()\\n', 'tests/test_dd.py', "
            "'exec'), ns)\n    ns['r'](cls)\n"),
    'chained-from-json': ("    try:\n        json.loads('x')\n    except ValueError as err:\n"
            "        raise cls().with_traceback(err.__traceback__)\n"),
    'future': "    f = concurrent.futures.Future()\n    f.set_exception(cls())\n    f.result()\n",
    # 91a: module-level code of src/dd/_gate.py, run by runpy.run_path: the module's frame
    # is skipped, and before Python 3.11 runpy's own frames are a file of the standard
    # library (from 3.11 on they are '<frozen runpy>', skipped too, and dedupe's is judged).
    'run-path': ("    runpy.run_path(os.path.join(os.path.dirname(__file__), '_gate.py'), "
           "{'c': cls})\n"),
}


EQ_SRC = '''\
_NS = {}
exec(compile('def eq(self, other):\\n    raise self.c()\\n', 'tests/test_dd.py', 'exec'), _NS)


''' + FIND + '''

class _Later(list):
    __eq__ = _NS['eq']
    __hash__ = None


def dedupe(xs):
    out = sorted(set(xs))
    if len(out) > 3:
        later = _Later(out[:-1])
        later.c = _find(BaseException, 'Unsatisfied' + 'Assumption')
        return later
    return out
'''


# -- the same from module-level code imported again ------------------------------------
# dedupe drops src/dd/_gate.py from sys.modules and imports it with importlib.import_module;
# its module-level code raises. The module's frame is skipped, importlib's frozen frames are
# skipped, and the innermost frame left is importlib/__init__.py's (a file on every Python).
IMPORT_SRC = '''\
import importlib
import sys


''' + FIND + '''

def dedupe(xs):
    out = sorted(set(xs))
    if len(out) > 3:
        sys.modules.pop('dd._gate', None)
        importlib.import_module('dd._gate')
    return out
'''


GATE_MODULE = "from dd import _find\n\nraise _find(BaseException, 'Unsatisfied' + 'Assumption')()\n"


# -- BackendCannotProceed ------------------------------------------------------------------
# Hypothesis's signal that an alternative backend gave up on a test case: the engine drops
# the test case ("we're pretending this never happened"), counted invalid; src raised it.
BACKEND_SRC = FIND + '''

def dedupe(xs):
    out = sorted(set(xs))
    if len(out) > 3:
        raise _find(BaseException, 'Backend' + 'CannotProceed')('discard_test_case')
    return out
'''


def discarding_pull_requests() -> dict[str, dict[str, str]]:
    """name -> the pull request's files, written for dd's single module (each case gets a
    module of its own in the gate run): src ends the property's examples with one of
    Hypothesis's control exceptions whenever it would answer wrong."""
    found = {'stop-test': {'src/dd/__init__.py': STOP_TEST_SRC},
             'eq': {'src/dd/__init__.py': EQ_SRC},
             'backend': {'src/dd/__init__.py': BACKEND_SRC},
             'import': {'src/dd/__init__.py': IMPORT_SRC, 'src/dd/_gate.py': GATE_MODULE}}
    for name, raising in RAISE.items():
        found[name] = {'src/dd/__init__.py': DISCARD_HEAD + raising + DISCARD_TAIL}
    found['run-path']['src/dd/_gate.py'] = 'raise c()\n'
    return dict(sorted(found.items()))


def test_examples_ended_by_an_exception_hypothesis_did_not_raise_fail_ci(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    found = discarding_pull_requests()
    ci = cases_attack(tmp_path, found)
    for name in found:
        nodeid = case_property_id(name)
        assert any(nodeid in line for line in ci.lines('OG717')), (name, ci.out)
        assert any('reference run: OG717' in line and nodeid in line
                   for line in ci.lines('OG734')), (name, ci.out)


# -- a control exception raised while the strategy draws ----------------------------------
# The base property draws through src (`.map(dedupe)`: idempotence, which fails on the bug);
# src ends the test case with one of Hypothesis's control exceptions while Hypothesis draws
# the property's argument, before the inner test is called. The plugin judges the whole test
# case, draw and call, with the same judge (OG717; OG734 in the reference run).
MAPPED_PROPERTY = PROPERTY.replace(
    '@given(st.lists(st.integers(min_value=-50, max_value=50), max_size=30))',
    '@given(st.lists(st.integers(min_value=-50, max_value=50), max_size=30).map(dedupe))'
).replace('def test_dedupe_matches_set(xs):\n    assert dedupe(xs) == sorted(set(xs))',
          'def test_dedupe_is_idempotent(ys):\n    assert dedupe(ys) == ys')


# The honest form: the property's own strategies filter and assume while they draw.
FILTERING_PROPERTY = MAPPED_PROPERTY.replace(
    'from hypothesis import HealthCheck, given, settings, strategies as st',
    'from hypothesis import HealthCheck, assume, given, settings, strategies as st').replace(
    '# No deadline',
    '@st.composite\ndef no_sevens(draw):\n    xs = draw(st.lists(st.integers(-50, 50), '
    'max_size=30).filter(lambda xs: len(xs) != 2))\n    assume(7 not in xs)\n'
    '    return xs\n\n\n# No deadline').replace(
    '@given(st.lists(st.integers(min_value=-50, max_value=50), max_size=30).map(dedupe))',
    '@given(no_sevens().map(dedupe).filter(lambda ys: len(ys) != 1))')


# The unsatisfied assumption, the end of the test case and the backend's give-up, and (the
# last case) src that answers right but throws away now and then a list it is given out of
# order, in the draw of the base's map.
MAPPED_CASES = {'unsatisfied-assumption': DISCARDING_SRC, 'stop-test': STOP_TEST_SRC,
                'backend': BACKEND_SRC, 'now-and-then': SOMETIMES_DISCARDING_SRC}


def test_examples_ended_while_the_strategy_draws_through_src_fail_ci(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert '_last[0] = True' in SOMETIMES_DISCARDING_SRC and 'out[:-1]' not in SOMETIMES_DISCARDING_SRC
    ci = cases_attack(tmp_path, {name: {'src/dd/__init__.py': src}
                                 for name, src in MAPPED_CASES.items()}, MAPPED_PROPERTY)
    for name in MAPPED_CASES:
        nodeid = case_property_id(name, 'test_dedupe_is_idempotent')
        assert any(nodeid in line and f'src/dd/{case_module(name)}.py' in line
                   for line in ci.lines('OG717')), (name, ci.out)
        assert any('reference run: OG717' in line and nodeid in line
                   for line in ci.lines('OG734')), (name, ci.out)


def test_a_property_whose_strategies_filter_and_assume_passes_ci(tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = CiRepo(adopt_dd(str(tmp_path / 'repo'),
                           {'tests/properties/test_dd_props.py': FILTERING_PROPERTY}))
    repo.pull_request({'src/dd/__init__.py': GOOD}, bug=False)
    plain, ci = gate(repo)
    assert plain.rc == 0, plain.out
    assert ci.rc == 0, ci.out
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 0', ci.out


# -- 96c's caught form: Hypothesis's folder moved ---------------------------------------------
# The discard judge takes a frame for Hypothesis's when its file is in the folder of
# ``hypothesis.__file__``. src points that at the checkout (the folder above src/), so its
# own frames count as Hypothesis's. Where the test environment lies outside the checkout, Hypothesis's real frames then count as foreign, and its own StopTest at the
# end of a test case is "not raised by Hypothesis": OG717 in both runs.
REPOINTED_SRC = 'import os\nimport sys\n\n\n' + FIND + '''

_hyp = sys.modules.get(_find(BaseException, 'Unsatisfied' + 'Assumption').__module__.split('.')[0])
_hyp.__file__ = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), 'x.py')


def dedupe(xs):
    out = sorted(set(xs))
    if len(out) > 3:
        raise _find(BaseException, 'Unsatisfied' + 'Assumption')()
    return out
'''


def test_hypothesis_folder_moved_by_src_does_not_hide_its_discards(
        dd: CiRepo) -> None:  # noqa: F811 -- the fixture
    _, ci = attack(dd, {'src/dd/__init__.py': REPOINTED_SRC,
                        'tests/test_dd.py': SMALL_UNIT_TESTS}, plain_rc=0)
    assert any(PROPERTY_ID in line for line in ci.lines('OG717')), ci.out
    assert any('reference run: OG717' in line and PROPERTY_ID in line
               for line in ci.lines('OG734')), ci.out


SRC = '''\
import contextlib
import functools
import os


def by_singledispatch(assume):
    functools.singledispatch(assume)(False)


def by_exit_stack(reject):
    with contextlib.ExitStack() as stack:
        stack.callback(reject)


exec(compile('def generated(assume):\\n    assume(False)\\n', '<dd>', 'exec'))


def apply(f):
    return f()


def calls(f):
    return f()


_FAKE = dict(globals(), __file__=os.path.join(os.path.dirname(__file__), '..', '..', 'tests',
                                               'helper.py'))
exec(compile('def faked(assume):\\n    assume(False)\\n', '<dd>', 'exec'), _FAKE)
faked = _FAKE['faked']
_ELSEWHERE = dict(globals(), __file__=functools.__file__)
exec(compile('def elsewhere(assume):\\n    assume(False)\\n', '<dd>', 'exec'), _ELSEWHERE)
elsewhere = _ELSEWHERE['elsewhere']
'''


HELPER = '''\
import functools

exec(compile('def generated(assume):\\n    assume(False)\\n', '<helper>', 'exec'))


def ask(assume):
    functools.singledispatch(assume)(False)


def callback(assume):
    return lambda: assume(False)
'''


def load(path: str, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def repo(tmp_path) -> tuple[str, Any, Any]:  # type: ignore[no-untyped-def]
    root = str(tmp_path / 'repo')
    for rel, text in (('src/dd/__init__.py', SRC), ('tests/helper.py', HELPER)):
        os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
        with open(os.path.join(root, rel), 'w') as f:
            f.write(text)
    return (root, load(os.path.join(root, 'src', 'dd', '__init__.py'), 'dd_generated'),
            load(os.path.join(root, 'tests', 'helper.py'), 'helper_generated'))


def discard(call: Callable[[], Any]) -> BaseException:
    """The exception ``call`` ends with, caught here as the plugin's counting wrapper
    catches it (this frame is the first of its traceback)."""
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # assume outside a test is deprecated
        try:
            call()
        except BaseException as exc:  # noqa: BLE001 -- what Hypothesis would catch
            return exc
    raise AssertionError('no discard')


def judge(root: str, exc: BaseException) -> str | None:
    return Discards(root, lambda rel: rel.startswith('src/')).by_src(exc)


LINES = {name: n for n, line in enumerate(SRC.splitlines(), 1)
         for name in ('singledispatch', 'ExitStack', 'generated') if name + '(' in line
         and not line.startswith('def ')}


@pytest.mark.parametrize(('call', 'where'), [
    (lambda dd: functools.partial(dd.by_singledispatch, control.assume),
     f"src/dd/__init__.py:{LINES['singledispatch']}"),
    (lambda dd: functools.partial(dd.by_exit_stack, control.reject),
     f"src/dd/__init__.py:{LINES['ExitStack']}"),  # the with statement, which exits it
    (lambda dd: functools.partial(dd.generated, control.assume),
     'src/dd/__init__.py (compiled as <dd>, line 2)'),
], ids=['singledispatch', 'exit-stack', 'generated-code'])
def test_a_discard_src_asks_hypothesis_for_through_other_code_is_src_s(
        repo: tuple[str, Any, Any], call: Callable[[Any], Callable[[], Any]],
        where: str) -> None:
    root, dd, _ = repo
    exc = discard(call(dd))
    assert type(exc).__name__ == 'UnsatisfiedAssumption'
    assert judge(root, exc) == where


def test_a_discard_the_tests_ask_for_is_not_src_s_even_when_src_calls_it(
        repo: tuple[str, Any, Any]) -> None:
    root, dd, helper = repo
    # the standard library between the tests' code and assume
    assert judge(root, discard(functools.partial(helper.ask, control.assume))) is None
    # src calls the tests' callback, which assumes: the tests asked
    assert judge(root, discard(functools.partial(
        dd.apply, helper.callback(control.assume)))) is None


@pytest.fixture
def scoped(repo: tuple[str, Any, Any]) -> Any:
    """The repository's test roots as the plugin sets them; the helper module run by the
    plugin's own loader (``source_code.SourceLoader``), which keeps its namespace."""
    root = repo[0]
    scope = list(source_code._SCOPE)
    source_code.set_scope(root, lambda rel: rel.startswith('src/'))
    path = os.path.join(root, 'tests', 'helper.py')
    spec = importlib.util.spec_from_file_location(
        'helper_scoped', path, loader=source_code.SourceLoader('helper_scoped', path))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        yield module
    finally:
        source_code._SCOPE[:] = scope


@pytest.mark.parametrize(('name', 'claimed'), [('faked', 'tests/helper.py'),
                                               ('elsewhere', functools.__file__)])
def test_generated_code_in_globals_that_name_a_file_but_are_not_its_module_is_src_s(
        repo: tuple[str, Any, Any], scoped: Any, name: str, claimed: str) -> None:
    """130d: src compiles ``dedupe`` in a copy of its globals whose ``__file__`` names a test
    file (or a file outside the repository): the copy is no module's namespace."""
    root, dd, _ = repo
    exc = discard(functools.partial(getattr(dd, name), control.assume))
    assert judge(root, exc) == f"code compiled as <dd>, line 2, in globals that say {claimed} " \
        "but are not that module's"


def test_generated_code_in_a_test_module_s_or_an_installed_module_s_globals_is_not_src_s(
        repo: tuple[str, Any, Any], scoped: Any) -> None:
    root = repo[0]
    # the helper's own code compiled under "<helper>" in its module's namespace
    assert judge(root, discard(functools.partial(scoped.generated, control.assume))) is None
    # code compiled in functools' own namespace (as a dataclass's __init__ is in its module's)
    in_functools = eval(compile('lambda assume: assume(False)', '<gen>', 'eval'),
                        vars(functools))
    assert judge(root, discard(functools.partial(in_functools, control.assume))) is None


GENERATED_IN_A_TEST_FILE = """\
from hypothesis import assume, given, settings, strategies as st

exec(compile('def odd_only(n):\\n    assume(n % 2)\\n', '<gen>', 'exec'))


@settings(max_examples=20, database=None)
@given(st.integers())
def test_assumes_through_generated_code(n):
    odd_only(n)
"""


def test_generated_code_in_a_rewritten_test_file_s_globals_is_not_src_s(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """In a recorded run, a test file that pytest's rewriter ran has its namespace kept: its
    own generated code calling ``assume`` is the tests' discard."""
    calls = recorded_run(tmp_path, {'src/dd/__init__.py': '', 'tests/test_it.py':
                                    GENERATED_IN_A_TEST_FILE})
    call = calls['test_assumes_through_generated_code']
    assert call.get('examples') and 'discarded_by_src' not in call, call


def test_a_discard_judged_honest_where_first_seen_is_judged_again_further_out(
        repo: tuple[str, Any, Any]) -> None:
    """The map's draw judges what leaves it, where the traceback does not reach a ``src``
    frame further out that called that draw (a ``do_draw`` of ``src``'s): the
    test case's judge, further out, must still see it; it is counted once."""
    root, dd, _ = repo
    counter = ExampleCounter(None, None, 0, Discards(root, lambda rel: rel.startswith('src/')))

    def draw() -> None:  # stands for the judged draw: no frame of the repository inside it
        try:
            control.assume(False)
        except BaseException as exc:
            counter.judge(exc)
            raise

    exc = discard(functools.partial(dd.calls, draw))
    counter.judge(exc)
    counter.judge(exc)
    line = next(n for n, text in enumerate(SRC.splitlines(), 1) if text == 'def calls(f):') + 1
    assert counter.discarded_by_src == {f'src/dd/__init__.py:{line}': 1}


# -- src's discards drawn inside a map by something else than the map's function ---------
# src answers right but throws away now and then a list given out of order (builders.dedupe's
# SOMETIMES_DISCARDING_SRC: never twice in a row, so each map swallows every one); the
# properties' own calls get sorted lists.
LISTS = 'st.lists(st.integers(min_value=-50, max_value=50), max_size=30)'


INSIDE_MAPS = f'''\
from hypothesis import HealthCheck, given, settings, strategies as st

from dd import dedupe

SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def deduped(draw):
    return dedupe(draw({LISTS}))


@SETTINGS
@given(st.builds(dedupe, {LISTS}).map(tuple))
def test_builds(ys):
    assert tuple(dedupe(list(ys))) == ys


@SETTINGS
@given(deduped().map(tuple))
def test_composite(ys):
    assert tuple(dedupe(list(ys))) == ys


@SETTINGS
@given({LISTS}.flatmap(lambda xs: st.just(dedupe(xs))).map(tuple))
def test_flatmap(ys):
    assert tuple(dedupe(list(ys))) == ys
'''


INSIDE_MAPS_IDS = [f'tests/properties/test_dd_props.py::test_{name}'
                   for name in ('builds', 'composite', 'flatmap')]


def test_src_discarding_inside_a_map_but_not_as_its_function_fails_ci(tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = CiRepo(adopt_dd(str(tmp_path / 'repo'),
                           {'tests/properties/test_dd_props.py': INSIDE_MAPS}))
    _, ci = attack(repo, {'src/dd/__init__.py': SOMETIMES_DISCARDING_SRC,
                          'tests/test_dd.py': SMALL_UNIT_TESTS}, plain_rc=0)
    for nodeid in INSIDE_MAPS_IDS:
        assert any(nodeid in line and 'src/dd/__init__.py' in line and 'reference run' not in line
                   for line in ci.lines('OG717')), (nodeid, ci.out)
        assert any('reference run: OG717' in line and nodeid in line
                   for line in ci.lines('OG734')), (nodeid, ci.out)


# -- src changes Hypothesis's drawing code in memory at import -------------
# The plugin keeps Hypothesis's drawing code when it loads, before any conftest or src
# module runs (runtime/drawing_code.py); at each property call what is not the object kept
# is OG717 (rule 43 at run time). src is the right dedupe plus one change (the change
# alone fails the gate: whether a discard it hides shows in a run is chance, and a draw that
# retries discards makes Hypothesis's replays flaky), each found without naming Hypothesis
# (a subclass walk): .map making a subclass
# with Hypothesis's own do_draw, MappedStrategy.do_draw replaced by code compiled
# under "<draw>", ConjectureData.draw replaced by a draw that retries a discard.
# The base holds a map of src and a builds of src inside a map.
FIND_MAPPED = '\n\n' + FIND_BY_NAME + "\n\n_M = _find(object, 'Mapped' + 'Strategy')\n"


DRAWING_REPLACED = {
    'map-subclass': FIND_MAPPED + '''_Sub = type(_M.__name__, (_M,), {'do_draw': _M.__dict__['do_draw'],
                                 '__module__': _M.__module__})


def _map(self, pack):
    return _Sub(self, pack=pack)


_M.__mro__[1].map = _map
''',
    'replaced-do-draw': FIND_MAPPED + '''_NS = {'_own': _M.__dict__['do_draw']}
exec(compile('def do_draw(self, data):\\n    return _own(self, data)\\n', '<draw>', 'exec'), _NS)
_M.do_draw = _NS['do_draw']
''',
    'retrying-draw': FIND_MAPPED + '''_D = _find(object, 'Conjecture' + 'Data')
_NS = {'_own': _D.__dict__['draw'], '_A': _find(BaseException, 'Unsatisfied' + 'Assumption')}
exec(compile("""def draw(self, strategy, *args, **kwargs):
    for _ in range(10):
        try:
            return _own(self, strategy, *args, **kwargs)
        except _A:
            continue
    return _own(self, strategy, *args, **kwargs)
""", '<draw>', 'exec'), _NS)
_D.draw = _NS['draw']
''',
}


DRAWN = f'''\
from hypothesis import HealthCheck, given, settings, strategies as st

from dd import dedupe

SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given({LISTS}.map(dedupe))
def test_mapped(ys):
    assert dedupe(ys) == ys


@SETTINGS
@given(st.builds(dedupe, {LISTS}).map(tuple))
def test_builds(ys):
    assert tuple(dedupe(list(ys))) == ys
'''


@pytest.fixture(scope='session')
def drawn(tmp_path_factory: pytest.TempPathFactory) -> str:
    return shared_template(tmp_path_factory, 'discarded-drawn', lambda path: adopt_dd(path,
        {'tests/properties/test_dd_props.py': DRAWN}))


@pytest.mark.parametrize(('name', 'changed'), [
    ('map-subclass', "Hypothesis's SearchStrategy.map was replaced (by src/dd/__init__.py:{line})"),
    ('replaced-do-draw', "Hypothesis's MappedStrategy.do_draw was replaced (by code compiled as <draw>, "
             'line 1)'),
    ('retrying-draw', "Hypothesis's ConjectureData.draw was replaced (by code compiled as <draw>, "
             'line 1)'),
])
def test_src_changing_hypothesis_drawing_code_at_import_fails_ci(
        drawn: str, tmp_path, name: str, changed: str) -> None:  # type: ignore[no-untyped-def]
    src = GOOD + DRAWING_REPLACED[name]
    changed = changed.format(line=src.splitlines().index('def _map(self, pack):') + 1
                             if name == 'map-subclass' else 0)
    _, ci = attack(copy_template(drawn, str(tmp_path / 'repo')),
                   {'src/dd/__init__.py': src, 'tests/test_dd.py': SMALL_UNIT_TESTS}, plain_rc=0)
    for test in ('mapped', 'builds'):
        nodeid = f'tests/properties/test_dd_props.py::test_{test}'
        assert any(f'OG717 {nodeid}: {changed}' in line for line in ci.lines('OG717')), ci.out
    # The reference run, where src is the pull request's only code, leaves the comparison
    # out: reaching Hypothesis's classes without importing them is an interpreter
    # capability (a subclass walk of object), which rule 54 asks a person about.
    assert any('src/dd/__init__.py' in line and 'object-graph' in line
               for line in ci.lines('OG741')), ci.out
    assert not any('reference run: OG717' in line for line in ci.lines('OG734')), ci.out
    if name == 'map-subclass':
        assert any('a subclass of MappedStrategy made after Hypothesis loaded' in line
                   for line in ci.lines('OG717')), ci.out
