"""The gate played as a cheating agent, round 9 (benchmarks/ATTACKS.md, attacks 128-136):
what is closed. The attacks themselves, the ones that get through included, are reproduced
by benchmarks/attacks_open/round9.py.

Attack 128: ``.map`` draws again when its inner draw raises ``UnsatisfiedAssumption``, as
when its function does, and only the function was judged: a ``src`` function drawn by
``st.builds``, a ``@composite`` or a ``flatmap`` under a ``.map`` threw away what it liked.
One gate scenario, the three shapes as three properties of one base file.

OG717 (rule 43 at run time, docs/rules.md) judges who asked Hypothesis for a discard: the
nearest frame of the repository above Hypothesis's own raise. Attack 130 had ``src`` hand
Hypothesis's own ``assume`` to the standard library (``functools.singledispatch``, an
``ExitStack`` callback), whose frame was the nearest one that was not Hypothesis's: outside
the repository, so no finding. 130c compiled ``dedupe`` under a generated file name, and
generated frames were skipped. These are judged in-process, on a real repository folder
whose modules are imported from their files.

Attack 132: the install step wrote a ``.pth`` import line into the test environment (with a
dist-info whose ``RECORD`` lists it, so no OG727), and that start-up code ran in the gate's
own runs too and took OG717 out of the plugin in memory. The gate's runs start with ``-S``
and put the site folders and the ``.pth`` path lines on ``sys.path`` themselves (rule 46,
docs/ci.md). Two gate scenarios in a fresh environment that reaches this suite's pytest,
Hypothesis and oracle-guard by ``.pth`` path lines: the attack, and an honest fix whose
install step writes an editable finder's import line.
"""
from __future__ import annotations

import functools
import importlib.util
import json
import os
import subprocess
import sys
import venv
import warnings
from typing import Any, Callable

import pytest
from hypothesis import control

from ci_repo import CiRepo
from ci_repo import copy_template
from ci_repo import PYTEST
from oracle_guard.gate.reference import ISOLATED
from oracle_guard.gate.reference import START_UP
from oracle_guard.runtime import source_code
from oracle_guard.runtime.run_record import _Discards
from oracle_guard.runtime.run_record import _ExampleCounter
from test_ci_attacks import GOOD
from test_ci_attacks import PROPERTY_ID
from test_ci_attacks_round3 import adopt_dd
from test_ci_attacks_round3 import attack
from test_ci_attacks_round3 import DISCARDING_SRC
from test_ci_attacks_round3 import SMALL_UNIT_TESTS
from test_ci_attacks_round4 import FIND as FIND_BY_NAME
from test_ci_attacks_round4 import SOMETIMES_DISCARDING_SRC
from test_ci_integrity import install
from test_ci_integrity import site_packages
from test_drawing_code import recorded_run

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
    return (root, load(os.path.join(root, 'src', 'dd', '__init__.py'), 'dd_round9'),
            load(os.path.join(root, 'tests', 'helper.py'), 'helper_round9'))


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
    return _Discards(root, lambda rel: rel.startswith('src/')).by_src(exc)


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
    frame further out that called that draw (a ``do_draw`` of ``src``'s, attack 131): the
    test case's judge, further out, must still see it; it is counted once."""
    root, dd, _ = repo
    counter = _ExampleCounter(None, None, 0, _Discards(root, lambda rel: rel.startswith('src/')))

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


# -- 128: src's discards drawn inside a map by something else than the map's function ---------
# src answers right but throws away now and then a list given out of order (round 4's
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


# -- 131b, 131c, 131d: src changes Hypothesis's drawing code in memory at import -------------
# The plugin keeps Hypothesis's drawing code when it loads, before any conftest or src
# module runs (runtime/drawing_code.py); at each property call what is not the object kept
# is OG717 (rule 43 at run time). src is the right dedupe plus one change (the change
# alone fails the gate: whether a discard it hides shows in a run is chance, and a draw that
# retries discards makes Hypothesis's replays flaky), each found without naming Hypothesis
# (a subclass walk; the whole attacks are round9.py's): .map making a subclass
# with Hypothesis's own do_draw (131b), MappedStrategy.do_draw replaced by code compiled
# under "<draw>" (131c), ConjectureData.draw replaced by a draw that retries a discard
# (131d). The base holds a map of src (131b, 131c) and a builds of src inside a map (131d).
FIND = '\n\n' + FIND_BY_NAME + "\n\n_M = _find(object, 'Mapped' + 'Strategy')\n"
DRAWING_REPLACED = {
    '131b': FIND + '''_Sub = type(_M.__name__, (_M,), {'do_draw': _M.__dict__['do_draw'],
                                 '__module__': _M.__module__})


def _map(self, pack):
    return _Sub(self, pack=pack)


_M.__mro__[1].map = _map
''',
    '131c': FIND + '''_NS = {'_own': _M.__dict__['do_draw']}
exec(compile('def do_draw(self, data):\\n    return _own(self, data)\\n', '<draw>', 'exec'), _NS)
_M.do_draw = _NS['do_draw']
''',
    '131d': FIND + '''_D = _find(object, 'Conjecture' + 'Data')
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


@pytest.fixture(scope='module')
def drawn(tmp_path_factory: pytest.TempPathFactory) -> str:
    return adopt_dd(str(tmp_path_factory.mktemp('drawn') / 'repo'),
                    {'tests/properties/test_dd_props.py': DRAWN})


@pytest.mark.parametrize(('name', 'changed'), [
    ('131b', "Hypothesis's SearchStrategy.map was replaced (by src/dd/__init__.py:{line})"),
    ('131c', "Hypothesis's MappedStrategy.do_draw was replaced (by code compiled as <draw>, "
             'line 1)'),
    ('131d', "Hypothesis's ConjectureData.draw was replaced (by code compiled as <draw>, "
             'line 1)'),
])
def test_src_changing_hypothesis_drawing_code_at_import_fails_ci(
        drawn: str, tmp_path, name: str, changed: str) -> None:  # type: ignore[no-untyped-def]
    src = GOOD + DRAWING_REPLACED[name]
    changed = changed.format(line=src.splitlines().index('def _map(self, pack):') + 1
                             if name == '131b' else 0)
    _, ci = attack(copy_template(drawn, str(tmp_path / 'repo')),
                   {'src/dd/__init__.py': src, 'tests/test_dd.py': SMALL_UNIT_TESTS}, plain_rc=0)
    for test in ('mapped', 'builds'):
        nodeid = f'tests/properties/test_dd_props.py::test_{test}'
        assert any(f'OG717 {nodeid}: {changed}' in line for line in ci.lines('OG717')), ci.out
        assert any(f'reference run: OG717 {nodeid}: {changed}' in line
                   for line in ci.lines('OG734')), ci.out
    if name == '131b':
        assert any('a subclass of MappedStrategy made after Hypothesis loaded' in line
                   for line in ci.lines('OG717')), ci.out


# -- 132: start-up code the install step writes into the test environment ---------------------
# The install step (standing for a setup.py) writes files into the test environment's
# site-packages with a dist-info whose RECORD lists them with their true hashes, as pip
# would: no OG727 (a .pth no RECORD lists), no OG726 (a file that differs from its RECORD).
INSTALL_FILES = '''\
import base64
import hashlib
import os
import sysconfig

SITE = sysconfig.get_paths()['purelib']
FILES = %r
rows = []
for name, text in FILES.items():
    path = os.path.join(SITE, *name.split('/'))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = text.replace('CHECKOUT', repr(os.getcwd())).encode()
    with open(path, 'wb') as f:
        f.write(data)
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()
    rows.append(f'{name},sha256={digest},{len(data)}')
rows.append('%s-0.1.dist-info/RECORD,,')
with open(os.path.join(SITE, '%s-0.1.dist-info', 'RECORD'), 'w') as f:
    f.write('\\n'.join(rows) + '\\n')
'''


def install_step(dist: str, files: dict[str, str]) -> str:
    metadata = f'Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n\n'
    return INSTALL_FILES % ({**files, f'{dist}-0.1.dist-info/METADATA': metadata}, dist, dist)


# 132: og_boot.pth's import line runs og_boot at every start-up of the environment's
# interpreter; it makes the plugin's judge of discards answer "not src's" for every one.
BOOT = install_step('og_boot', {'og_boot.pth': 'import og_boot\n', 'og_boot.py': (
    'try:\n    from oracle_guard.runtime import run_record\n'
    '    run_record._Discards.by_src = lambda self, exc: None\n'
    'except Exception:\n    pass\n')})
# The honest case: an editable install of the project through a finder, as setuptools
# writes one for a layout it cannot map with a path line (an import line that installs a
# meta path finder for ``dd`` in the checkout's src).
FINDER = install_step('dd', {'__editable__.dd-0.1.pth': (
    'import __editable___dd_0_1_finder; __editable___dd_0_1_finder.install()\n'),
    '__editable___dd_0_1_finder.py': (
        'import importlib.util\nimport os\nimport sys\n\n\nclass _Finder:\n'
        '    @staticmethod\n    def find_spec(name, path=None, target=None):\n'
        '        if name == "dd":\n'
        '            return importlib.util.spec_from_file_location(name, os.path.join('
        'CHECKOUT, "src", "dd", "__init__.py"))\n\n\n'
        'def install():\n    sys.meta_path.append(_Finder)\n')})


@pytest.mark.parametrize('system_site', [False, True], ids=['venv', 'system-site-packages'])
def test_the_gates_runs_get_sites_path_lines_and_none_of_its_start_up_code(
        tmp_path, system_site: bool) -> None:  # type: ignore[no-untyped-def]
    prefix = str(tmp_path / 'env')
    venv.EnvBuilder(with_pip=False, system_site_packages=system_site,
                    symlinks=os.name != 'nt').create(prefix)
    python = os.path.join(prefix, 'Scripts' if os.name == 'nt' else 'bin', 'python')
    site = site_packages(prefix)
    ran = tmp_path / 'ran'
    for folder in ('by_path_line', 'by_import_line'):
        os.mkdir(tmp_path / folder)
    install(site, 'start_up', {
        'paths.pth': f'# a comment\n{tmp_path / "by_path_line"}\n\n{tmp_path / "missing"}\n',
        'code.pth': f'import sys; sys.path.append({str(tmp_path / "by_import_line")!r}); '
                    f'open({str(ran)!r}, "a").write("pth ")\n',
        'sitecustomize.py': f'open({str(ran)!r}, "a").write("sitecustomize ")\n'})
    show = 'import json, sys\njson.dump([sys.prefix, sys.path], sys.stdout)\n'
    by_site = json.loads(subprocess.run([python, '-I', '-c', show], check=True,
                                        capture_output=True).stdout)
    assert set(ran.read_text().split()) == {'pth', 'sitecustomize'}  # site runs both
    ran.unlink()
    gate = json.loads(subprocess.run([python, *ISOLATED, '-c', START_UP + show], check=True,
                                     capture_output=True).stdout)
    assert not ran.exists()
    # site's prefix and sys.path, in its order, but for what the import line added
    assert gate == [by_site[0], [p for p in by_site[1] if not p.endswith('by_import_line')]]
    assert str(tmp_path / 'by_path_line') in gate[1]
    assert str(tmp_path / 'by_import_line') in by_site[1]


@pytest.fixture(scope='module')
def dd_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    return adopt_dd(str(tmp_path_factory.mktemp('round9-start-up') / 'repo'))


def suite_env(tmp_path) -> str:  # type: ignore[no-untyped-def]
    """A fresh environment (no pip) that reaches this suite's pytest, Hypothesis and
    oracle-guard through the path lines of a ``.pth`` a distribution of its own lists."""
    prefix = str(tmp_path / 'env')
    venv.EnvBuilder(with_pip=False, symlinks=os.name != 'nt').create(prefix)
    import oracle_guard

    here = [os.path.dirname(os.path.dirname(os.path.abspath(pytest.__file__))),
            os.path.dirname(os.path.dirname(os.path.abspath(oracle_guard.__file__)))]
    # (named to sort first: site reads the .pth files in the order of their names)
    install(site_packages(prefix), 'aa_suite', {'aa_suite.pth': ''.join(
        f'{folder}\n' for folder in dict.fromkeys(here))})
    return os.path.join(prefix, 'Scripts' if os.name == 'nt' else 'bin', 'python')


def start_up_gate(repo: CiRepo, python: str) -> Any:
    test_command = [python, *PYTEST[1:]]
    return repo.finish(repo.start([sys.executable, '-I', *repo.ci_args(
        test_command, '--test-python', python, '--install-command',
        'python tools/install.py')[1:]]))


def test_start_up_code_the_install_step_adds_does_not_run_in_the_gates_runs(
        dd_template: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Rule 46 (OG727 asks only for a RECORD) and rule 44: the reference run's OG717 stands.
    repo = copy_template(dd_template, str(tmp_path / 'repo'))
    repo.pull_request({'src/dd/__init__.py': DISCARDING_SRC, 'tests/test_dd.py': SMALL_UNIT_TESTS,
                       'tools/install.py': BOOT}, bug=False)
    ci = start_up_gate(repo, suite_env(tmp_path))
    assert ci.rc == 1, ci.out
    # The start-up code ran in the test command (its own OG717 is gone: the attack is live)
    assert not [line for line in ci.lines('OG717') if 'reference run:' not in line], ci.out
    assert not ci.lines('OG727') and not ci.lines('OG726'), ci.out
    assert any('reference run: OG717' in line and PROPERTY_ID in line
               and 'src/dd/__init__.py:12' in line for line in ci.lines('OG734')), ci.out
    assert any('note: the install step added start-up code' in line and
               'og_boot.pth: import og_boot)' in line for line in ci.out.splitlines()), ci.out


def test_an_editable_finder_the_install_step_adds_leaves_an_honest_fix_passing(
        dd_template: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The gate's runs skip the finder's import line: the tree's src roots come first anyway.
    repo = copy_template(dd_template, str(tmp_path / 'repo'))
    repo.pull_request({'src/dd/__init__.py': GOOD, 'tools/install.py': FINDER}, bug=False)
    ci = start_up_gate(repo, suite_env(tmp_path))
    assert ci.rc == 0, ci.out
    assert 'oracle-guard ci: 0 finding(s); test command exited 0' in ci.out, ci.out
    notes = [line for line in ci.out.splitlines() if 'added start-up code' in line]
    assert len(notes) == 1 and '__editable__.dd-0.1.pth: import __editable___dd_0_1' in notes[0]
