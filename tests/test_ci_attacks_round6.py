"""The gate played as a cheating agent against seal95's mechanisms (benchmarks/ATTACKS.md,
attacks 101-108): the compile's digest (OG737, rules 44, 45) and the blob ids listed before
the install step (OG734, rule 44). What the gate catches: 104, 106, 107 and 108.

The repository is ``dd`` adopted with ``oracle-guard init`` with round 3's properties
conftest (it imports the package, for its fixtures), then the bug on ``main`` (``dedupe``
drops the largest value past three distinct ones). The attacks that get through (101, 102,
103, 105, 105b) are described in ATTACKS.md and reproduced by benchmarks/attacks_open/round6.py,
not written here: this file asserts only what the gate catches. Every attacker touches only
files in its own checkout, its git folder and a folder beside the checkout.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from ci_repo import CiRepo
from ci_repo import Run
from ci_repo import copy_template
from test_ci_attacks import PYTEST
from test_ci_attacks import UNIT_TESTS_FOR_THE_BUG
from test_ci_attacks_round3 import adopt_dd
from test_ci_attacks_round3 import attack
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
# bytes into the checkout: the test command's plugin and its audit, which reads the ledger
# from git after the install step, take the failures as frozen. The reference tree is built
# from the blobs listed before the install step and checked against their ids: OG734
# (rule 44) is the only finding, and it is enough.
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
