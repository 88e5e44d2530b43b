"""Rule 43: a src/ change that adds code reaching into the test run fails
forbid-mixed-oracle-diff (OG204), and so the gate, which runs the hooks' rules."""
from __future__ import annotations

import ast
import textwrap

import pytest

from builders.ci_repo import BUGGY_ADD
from builders.ci_repo import build_template
from builders.ci_repo import copy_template
from builders.repos import Repo
from oracle_guard.hooks import check_freeze_ledger
from oracle_guard.hooks.forbid_mixed_oracle_diff import main
from oracle_guard.reading.test_run_reach import added_sites
from oracle_guard.reading.test_run_reach import counted_sites
from oracle_guard.reading.test_run_reach import may_reach
from oracle_guard.reading.test_run_reach import new_sites

# Reads source as the interpreter parses it: .ci/run runs it on every Python.
pytestmark = pytest.mark.every_python

SRC = 'src/app.py'
PLAIN = 'def parse(b):\n    return bytes(b)\n'

# Each construct, as the one new part of src/app.py; the line it is reported at.
CONSTRUCTS = {
    'import-pytest': ('import pytest\n', 1),
    'import-pytest-aliased': ('import pytest as pt\n', 1),
    'from-_pytest': ('from _pytest.python import Function\n', 1),
    'import-pluggy': ('import pluggy\n', 1),
    'import-unittest': ('from unittest import mock\n', 1),
    'import-oracle-guard': ('import oracle_guard.runtime.run_record\n', 1),
    'hypothesis-internals': ('from hypothesis.internal.conjecture import engine\n', 1),
    'hypothesis-assume': ('from hypothesis import assume\n', 1),
    'import-module-computed': ('import importlib\nm = importlib.import_module("_py" "test")\n', 2),
    'dunder-import-computed': ('m = __import__("_py" + "test")\n', 1),
    'join-computed': ('import sys\nm = sys.modules.get("".join(["py", "test"]))\n', 2),
    'getattr-sys-modules': ('import sys\nm = getattr(sys, "modules")\n', 2),
    'sys-modules-entry': ('import sys\nUNDER_TEST = "pytest" in sys.modules\n', 2),
    'pytest-env-var': ('import os\nUNDER_TEST = bool(os.environ.get("PYTEST_CURRENT_TEST"))\n', 2),
    'oracle-guard-env-var': ('import os\nRECORD = os.getenv("ORACLE_GUARD_RECORD")\n', 2),
    'hypothesis-env-var': ('import os\nP = os.environ["HYPOTHESIS_" "PROFILE"]\n', 2),
    'atexit-os-exit': ('import atexit\nimport os\natexit.register(os._exit, 0)\n', 3),
    'atexit-handler-that-exits': ('import atexit\nimport sys\n\n\n@atexit.register\n'
                                  'def _bye():\n    sys.exit(0)\n', 5),
    'atexit-named-handler': ('from atexit import register\nimport os\n\n\ndef _bye():\n'
                             '    os._exit(0)\n\n\nregister(_bye)\n', 9),
    'settrace': ('import sys\nsys.settrace(None)\n', 2),
    'setprofile-aliased': ('from sys import setprofile as sp\nsp(None)\n', 2),
    'builtins-assigned': ('import builtins\nbuiltins.sum = lambda xs: 0\n', 2),
    'builtins-setattr': ('import builtins\nsetattr(builtins, "len", lambda x: 0)\n', 2),
    'dunder-builtins-item': ('__builtins__["print"] = None\n', 1),
    'builtins-through-import': ('__import__("builtins").sum = None\n', 1),
    'builtins-through-sys-modules': ('import sys\nsys.modules["builtins"].len = None\n', 2),
    'percent-computed': ('import sys\nm = sys.modules.get("py%s" % "test")\n', 2),
    'format-computed': ('import sys\nm = sys.modules.get("{}test".format("py"))\n', 2),
    'bytes-computed': ('import sys\nm = sys.modules.get((b"py" + b"test").decode())\n', 2),
    'upper-cased-variable': ('import os\nX = os.environ.get("pytest_addopts".upper())\n', 2),
    # How the test run imports : a module put under a test helper's
    # name, a finder ahead of the plugin's, a builtin replaced through a builtin's
    # __self__, a module given builtins of src's.
    'sys-modules-item-assigned': ('import sys\nsys.modules["_expected"] = object()\n', 2),
    'sys-modules-item-deleted': ('import sys\ndel sys.modules["_expected"]\n', 2),
    'sys-modules-setdefault': ('from sys import modules\nmodules.setdefault("a", None)\n', 2),
    'meta-path-insert': ('import sys\nsys.meta_path.insert(0, object())\n', 2),
    'meta-path-assigned': ('import sys as s\ns.meta_path = [object()] + s.meta_path\n', 2),
    'path-hooks-append': ('import sys\nsys.path_hooks.append(object)\n', 2),
    'builtins-through-self': ('setattr(len.__self__, "sorted", object())\n', 1),
    'module-builtins-assigned': ('import types\nm = types.ModuleType("m")\n'
                                 'm.__dict__["__builtins__"] = {}\n', 3),
    # A name an assignment binds to what rule 43 guards stands for it (
    # played through an alias): each reported at the use, not at the binding.
    'alias-of-sys': ('import sys\nm = sys\nm.modules["_expected"] = object()\n', 3),
    'alias-of-sys-modules': ('import sys\nmods = sys.modules\nmods["_expected"] = object()\n',
                             3),
    'alias-of-builtins': ('import builtins\nB = builtins\nB.sorted = list\n', 3),
    'alias-of-atexit-register': ('import atexit\nimport os\nreg = atexit.register\n'
                                 'reg(os._exit, 0)\n', 4),
    'alias-of-meta-path': ('import sys\nmp = sys.meta_path\nmp.insert(0, object())\n', 3),
    'alias-augmented': ('import sys\nhooks = sys.path_hooks\nhooks += [object]\n', 3),
    'alias-by-tuple-unpacking': ('import sys\na, b = sys, 1\ndel a.modules["_expected"]\n', 3),
    'alias-by-walrus': ('import sys\nif (m := sys.modules) is not None:\n'
                        '    m["_expected"] = object()\n', 3),
    'alias-by-walrus-in-a-tracer-call': ('import sys\n(m := sys).settrace(None)\n'
                                         'm.modules["_expected"] = 0\n', 3),
    # a name rebound keeps what it stood for: no order of bindings hides the object
    'alias-rebound': ('import builtins\nimport sys\nm = builtins\nm = sys\nm.len = None\n', 5),
    'alias-annotated': ('import sys\nm: object = sys.modules\nm.update(_expected=None)\n', 3),
    'alias-of-an-alias': ('import sys as s\na = s\nb = a\nb.meta_path.append(object())\n', 4),
    # the function above the module-level binding it uses: order does not matter
    'module-alias-used-in-a-function': ('import sys\n\n\ndef plant():\n'
                                        '    mods["_expected"] = object()\n\n\n'
                                        'mods = sys.modules\n', 5),
    'alias-of-a-mutator': ('import sys\nplant = sys.modules.setdefault\n'
                           'plant("_expected", object())\n', 3),
    'alias-of-an-exit': ('import atexit\nimport os\nbye = os._exit\nlater = bye\n'
                          'atexit.register(later, 0)\n', 5),
    'alias-of-getattr': ('import sys\nm = getattr(sys, "modules")\nm["_expected"] = 0\n', 3),
    'alias-of-builtin-self': ('B = len.__self__\nB.sorted = list\n', 2),
    'alias-of-vars-builtins': ('import builtins\nns = vars(builtins)\nns["len"] = None\n', 3),
    'alias-of-imported-builtins': ('import importlib\nb = importlib.import_module("builtins")\n'
                                   'b.len = None\n', 3),
    # Bound otherwise than by an assignment : a loop over values written
    # out, a with target (the value or an argument of the call that makes the context), a
    # default argument; an item of vars(sys) / sys.__dict__; operator's item setters and
    # functools.partial of setattr or of them
    'for-target': ('import sys\nfor m in [sys.modules]:\n    m["_expected"] = 0\n', 3),
    'comprehension-target': ('import sys\n[m.pop("a") for m in (sys.modules,)]\n', 2),
    'with-target': ('import contextlib\nwith contextlib.nullcontext(len.__self__) as b:\n'
                    '    b.sorted = list\n', 3),
    'default-argument': ('import sys\n\n\ndef put(m=sys.modules):\n    m["_expected"] = 0\n',
                         5),
    'keyword-only-default': ('import sys\n\n\ndef put(*, mp=sys.meta_path):\n'
                             '    mp.insert(0, object())\n', 5),
    'lambda-default': ('import sys\nput = lambda m=sys.modules: m.update(a=0)\n', 2),
    'vars-sys-item': ('import sys\nvars(sys)["modules"]["_expected"] = 0\n', 2),
    'sys-dict-item': ('import sys\nsys.__dict__["meta_path"].insert(0, object())\n', 2),
    'alias-of-vars-sys': ('import sys\nns = vars(sys)\nns["modules"].pop("a")\n', 3),
    'operator-setitem': ('import operator\nimport sys\n'
                         'operator.setitem(vars(sys)["modules"], "_expected", 0)\n', 3),
    'operator-setitem-builtins': ('from operator import setitem\nimport builtins\n'
                                  'setitem(vars(builtins), "sorted", list)\n', 3),
    'partial-setattr': ('import functools\n'
                        'functools.partial(setattr, len.__self__)("sorted", list)\n', 2),
    'partial-setitem': ('import sys\nfrom functools import partial\nimport operator\n'
                        'put = partial(operator.setitem, sys.modules)\n', 4),
    'dunder-import-attribute': ('__import__("sys").meta_path.append(object())\n', 1),
    # Python reads identifiers NFKC-normalised: no ASCII byte spells the name
    'import-pytest-fullwidth': ('import \uff50\uff59test\n', 1),
    'settrace-fullwidth': ('import sys\nsys.\uff53ettrace(None)\n', 2),
}


def staged_src(repo: Repo, text: str, path: str = SRC) -> None:
    repo.write(path, text, dedent=False)
    repo.add()


@pytest.mark.parametrize('name', sorted(CONSTRUCTS))
def test_src_change_reaching_into_the_test_run_fails(guarded: Repo, name: str) -> None:
    code, line = CONSTRUCTS[name]
    staged_src(guarded, code + '\n\n' + PLAIN)
    result = guarded.run(main)
    assert result.rc == 1, result.out
    assert 'OG204' in result.codes, result.out
    assert f'{SRC}:{line}:' in result.out and ': OG204 production code ' in result.out


@pytest.mark.parametrize('text', [
    '"""Parse requests; tested with pytest and Hypothesis."""\n' + PLAIN,
    'import atexit\n\natexit.register(print, "bye")\n' + PLAIN,
    'import os\nHOME = os.environ.get("HOME")\n' + PLAIN,
    'import sys\nVERSION = sys.version_info\n' + PLAIN,
    'import importlib\njson = importlib.import_module("json")\n' + PLAIN,
    'CONFIG_FILES = ("pytest.ini", "tox.ini", "setup.cfg")\n' + PLAIN,
    'import sys\nLOADED = "json" in sys.modules\nFINDERS = len(sys.meta_path)\n' + PLAIN,
    'def size(xs, len=len):\n    return len.__self__ is not None\n' + PLAIN,
    # an alias read, a copy changed, the alias's name rebound or deleted: sys.modules and
    # sys.meta_path stay as they were
    'import sys\nmods = sys.modules\nLOADED = "json" in mods\nFINDERS = list(sys.meta_path)\n'
    'FINDERS.append(object())\nmods = {}\ndel mods\n' + PLAIN,
    # bound by a loop, a with, a default or a partial, and only read; a loop over the keys
    'import contextlib\nimport functools\nimport operator\nimport sys\n\n\n'
    'def loaded(name, mods=sys.modules, key=sorted):\n    return name in mods\n\n\n'
    'for m in [sys.modules]:\n    N = len(m)\nfor name in sys.modules:\n    pass\n'
    'with contextlib.nullcontext(sys.meta_path) as finders:\n    F = list(finders)\n'
    'operator.setitem({}, "a", 1)\nput = functools.partial(setattr, object())\n' + PLAIN,
])
def test_src_change_that_does_not_reach_into_the_test_run_passes(guarded: Repo,
                                                                 text: str) -> None:
    staged_src(guarded, text)
    result = guarded.run(main)
    assert result.rc == 0, result.out


def test_unchanged_pre_existing_import_is_not_flagged(guarded: Repo) -> None:
    guarded.write(SRC, 'import pytest\n\n\ndef parse(b):\n    return b\n')
    guarded.commit('before the guard saw it')
    staged_src(guarded, 'import pytest\n\n\ndef parse(b):\n    return bytes(b)\n')
    assert guarded.run(main).rc == 0
    # One more of the same is new: matched by what it is, not where it is.
    staged_src(guarded, 'import pytest\n\n\ndef parse(b):\n    import pytest\n'
                        '    return bytes(b)\n')
    result = guarded.run(main)
    assert result.codes == ['OG204'] and f'{SRC}:5:' in result.out, result.out


# Uses through a name an import bound far above, on lines that spell no word of rule 43
# and hold no quote: the walk of only the lines that can hold a site still visits them.
FAR_USES = {
    'builtins alias, assigned': ('import builtins as b\n', '    b.len = None\n',
                                 'assigns builtins.len'),
    'hypothesis internals alias': ('from hypothesis import internal as hi\n',
                                   '    return (\n        hi.conjecture)\n',
                                   'names hypothesis.internal.conjecture'),
    'atexit register alias': ('from atexit import register as r\nimport os as o\n',
                              '    r(\n        o._exit)\n',
                              'registers an atexit handler that exits the process'),
    # a name an assignment binds marks its lines as an import's name does
    'sys.modules assigned alias': ('import sys\nmods = sys.modules\n',
                                   '    mods.update(\n        planted=b)\n',
                                   'changes sys.modules'),
}


@pytest.mark.parametrize('name', sorted(FAR_USES))
def test_new_use_of_an_old_alias_on_a_line_without_a_word_fails(guarded: Repo,
                                                                name: str) -> None:
    imports, use, what = FAR_USES[name]
    body = imports + '\n\ndef parse(b):\n    """Parse."""\n'
    guarded.write(SRC, body + '    return b\n')
    guarded.commit('before the guard saw it')
    staged_src(guarded, body + use)
    result = guarded.run(main)
    assert result.codes == ['OG204'] and what in result.out, result.out


def _reference_and_fast(code: str) -> tuple[list, list]:
    from oracle_guard.reading.test_run_reach import reach_sites

    tree = ast.parse(code)
    return reach_sites(tree), reach_sites(tree, code)


def test_the_walk_of_the_lines_that_can_hold_a_site_finds_every_site() -> None:
    """Every construct and far use, at the top of a module and deep inside a decorated
    method after plain lines, spread over lines, in CRLF and CR files: the line walk finds
    what the full walk finds, site for site."""
    plain = 'x = 1\n\n\ndef g(a):\n    return a + 1\n\n\n'
    cases = [code for code, _ in CONSTRUCTS.values()]
    cases += [imports + '\n\ndef f():\n' + use for imports, use, _ in FAR_USES.values()]
    cases += [
        'import sys as s\nm = getattr(\n    s,\n    "mod"\n    "ules")\n',
        'import os\nX = f"""a\n{os.environ}\n{ "PYTEST_" "ADDOPTS" }\n"""\n',
        'import sys\n\n\n@(\n    sys.settrace)\ndef f():\n    pass\n',
        'from hypothesis import assume as a\n\n\nclass C:\n    def m(self):\n'
        '        return [a for _ in ()]\n',
        'import atexit\n\n\natexit.register(bye)\n\n\ndef bye():\n    raise SystemExit\n',
        # strings whose lines spell no word: a name in escapes, a name split over lines
        'import sys\nNAME = "\\x70ytest"\nm = sys.modules.get(NAME)\n',
        'import importlib\nNAME = (\n    "_py"\n    "test")\nm = importlib.import_module(NAME)\n',
        # an alias of an alias bound below its use, over lines; a walrus in a condition
        'import sys\nb = a\n\n\na = (\n    sys)\nc = b\nc.modules.pop(\n    k)\n',
        'B = __builtins__\n\n\nB[\n    k] = v\n',
        'import sys\nb = sys.modules[\n    "builtins"]\nb.len = (\n    v)\n',
        'import builtins\nwhile (ns := vars(\n        builtins)):\n    ns[k] = (\n        v)\n',
    ]
    for code in cases:
        nested = ('import functools\n' + plain + 'class K:\n    @functools.cache\n'
                  '    def m(self):\n' + textwrap.indent(code, '        ') +
                  '        return 0\n')
        for variant in (code, plain + code + plain, nested):
            for ending in ('\n', '\r\n', '\r'):
                text = variant.replace('\n', ending)
                reference, fast = _reference_and_fast(text)
                assert fast == reference and reference, text


def test_the_line_walk_agrees_with_the_full_walk_on_seeded_modules() -> None:
    """Seeded modules of plain code, imports that bind the names sites resolve through,
    and the constructs, shuffled: the same sites either way (the real-forms run on django,
    sympy and cattrs is benchmarks/reach_lines.py)."""
    import random

    rng = random.Random(43)
    pieces = [code for code, _ in CONSTRUCTS.values()] + [
        'import builtins as bb\n', 'import sys as s2\n', 'from hypothesis import core\n',
        'from threading import settrace as st\n', 'import atexit as ae\n',
        'bb.x = 1\n', 's2.settrace(None)\n', 'core.y\n', 'st(None)\n', 'ae.register(quit)\n',
        'y = [\n    1,\n    2]\n', 'def h():\n    return bb\n', 'z = "plain"\n',
        'class D:\n    def m(self):\n        return s2.modules\n',
        'N = "\\x70ytest"\n', 'E = (\n    "PYTEST"\n    "_ADDOPTS")\n', "H = b'hypo' b'thesis'\n",
        'al = s2\n', 'am = al.modules\n', 'am[k] = v\n', 'an, ao = bb, al\n',
        'ao.meta_path += x\n', 'an.len = None\n',
    ]
    found = 0
    for _ in range(300):
        code = ''.join(rng.choice(pieces) for _ in range(rng.randrange(1, 8)))
        reference, fast = _reference_and_fast(code)
        assert fast == reference, code
        found += bool(reference)
    assert found > 200


def test_renamed_src_file_keeps_its_existing_import(guarded: Repo) -> None:
    guarded.write(SRC, 'import unittest\n\n\ndef parse(b):\n    return b\n')
    guarded.commit('before')
    guarded.git('mv', SRC, 'src/parsing.py')
    guarded.add()
    assert guarded.run(main).rc == 0


# Rule 43 counts a use as new only when the change does not remove the same one (the same
# site, by what it is) from a production file: a move within a file, between files or by
# a rename adds nothing, in a commit, a range and history mode alike.
WATCH = '''\
import sys


class Watch:
    def start(self):
        sys.setprofile(self._seen)

    def stop(self):
        sys.setprofile(None)

    def _seen(self, frame, event, arg):
        return None
'''
RECORD = 'import os\n\n\ndef where():\n    return os.sep\n'


def moved(repo: Repo, files: dict[str, str | None], message: str = 'move') -> list:
    """Commit ``files`` (None: deleted) after a commit that adopts the tree as it is; the
    commit's results as a staged change, a range and history mode give them."""
    adopted = repo.git('rev-parse', 'HEAD').strip()
    repo.write('pyproject.toml', repo.read('pyproject.toml').decode().replace(
        'src = ["src/"]', f'src = ["src/"]\nadopted = "{adopted}"'))
    repo.commit('adopt the tree as it is')
    for path, text in files.items():
        if text is None:
            repo.git('rm', '-q', path)
        else:
            repo.write(path, text, dedent=False)
    repo.add()
    staged = repo.run(main)
    base = repo.git('rev-parse', 'HEAD').strip()
    repo.commit(message)
    return [staged, repo.run(main, '--from-ref', base, '--to-ref', 'HEAD'),
            repo.run(main, '--all-files')]


def test_a_module_split_in_two_adds_no_use(guarded: Repo) -> None:
    guarded.write('src/record.py', RECORD + '\n\n' + WATCH, dedent=False)
    guarded.commit('the record and its watch in one module')
    for result in moved(guarded, {'src/record.py': RECORD, 'src/watch.py': WATCH}):
        assert result.rc == 0, result.out


def test_a_renamed_module_that_leaves_a_shim_adds_no_use(guarded: Repo) -> None:
    """The module moves under a new name and its old name re-exports it: git sees a new
    file next to an edited one, not a rename."""
    guarded.write('src/watching.py', WATCH, dedent=False)
    guarded.commit('the watch')
    for result in moved(guarded, {'src/watch.py': WATCH,
                                  'src/watching.py': 'from watch import Watch  # noqa: F401\n'}):
        assert result.rc == 0, result.out


def test_a_function_moved_up_its_module_adds_no_use(guarded: Repo) -> None:
    guarded.write('src/watch.py', WATCH + '\n\n' + RECORD.replace('import os\n', ''),
                  dedent=False)
    guarded.commit('the watch, then the record')
    moved_up = RECORD.replace('import os\n\n\n', 'import os\n') + '\n\n' + WATCH.replace(
        'import sys\n', '')
    for result in moved(guarded, {'src/watch.py': moved_up}):
        assert result.rc == 0, result.out


def test_a_move_that_adds_a_use_reports_that_one_use(guarded: Repo) -> None:
    guarded.write('src/record.py', RECORD + '\n\n' + WATCH, dedent=False)
    guarded.commit('the record and its watch in one module')
    more = WATCH + '\n\ndef trace_too():\n    sys.settrace(None)\n'
    for result in moved(guarded, {'src/record.py': RECORD, 'src/watch.py': more}):
        assert result.rc == 1 and result.codes == ['OG204'], result.out
        assert 'src/watch.py:16:' in result.out and 'uses sys.settrace' in result.out


def test_one_more_of_a_moved_use_is_one_finding(guarded: Repo) -> None:
    guarded.write('src/record.py', RECORD + '\n\n' + WATCH, dedent=False)
    guarded.commit('the record and its watch in one module')
    more = WATCH + '\n\ndef quiet():\n    sys.setprofile(None)\n'
    for result in moved(guarded, {'src/record.py': RECORD, 'src/watch.py': more}):
        assert result.codes == ['OG204'], result.out
        assert 'src/watch.py:16:' in result.out and 'uses sys.setprofile' in result.out


def test_a_use_removed_in_one_module_vouches_for_no_other_capability(guarded: Repo) -> None:
    """The cheat: a use the base had leaves one module, another capability arrives in a
    second one; what left vouches only for the same use."""
    guarded.write('src/record.py', RECORD + '\n\n' + WATCH, dedent=False)
    guarded.commit('the record and its watch in one module')
    swapped = WATCH.replace('sys.setprofile(None)', 'sys.settrace(None)')
    for result in moved(guarded, {'src/record.py': None, 'src/where.py': RECORD,
                                  'src/watch.py': swapped}):
        assert result.rc == 1 and result.codes == ['OG204'], result.out
        assert 'src/watch.py:9:' in result.out and 'uses sys.settrace' in result.out


def test_test_code_inside_the_src_root_is_not_production_code(guarded: Repo) -> None:
    pyproject = guarded.read('pyproject.toml').decode().replace(
        'src = ["src/"]', 'src = ["src/"]\ntests = ["tests/", "src/app_tests/"]')
    guarded.write('pyproject.toml', pyproject)
    guarded.commit('tests inside the package')
    staged_src(guarded, 'import pytest\n\n\ndef test_parse():\n    assert True\n',
               'src/app_tests/test_inner.py')
    assert guarded.run(main).rc == 0


PLUGIN = '''\
import pytest


def pytest_addoption(parser):
    parser.addoption("--slow", action="store_true")


@pytest.fixture
def slow(request):
    return request.config.getoption("--slow")
'''


def with_exemption(repo: Repo, modules: str) -> str:
    return repo.read('pyproject.toml').decode().replace(
        'src = ["src/"]', f'src = ["src/"]\nsrc-test-imports = {modules}')


def test_src_that_is_a_pytest_plugin_with_src_test_imports_passes(guarded: Repo) -> None:
    guarded.write('pyproject.toml', with_exemption(guarded, '["pytest"]'))
    guarded.commit('this project is a pytest plugin: its own change')
    staged_src(guarded, PLUGIN, 'src/app_plugin.py')
    result = guarded.run(main)
    assert result.rc == 0, result.out


def test_exempt_module_exempts_its_variables_and_only_those(guarded: Repo) -> None:
    guarded.write('pyproject.toml', with_exemption(guarded, '["pytest"]'))
    guarded.commit('this project is a pytest plugin: its own change')
    staged_src(guarded, PLUGIN + '\n\nimport os\nWORKER = os.environ.get("PYTEST_XDIST_WORKER")\n'
                        'SEED = os.environ.get("HYPOTHESIS_SEED")\n', 'src/app_plugin.py')
    result = guarded.run(main)
    assert result.codes == ['OG204'], result.out
    assert "'HYPOTHESIS_SEED'" in result.out and 'PYTEST_XDIST_WORKER' not in result.out


@pytest.mark.parametrize('listed, findings', [('["pytest"]', 0), ('["hypothesis"]', 2)])
def test_a_pytest_plugin_may_change_how_the_run_imports_and_only_a_pytest_plugin(
        guarded: Repo, listed: str, findings: int) -> None:
    # oracle-guard itself plants its canaries in sys.modules and puts a finder first on
    # sys.meta_path: a project that lists pytest is a pytest plugin and may; one that
    # lists only hypothesis (a library shipping strategies) may not.
    guarded.write('pyproject.toml', with_exemption(guarded, listed))
    guarded.commit('the test machinery this project names: its own change')
    staged_src(guarded, 'import sys\nsys.modules["_canary"] = object()\n'
                        'sys.meta_path.insert(0, object())\n' + PLAIN)
    result = guarded.run(main)
    assert result.out.count(': OG204 ') == findings, result.out
    assert result.rc == (1 if findings else 0), result.out


def test_exemption_added_next_to_src_fails(guarded: Repo) -> None:
    guarded.write('pyproject.toml', with_exemption(guarded, '["pytest"]'))
    staged_src(guarded, PLUGIN, 'src/app_plugin.py')
    result = guarded.run(main)
    assert 'OG204' in result.codes, result.out  # the list is read on both sides
    ledger = guarded.run(check_freeze_ledger.main)
    assert 'OG517' in ledger.codes, ledger.out
    assert 'src-test-imports widened by pytest' in ledger.out


def test_exempt_hypothesis_still_may_not_assume_or_reach_its_internals(guarded: Repo) -> None:
    guarded.write('pyproject.toml', with_exemption(guarded, '["hypothesis"]'))
    guarded.commit('a strategies library')
    staged_src(guarded, 'import hypothesis\nfrom hypothesis import strategies as st\n\n\n'
                        'def ints():\n    return st.integers()\n\n\ndef parse(b):\n'
                        '    hypothesis.assume(b != b"2")\n    return b\n')
    result = guarded.run(main)
    assert result.codes == ['OG204'], result.out
    assert 'names hypothesis.assume' in result.out


def test_src_nested_too_deeply_to_read_fails_closed_without_a_traceback(guarded: Repo) -> None:
    deep = 'import sys\nX = ' + ' + '.join(['"a"'] * 1200) + ' + str(sys.modules)\n'
    staged_src(guarded, deep + PLAIN)
    result = guarded.run(main)
    assert result.rc == 1 and result.codes == ['OG204'], result.out + result.err
    assert 'nested too deeply' in result.out


def test_prefilter_skips_plain_code_and_keeps_every_construct() -> None:
    assert not may_reach(PLAIN.encode())
    assert not may_reach(b'import os\nimport json\n\n\ndef f():\n    return os.sep\n')
    for code, _ in CONSTRUCTS.values():
        assert may_reach(code.encode()), code


def test_new_sites_compares_what_not_where() -> None:
    base = ast.parse('import os\nimport pytest\n')
    new = ast.parse(textwrap.dedent('''\
        import pytest
        import os
        X = os.environ["PYTEST_ADDOPTS"]
        '''))
    assert [s.what for s in new_sites(base, new)] == ["names the test-run variable 'PYTEST_ADDOPTS'"]


def test_the_base_is_read_only_when_the_new_side_has_a_site() -> None:
    """Rule 43 compares with the base only what the new side holds: a change whose new
    side has no site (or only exempt ones) reads and parses nothing of the base, and one
    with a site still counts the base's (the base, given as a function, is called)."""
    def unread() -> ast.AST:
        raise AssertionError('the base was read')

    plain = ast.parse('import os\n"""Names pytest in a docstring only."""\n')
    assert new_sites(unread, plain) == []
    exempt_only = ast.parse('from hypothesis import strategies\n')
    assert new_sites(unread, exempt_only, ['hypothesis']) == []
    new = ast.parse('import pytest\nimport pytest as again\n')
    calls = []

    def base() -> ast.AST:
        calls.append('read')
        return ast.parse('import pytest\n')

    assert [s.what for s in new_sites(base, new)] == [s.what for s in new_sites(None, new)][1:]
    assert calls == ['read']


def test_the_other_files_are_read_only_when_a_site_is_left() -> None:
    """A change's other files (deleted, without a site now) vouch for a site another
    file adds, and are read only when some file's own base side leaves a site unmatched."""
    def unread() -> ast.AST:
        raise AssertionError('read')

    watch = ast.parse('import sys\nsys.setprofile(None)\n')
    kept = [(counted_sites(watch), ast.parse('import sys\nsys.setprofile(None)\n')),
            ([], unread)]
    assert added_sites(kept, unread) == [[], []]
    calls = []

    def gone() -> list[ast.AST]:
        calls.append('read')
        return [ast.parse('import sys\nsys.setprofile(None)\nsys.settrace(None)\n')]

    moved = [(counted_sites(ast.parse('import sys\nsys.settrace(None)\n'
                                      'sys.setprofile(None)\nsys.setprofile(None)\n')), None)]
    assert [[s.what for s in f] for f in added_sites(moved, gone)] == [
        ['uses sys.setprofile (a tracer sees the test run)']]
    assert calls == ['read']


def test_src_that_detects_pytest_is_caught_by_the_gate(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The cheat: the bug stays, but src answers right while pytest is loaded."""
    template = build_template(str(tmp_path / 'template'))
    calc = copy_template(template, str(tmp_path / 'repo'))
    cheat = BUGGY_ADD.replace('def add(a, b):\n', 'import sys\n\n\ndef add(a, b):\n'
                              '    if "pytest" in sys.modules:\n        return a + b\n')
    calc.pull_request({'src/calc/__init__.py': cheat})
    plain, ci = calc.both()
    assert plain.rc == 0, plain.out  # the cheat works: the bug is hidden under pytest
    assert ci.rc == 1, ci.out
    assert any(line.startswith('src/calc/__init__.py:5:') for line in ci.lines('OG204')), ci.out


def test_src_reaching_into_the_run_fails_in_range_and_history_mode_too(guarded: Repo) -> None:
    """Rule 50: the same verdict however the change is judged."""
    base = guarded.git('rev-parse', 'HEAD').strip()
    guarded.write(SRC, 'import os\n\n\ndef parse(b):\n    if os.environ.get("PYTEST_CURRENT_TEST"):'
                       '\n        return b\n    return bytes(b)\n')
    guarded.commit('cheat, committed with --no-verify')
    ranged = guarded.run(main, '--from-ref', base, '--to-ref', 'HEAD')
    history = guarded.run(main, '--all-files')
    for result in (ranged, history):
        assert result.rc == 1 and 'OG204' in result.codes, result.out
        assert f'{SRC}:5:' in result.out
