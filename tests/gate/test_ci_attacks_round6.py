"""The gate played as a cheating agent against seal95's mechanisms (benchmarks/ATTACKS.md,
attacks 101-108): the compile's digest (OG737, rules 44, 45) and the blob ids listed before
the install step (OG734, rule 44). What the gate catches: 101 and 102 (closed after the
round: every module of the test roots compiled from source in the gate's runs), 104, 106,
107 and 108.

The repository is ``dd`` adopted with ``oracle-guard init`` with round 3's properties
conftest (it imports the package, for its fixtures), then the bug on ``main`` (``dedupe``
drops the largest value past three distinct ones). The attacks that get through (101, 102,
103, 105, 105b) are described in ATTACKS.md and reproduced by benchmarks/attacks_open/round6.py,
not written here: this file asserts only what the gate catches. Every attacker touches only
files in its own checkout, its git folder, a folder beside the checkout and the byte-code
cache folder (``PYTHONPYCACHEPREFIX``) of its own run's tree.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from ci_repo import CiRepo
from ci_repo import Run
from ci_repo import copy_template
from ci_repo import git
from ci_repo import write
from test_ci_attacks import BUG
from test_ci_attacks import GOOD
from test_ci_attacks import PROPERTY
from test_ci_attacks import PROPERTY_ID
from test_ci_attacks import PYTEST
from test_ci_attacks import UNIT_TESTS_FOR_THE_BUG
from test_ci_attacks_round3 import adopt_dd
from test_ci_attacks_round3 import attack
from test_ci_attacks_round3 import property_failed_in_the_reference_run
from test_ci_attacks_round3 import PROPERTIES_CONFTEST
from test_ci_attacks_round5 import COMPILED_ELSEWHERE
from test_ci_attacks_round5 import frozen_ledger
from test_ci_attacks_round5 import SELF_WEAKENING_SRC

INSTALL = ('--install-command', 'python tools/install.py')


@pytest.fixture(scope='module')
def template6(tmp_path_factory: pytest.TempPathFactory) -> str:
    """dd adopted with a properties conftest that imports the package (src runs before the
    property is compiled)."""
    return adopt_dd(str(tmp_path_factory.mktemp('round6') / 'repo'),
                    {'tests/properties/conftest.py': PROPERTIES_CONFTEST})


@pytest.fixture
def repo(template6: str, tmp_path) -> CiRepo:  # type: ignore[no-untyped-def]
    return copy_template(template6, str(tmp_path / 'repo'))


def gate_with_install(repo: CiRepo, files: dict[str, str]) -> Run:
    """The pull request, plain pytest after the same install step (green: the cheat works
    without the gate), and the gate with ``python tools/install.py`` as its install step,
    which must be red."""
    repo.pull_request(files, bug=False)
    plain = copy_template(repo.path, repo.path + '-plain')
    subprocess.run([sys.executable, 'tools/install.py'], cwd=plain.path, env=plain.env(),
                   check=True)
    plain_run = plain.finish(plain.start(PYTEST))
    assert plain_run.rc == 0, plain_run.out
    ci = repo.finish(repo.start([sys.executable, '-I', *repo.ci_args(PYTEST, *INSTALL)[1:]]))
    assert ci.rc == 1, ci.out
    return ci



# -- 104: the install step rewrites the freeze ledger's loose object in place ----------------
# The pull request does not touch the ledger: its blob is the same at base and HEAD, and the
# change rules see no freeze added. The install step writes, zlib-compressed, a ledger that
# freezes the three failing tests (budget 3) over that blob's loose object, and the same
# bytes into the checkout: the test command's plugin takes the failures as frozen. The
# audit reads the ledger (and the rest of what it believes of HEAD) before the install step:
# the plugin's skips are explained by no freeze (OG706). The reference tree is built
# from the blobs listed before the install step and checked against their ids (OG734, rule
# 44).
REWRITING_THE_LEDGER = r"""import os
import subprocess
import zlib

LEDGER = 'tests/freeze_ledger.yaml'
TEXT = %r
oid = subprocess.run(['git', 'rev-parse', 'HEAD:' + LEDGER], capture_output=True, check=True,
                     text=True).stdout.strip()
loose = os.path.join('.git', 'objects', oid[:2], oid[2:])
os.chmod(loose, 0o644)  # raises if the blob is not a loose object: the scenario needs one
with open(loose, 'wb') as f:
    f.write(zlib.compress(b'blob %%d\0' %% len(TEXT) + TEXT))
with open(LEDGER, 'wb') as f:  # what the test command's plugin reads
    f.write(TEXT)
"""


def rewriting_the_ledger() -> str:
    return REWRITING_THE_LEDGER % frozen_ledger().encode()


def test_a_ledger_blob_rewritten_by_the_install_step_is_not_the_blob(
        repo: CiRepo) -> None:
    ci = gate_with_install(repo, {'tools/install.py': rewriting_the_ledger()})
    assert any('reference run: git gave other bytes for `tests/freeze_ledger.yaml` than the '
               'blobs the revisions named' in line for line in ci.lines('OG734')), ci.out
    # The test command's audit read the ledger before the install step: the forged freezes
    # explain none of the skips the plugin made of them (OG706).
    for test in ('tests/test_dd.py::test_four', 'tests/test_dd.py::test_many',
                 'tests/properties/test_dd_props.py::test_dedupe_matches_set'):
        assert any(f'{test} was skipped' in line and 'no live freeze explains it' in line
                   for line in ci.lines('OG706')), ci.out


# -- 107, 108: the base property's blob moved where git still finds it (rule 44) -------------
# 107: the loose object taken out of .git/objects and written, weakened, under the same name
# into an object store of its own that .git/objects/info/alternates names. 108: .git made a
# file (``gitdir: ...``, as a worktree's is) naming a copy of the git folder beside the
# checkout, whose loose object of the property is the weakened one. Both write the weakened
# bytes into the checkout. Every blob of the reference tree is checked against the id listed
# before the install step (OG734), and the test command compiled other bytes than the
# committed ones (OG737).
_OBJECT_HEAD = r"""import os
import shutil
import subprocess
import zlib

PROP = 'tests/properties/test_dd_props.py'
oid = subprocess.run(['git', 'rev-parse', 'HEAD:' + PROP], capture_output=True, check=True,
                     text=True).stdout.strip()
with open(PROP, 'rb') as f:
    weak = f.read().replace(b'== sorted(set(xs))', b'== dedupe(xs)')
data = zlib.compress(b'blob %d\0' % len(weak) + weak)


def write_object(store):
    os.makedirs(os.path.join(store, oid[:2]), exist_ok=True)
    path = os.path.join(store, oid[:2], oid[2:])
    if os.path.exists(path):
        os.chmod(path, 0o644)
    with open(path, 'wb') as f:
        f.write(data)


"""
ALTERNATES_INSTALL = _OBJECT_HEAD + r"""# raises if the blob is not a loose object
os.remove(os.path.join('.git', 'objects', oid[:2], oid[2:]))
other = os.path.abspath(os.path.join('.git', 'other-objects'))
write_object(other)
os.makedirs(os.path.join('.git', 'objects', 'info'), exist_ok=True)
with open(os.path.join('.git', 'objects', 'info', 'alternates'), 'w') as f:
    f.write(other + '\n')
with open(PROP, 'wb') as f:  # what the test command collects
    f.write(weak)
"""
GITDIR_FILE_INSTALL = _OBJECT_HEAD + r"""# a copy of the git folder beside the checkout
elsewhere = os.path.abspath('.') + '.gitdir'
shutil.copytree('.git', elsewhere)
write_object(os.path.join(elsewhere, 'objects'))
shutil.rmtree('.git')
with open('.git', 'w') as f:
    f.write('gitdir: ' + elsewhere + '\n')
with open(PROP, 'wb') as f:  # what the test command collects
    f.write(weak)
"""


@pytest.mark.parametrize('install', [ALTERNATES_INSTALL, GITDIR_FILE_INSTALL],
                         ids=['alternates', 'gitdir-file'])
def test_a_property_blob_moved_where_git_finds_it_is_not_the_blob(
        repo: CiRepo, install: str) -> None:
    ci = gate_with_install(repo, {'tools/install.py': install,
                                  'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG})
    assert any('reference run: git gave other bytes for `tests/properties/test_dd_props.py` '
               'than the blobs the revisions named' in line for line in ci.lines('OG734')), \
        ci.out
    assert any(line.startswith('tests/properties/test_dd_props.py:1:1: OG737 ' +
                               COMPILED_ELSEWHERE + ' its committed bytes')
               for line in ci.lines('OG737')), ci.out


# -- 106: the assertion rewriter turned off, then 95's move ---------------------------------
# ``--assert=plain`` in the pull request's addopts: the test command imports the property
# with Python's own import system, so no compile digest is sent there. src, imported by the
# properties conftest, appends a ``def sorted`` to the property in its run's tree (the test
# function's code stays its source's), headed by the lines that put the original bytes back
# as the module runs. The pytest options are an oracle change with production code (rule
# 11: OG201, OG740), and the reference run, under the base's options, compiles with the
# rewriter: OG737 (rule 45).
APPENDING_SRC = SELF_WEAKENING_SRC.replace(
    "strong.replace(b'== sorted(set(xs))', b'== dedupe(xs)')",
    "strong + b'\\n\\ndef sorted(xs):\\n    return dedupe(list(xs))\\n'")
assert APPENDING_SRC != SELF_WEAKENING_SRC


def test_the_rewriter_turned_off_does_not_hide_a_property_rewritten_before_its_import(
        repo: CiRepo) -> None:
    with open(f'{repo.path}/pyproject.toml', encoding='utf-8') as f:
        pyproject = f.read()
    plain_assert = pyproject.replace('pythonpath = ["src"]\n',
                                     'pythonpath = ["src"]\naddopts = "--assert=plain"\n')
    assert plain_assert != pyproject
    _, ci = attack(repo, {'src/dd/__init__.py': APPENDING_SRC, 'pyproject.toml': plain_assert,
                          'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}, plain_rc=0)
    assert any('pyproject.toml: [tool.pytest.ini_options]' in line
               for line in ci.lines('OG740')), ci.out
    assert any('reference run: ' + COMPILED_ELSEWHERE + ' the bytes the gate wrote' in line
               for line in ci.lines('OG737')), ci.out



# -- 101: a rewritten-module cache planted for pytest's rewriter to trust ---------------
# pytest's assertion rewriter looks for its own cached compile of a test file before it
# compiles it (``_read_pyc``: `__pycache__/<name>.<tag>-pytest-<version>.pyc`, or under
# ``sys.pycache_prefix``), and pytest 9 takes one whose header holds the first 8 bytes of
# the source's hash. src, imported by the base's properties conftest before the property is
# collected, writes such a cache for the property in its run's tree: the gate's own bytes'
# hash in the header, their code with a ``def sorted`` appended (the property then compares
# ``dedupe(xs)`` with ``dedupe`` of the same list). The tree's bytes never change. In the
# gate's runs the plugin makes ``_read_pyc`` find nothing (rule 45): the property is compiled
# from its bytes and fails, in the test command and in the reference run.
PLANTING_SRC = """\
import importlib.util
import marshal
import os
import sys


def _plant(root=None):
    tests = os.path.join(root or os.getcwd(), 'tests', 'properties')
    prop = os.path.join(tests, 'test_dd_props.py')
    try:
        with open(prop, 'rb') as f:
            source = f.read()
    except OSError:
        return
    name = ''.join(map(chr, (112, 121, 116, 101, 115, 116)))
    tool = sys.modules.get(name)
    if tool is None:
        return
    weak = source + b'\\n\\ndef sorted(xs):\\n    return dedupe(list(xs))\\n'
    code = compile(weak, prop, 'exec', dont_inherit=True)
    folder = os.path.join(tests, '__py' + 'cache__')
    if sys.pycache_prefix:  # where pytest's rewriter looks then (get_cache_dir)
        folder = os.path.join(sys.pycache_prefix, *tests.split(os.sep)[1:])
    os.makedirs(folder, exist_ok=True)
    tail = '.%s-%s-%s.pyc' % (sys.implementation.cache_tag, name, tool.__version__)
    with open(os.path.join(folder, 'test_dd_props' + tail), 'wb') as f:
        f.write(importlib.util.MAGIC_NUMBER + b'\\x03\\x00\\x00\\x00' +
                importlib.util.source_hash(source) + marshal.dumps(code))


_plant()


""" + BUG
# 101b: the same, and src puts back a reader of the cache that trusts it (undoing the
# plugin's, in the process it shares with it). No compile of the property is said to the
# gate, the module holds a ``sorted`` its bytes do not compile to, and the property calls
# it as a name its source never binds: OG737 twice (rule 45) and OG714.
TRUSTING_SRC = PLANTING_SRC.replace('\n_plant()\n', """
_plant()


def _trusting(source, pyc, trace=None):
    if 'test_dd_props' not in str(pyc):
        return None
    try:
        with open(pyc, 'rb') as f:
            f.read(16)
            return marshal.load(f)
    except (OSError, ValueError, EOFError):
        return None


sys.modules['_' + ''.join(map(chr, (112, 121, 116, 101, 115, 116))) +
            '.assertion.rewrite']._read_pyc = _trusting
""")
assert TRUSTING_SRC != PLANTING_SRC
NOT_COMPILED_HERE = ('tests/properties/test_dd_props.py, a file of the oracle, ran without '
                     'being compiled from its bytes in the run')
NOT_ITS_CODE = ('tests/properties/test_dd_props.py, a file of the oracle, ran code its bytes '
                'do not compile to (sorted at line')


# 105c's payload without its chain: the pull request's install script (standing for a
# setup.py that ``pip install -e .`` runs) plants the same cache in the checkout.
PLANTING_INSTALL = """\
import os
import sys

import pytest  # noqa: F401 -- the cache's name carries pytest's version

sys.path.insert(0, os.path.join(os.getcwd(), 'src'))
from dd import _plant  # noqa: E402

_plant(os.getcwd())
"""


def test_a_rewritten_module_cache_planted_for_the_rewriter_is_not_what_runs(
        repo: CiRepo) -> None:
    _, ci = attack(repo, {'src/dd/__init__.py': PLANTING_SRC,
                          'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}, plain_rc=0)
    # compiled from its bytes in both runs: the property fails, as it should
    assert f'FAILED {PROPERTY_ID}' in ci.out, ci.out
    assert ci.summary.endswith('test command exited 1'), ci.out
    assert property_failed_in_the_reference_run(ci), ci.out
    assert not ci.lines('OG737'), ci.out


def test_a_rewritten_module_cache_planted_by_the_install_step_is_not_what_runs(
        repo: CiRepo) -> None:
    ci = gate_with_install(repo, {
        'src/dd/__init__.py': PLANTING_SRC.replace('\n_plant()\n', '\n'),
        'tools/install.py': PLANTING_INSTALL, 'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG})
    assert f'FAILED {PROPERTY_ID}' in ci.out, ci.out
    assert ci.summary.endswith('test command exited 1'), ci.out
    assert not ci.lines('OG737'), ci.out


def test_a_cache_the_code_under_test_makes_pytest_trust_again_is_seen(repo: CiRepo) -> None:
    _, ci = attack(repo, {'src/dd/__init__.py': TRUSTING_SRC,
                          'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}, plain_rc=0)
    compiled = ci.lines('OG737')
    for run in ('', 'reference run: '):
        assert any(line.startswith('tests/properties/test_dd_props.py:1:1: OG737 ' + run +
                                   NOT_COMPILED_HERE) for line in compiled), ci.out
        assert any(line.startswith('tests/properties/test_dd_props.py:1:1: OG737 ' + run +
                                   NOT_ITS_CODE) for line in compiled), ci.out
    assert any(PROPERTY_ID in line and "'sorted' was added to the property's module" in line
               for line in ci.lines('OG714')), ci.out


# -- 102: a helper module of the property, rewritten and put back -------------------------
# The base's property takes its expected value from a helper beside it (a common layout:
# ``tests/properties/_expected.py``), which Python's own import system loads (pytest
# rewrites test files and conftests only). src, imported by the base's properties conftest,
# rewrites the helper in its run's tree, headed by two lines that put the original bytes
# back as it is imported (95's move, on the module next to the property). The plugin's
# import hook compiles every module of the test roots from the bytes it read and says their
# digest (rule 45): OG737 in both runs.
HELPER = 'def expected(xs):\n    return sorted(set(xs))\n'
HELPER_PROPERTY = PROPERTY.replace(
    'from dd import dedupe\n', 'from _expected import expected\nfrom dd import dedupe\n'
).replace('== sorted(set(xs))', '== expected(xs)')
assert HELPER_PROPERTY.count('expected') == 3
HELPER_WEAKENING_SRC = SELF_WEAKENING_SRC.replace(
    "'properties', 'test_dd_props.py')", "'properties', '_expected.py')").replace(
    "b'== sorted(set(xs))' not in strong or ", '').replace(
    "strong.replace(b'== sorted(set(xs))', b'== dedupe(xs)')",
    "b'\\n\\ndef expected(xs):\\n    from dd import dedupe\\n    return dedupe(xs)\\n'")
assert HELPER_WEAKENING_SRC.count('_expected.py') == 1 and 'sorted(set' not in \
    HELPER_WEAKENING_SRC.split('def dedupe')[0]
HELPER_COMPILED_ELSEWHERE = ('tests/properties/_expected.py, a file of the oracle, was '
                             'compiled from other bytes than')


def with_a_helper(repo: CiRepo) -> CiRepo:
    """The base's property takes its expected value from ``_expected.py`` (a commit of the
    owner's on main: the strategy and settings the lock holds are the same)."""
    write(repo.path, {'tests/properties/_expected.py': HELPER,
                      'tests/properties/test_dd_props.py': HELPER_PROPERTY})
    git(repo.path, 'add', '-A')
    git(repo.path, 'commit', '-q', '-m', 'properties: the expected value from a helper')
    return repo


def test_a_helper_of_the_property_rewritten_before_its_import_fails_ci(repo: CiRepo) -> None:
    _, ci = attack(with_a_helper(repo), {'src/dd/__init__.py': HELPER_WEAKENING_SRC,
                                         'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG},
                   plain_rc=0)
    compiled = ci.lines('OG737')
    assert any(line.startswith('tests/properties/_expected.py:1:1: OG737 ' +
                               HELPER_COMPILED_ELSEWHERE + ' its committed bytes')
               for line in compiled), ci.out
    assert any(line.startswith('tests/properties/_expected.py:1:1: OG737 reference run: ' +
                               HELPER_COMPILED_ELSEWHERE + ' the bytes the gate wrote')
               for line in compiled), ci.out


def test_an_honest_fix_with_a_helper_and_a_conftest_importing_src_passes_ci(
        repo: CiRepo) -> None:
    """The control: every module of the test roots compiled from source, the helper's and
    conftest's compiles said, the whole modules' code judged, and nothing to find."""
    repo = with_a_helper(repo)
    repo.pull_request({'src/dd/__init__.py': GOOD}, bug=False)
    ci = repo.finish(repo.start([sys.executable, '-I', *repo.ci_args(PYTEST)[1:]]))
    assert ci.rc == 0, ci.out
