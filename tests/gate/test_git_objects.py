"""What the gate reads of the repository comes from git's objects as listed before the
pull request's code ran, never from a file or object that code could rewrite.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zlib

import pytest

from builders.ci_repo import adopt
from builders.ci_repo import CiRepo
from builders.ci_repo import git
from builders.ci_repo import Run
from builders.dedupe import BUG
from builders.dedupe import COMPILED_ELSEWHERE
from builders.dedupe import DD_PYTEST
from builders.dedupe import DD_UNIT
from builders.dedupe import DD_UNIT_FOR_THE_BUG
from builders.dedupe import frozen_ledger
from builders.dedupe import gate_with_install
from builders.dedupe import GOOD
from builders.dedupe import IMPL_PROPERTY
from builders.dedupe import impls
from builders.dedupe import PROPERTY_ID
from builders.dedupe import PYPROJECT
from builders.dedupe import UNIT_TESTS_FOR_THE_BUG
from oracle_guard.commands.ci import range_context
from oracle_guard.gate.reference import prepare_reference_runs

pytestmark = pytest.mark.reference_run


# -- the install step replaces the base property's blob (git replace) ----------------------
# The change rules read the change before the install step; the reference tree, the
# inventory and the twins are read from git objects after it, with the pull request's own
# .git. `git replace` makes every git command (cat-file --batch too) answer the base
# property's blob id with a weakened copy; the checkout's file gets the same bytes for the
# test command. Nothing is left running; no file of the tree changes while its run goes on.
REPLACING_INSTALL = r'''import subprocess

PROP = 'tests/properties/test_dd_props.py'


def git(*args, data=None):
    return subprocess.run(('git',) + args, input=data, capture_output=True,
                          check=True).stdout.decode().strip()


with open(PROP, 'rb') as f:
    strong = f.read()
weak = strong.replace(b'== sorted(set(xs))', b'== dedupe(xs)')
git('replace', '-f', git('rev-parse', 'HEAD:' + PROP),
    git('hash-object', '-w', '--stdin', data=weak))
with open(PROP, 'wb') as f:  # what the test command collects
    f.write(weak)
'''


def install_step_attack(repo: CiRepo, install: str) -> Run:
    """The pull request's install step is ``install`` (its own script) and the unit tests are
    rewritten to the bug: the gate, run with that install step, exits 1."""
    repo.pull_request({'tools/install.py': install,
                       'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}, bug=False)
    ci = repo.finish(repo.start([sys.executable, '-I', *repo.ci_args(
        DD_PYTEST, '--install-command', 'python tools/install.py')[1:]]))
    assert ci.rc == 1, ci.out
    return ci


def test_a_replacement_object_written_by_the_install_step_is_not_read_by_the_gate(
        dd: CiRepo) -> None:  # noqa: F811 -- the fixture
    # Every git process of the gate runs with GIT_NO_REPLACE_OBJECTS, so
    # the reference tree holds the base property's real bytes (OG730, rule 44).
    ci = install_step_attack(dd, REPLACING_INSTALL)
    assert any(PROPERTY_ID in line and 'failed against your src/' in line
               for line in ci.lines('OG730')), ci.out


# -- 94's variant: the install step rewrites the base property's loose object in place ------
# git does not check an object's bytes against its name when it reads it: the install step
# writes the weakened property, zlib-compressed, over the loose object file of the property's
# blob (the same at base and HEAD), and the same bytes into the checkout. The gate lists both
# revisions' blob ids before the install step and checks every blob a tree is built from
# against them (OG734, rule 44); the test command compiled other bytes than the committed
# ones (OG737). (A different object under the same name in objects/info/alternates is read
# the same way and checked the same way.)
REWRITING_THE_OBJECT = r'''import os
import subprocess
import zlib

PROP = 'tests/properties/test_dd_props.py'
oid = subprocess.run(['git', 'rev-parse', 'HEAD:' + PROP], capture_output=True, check=True,
                     text=True).stdout.strip()
loose = os.path.join('.git', 'objects', oid[:2], oid[2:])
with open(PROP, 'rb') as f:
    weak = f.read().replace(b'== sorted(set(xs))', b'== dedupe(xs)')
os.chmod(loose, 0o644)  # raises if the blob is not a loose object: the scenario needs one
with open(loose, 'wb') as f:
    f.write(zlib.compress(b'blob %d\0' % len(weak) + weak))
with open(PROP, 'wb') as f:  # what the test command collects
    f.write(weak)
'''


def test_a_loose_object_rewritten_in_place_by_the_install_step_is_not_the_blob(
        dd: CiRepo) -> None:  # noqa: F811 -- the fixture
    ci = install_step_attack(dd, REWRITING_THE_OBJECT)
    assert any('reference run: git gave other bytes for `tests/properties/test_dd_props.py` '
               'than the blobs the revisions named' in line for line in ci.lines('OG734')), \
        ci.out
    assert any(line.startswith('tests/properties/test_dd_props.py:1:1: OG737 ' +
                               COMPILED_ELSEWHERE + ' its committed bytes')
               for line in ci.lines('OG737')), ci.out


# -- the install step rewrites the freeze ledger's loose object in place ----------------
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
        dd6: CiRepo) -> None:
    ci = gate_with_install(dd6, {'tools/install.py': rewriting_the_ledger()})
    assert any('reference run: git gave other bytes for `tests/freeze_ledger.yaml` than the '
               'blobs the revisions named' in line for line in ci.lines('OG734')), ci.out
    # The test command's audit read the ledger before the install step: the forged freezes
    # explain none of the skips the plugin made of them (OG706).
    for test in ('tests/test_dd.py::test_four', 'tests/test_dd.py::test_many',
                 'tests/properties/test_dd_props.py::test_dedupe_matches_set'):
        assert any(f'{test} was skipped' in line and 'no live freeze explains it' in line
                   for line in ci.lines('OG706')), ci.out


# -- the base property's blob moved where git still finds it (rule 44) -------------
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
        dd6: CiRepo, install: str) -> None:
    ci = gate_with_install(dd6, {'tools/install.py': install,
                                  'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG})
    assert any('reference run: git gave other bytes for `tests/properties/test_dd_props.py` '
               'than the blobs the revisions named' in line for line in ci.lines('OG734')), \
        ci.out
    assert any(line.startswith('tests/properties/test_dd_props.py:1:1: OG737 ' +
                               COMPILED_ELSEWHERE + ' its committed bytes')
               for line in ci.lines('OG737')), ci.out


# -- the base collection's tree read from git after the install step -------------------
# The property is parametrized over ``dd.IMPLS``; the bug is in
# ``_fast``; the pull request stops declaring ``fast``. The base revision's collection (rule
# 39b) says ``[fast]`` ran at the base. The install step rewrites the loose object of the
# base's ``src/dd/__init__.py`` with the pull request's bytes, and src puts it back in the
# test command: the base collection's tree, written after the install step, would collect
# no ``[fast]`` either. Its blobs are checked against the base's listing taken before the
# install step (rule 44): OG734.
REWRITING_THE_BASE_SRC = r"""import os
import subprocess
import zlib

SRC = 'src/dd/__init__.py'
oid = subprocess.run(['git', 'rev-parse', 'main:' + SRC], capture_output=True, check=True,
                     text=True).stdout.strip()
with open(SRC, 'rb') as f:
    text = f.read()  # the pull request's src: no ``fast``
loose = os.path.join('.git', 'objects', oid[:2], oid[2:])
os.chmod(loose, 0o644)  # raises if the blob is not a loose object: the scenario needs one
with open(loose, 'rb') as f:
    kept = f.read()
with open(os.path.join('.git', 'og-orig-' + oid), 'wb') as f:  # for src to put back
    f.write(kept)
with open(loose, 'wb') as f:
    f.write(zlib.compress(b'blob %d\0' % len(text) + text))
"""


# The test command (src, at import, in the checkout only) puts the base's blob back once the
# base collection's tree has been written (before the test command starts): the new-test
# run, which reads the base's src after the test command, then finds the true blob.
RESTORING = """import glob as _glob
import os as _os

for _kept in _glob.glob(_os.path.join('.git', 'og-orig-*')):
    _oid = _kept.rsplit('-', 1)[1]
    with open(_kept, 'rb') as _f:
        _data = _f.read()
    with open(_os.path.join('.git', 'objects', _oid[:2], _oid[2:]), 'wb') as _f:
        _f.write(_data)
    _os.remove(_kept)


"""


def test_a_base_blob_rewritten_for_the_base_collection_is_not_the_blob(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = str(tmp_path / 'repo')
    dd7 = adopt(path, PYPROJECT, {
        'src/dd/__init__.py': GOOD, 'tests/test_dd.py': DD_UNIT,
        'tests/properties/test_dd_props.py': IMPL_PROPERTY,
    }, after=[{'src/dd/__init__.py': impls("Impl('pure', _pure), Impl('fast', _fast)",
                                          '_fast')},
              {'src/dd/__init__.py': impls("Impl('pure', _pure), Impl('fast', _fast)",
                                          '_fast', buggy=True)}])
    dd7.pull_request({'src/dd/__init__.py': RESTORING + impls("Impl('pure', _pure)", '_fast',
                                                               buggy=True),
                       'tools/install.py': REWRITING_THE_BASE_SRC,
                       'tests/test_dd.py': DD_UNIT_FOR_THE_BUG}, bug=False)
    # One after the other: plain pytest imports src too, and beside the gate in the same
    # checkout it would put the blob back before the base collection reads it.
    plain = dd7.finish(dd7.start(DD_PYTEST))
    assert plain.rc == 0, plain.out  # the bug is out of reach: the premise of the attack
    ci = dd7.ci(DD_PYTEST, '--install-command', 'python tools/install.py')
    assert ci.rc == 1, ci.out
    assert any('base collection: git gave other bytes for `src/dd/__init__.py`' in line
               for line in ci.lines('OG734')), ci.out


# -- the ledger the reference run is judged with, rewritten in git by the test command --
# The judge of the reference run reads the oracle side's freeze ledger from git when the
# run ends, after the test command (and the freeze reruns the base's and the head's). src
# answers right where the working folder holds a ``.git`` (the checkout: the test command;
# no test edited), keeps the bug elsewhere (the reference tree), and in the checkout
# rewrites the loose object of ``tests/freeze_ledger.yaml`` (one blob at base and head)
# with a ledger freezing the three failing tests (budget 3), after the reference tree was
# written. The judge reads both revisions through their listing taken before the install
# step, and checks every blob against it (rule 44): OG734.
LEDGER_AFTER_THE_TEST_COMMAND_SRC = '''\
import os
import subprocess
import zlib

LEDGER = %r
if os.path.isdir('.git'):
    _oid = subprocess.run(['git', 'rev-parse', 'HEAD:tests/freeze_ledger.yaml'],
                          capture_output=True, text=True).stdout.strip()
    _loose = os.path.join('.git', 'objects', _oid[:2], _oid[2:])
    if _oid and os.path.exists(_loose):
        os.chmod(_loose, 0o644)
        with open(_loose, 'wb') as _f:
            _f.write(zlib.compress(b'blob %%d\\0' %% len(LEDGER) + LEDGER))

    def dedupe(xs):
        return sorted(set(xs))
else:
%s''' % (frozen_ledger().encode(), ''.join('    ' + line + '\n' if line else '\n'
                                          for line in BUG.splitlines()))


def test_a_ledger_blob_rewritten_by_the_test_command_is_not_the_blob(
        dd: CiRepo) -> None:  # noqa: F811 -- the fixture
    dd.pull_request({'src/dd/__init__.py': LEDGER_AFTER_THE_TEST_COMMAND_SRC}, bug=False)
    ci = dd.finish(dd.start([sys.executable, '-I', *dd.ci_args(DD_PYTEST)[1:]]))
    assert ci.rc == 1, ci.out
    assert any('reference and evidence runs: git gave other bytes for '
               '`tests/freeze_ledger.yaml` (base ' in line for line in ci.lines('OG734')), ci.out


# The freeze reruns (rule 48) compare the base's ledger with the pull request's, both read
# after the test command. The pull request freezes three tests as order-dependent; then
# (as the install step or the test command could) the loose object of the head's ``tests``
# tree is rewritten to say the ledger is a symlink (a ledger refused: no row, no rerun),
# and the base's ledger blob with the head's rows (none of them new: no rerun either).
def _rewrite_loose(root: str, oid: str, kind: str, body: bytes) -> None:
    loose = os.path.join(root, '.git', 'objects', oid[:2], oid[2:])
    os.chmod(loose, 0o644)  # raises if the object is not a loose one: the test needs one
    with open(loose, 'wb') as f:
        f.write(zlib.compress(b'%s %d\0' % (kind.encode(), len(body)) + body))


def test_the_freeze_reruns_read_both_ledgers_as_listed_before_the_install_step(
        dd: CiRepo, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811 -- the fixture
    dd.pull_request({'tests/freeze_ledger.yaml': frozen_ledger()}, bug=False)
    monkeypatch.chdir(dd.path)
    runs = prepare_reference_runs(range_context('main'), sys.executable)  # before the step
    try:
        tests = git(dd.path, 'rev-parse', 'pr:tests').strip()
        listing = '\n'.join(
            ('120000' + row[6:]) if row.endswith('\tfreeze_ledger.yaml') else row
            for row in git(dd.path, 'ls-tree', tests).splitlines()) + '\n'
        forged = subprocess.run(['git', 'mktree'], cwd=dd.path, input=listing, text=True,
                                capture_output=True, check=True).stdout.strip()
        body = subprocess.run(['git', 'cat-file', 'tree', forged], cwd=dd.path,
                              capture_output=True, check=True).stdout
        _rewrite_loose(dd.path, tests, 'tree', body)
        head = runs.ledger(runs.head)
        assert head is not None and [row.id for row in head.rows] == ['FZ-1', 'FZ-2', 'FZ-3']
        assert runs.forged_findings() == []  # the listing answered: no blob was misread
        _rewrite_loose(dd.path, git(dd.path, 'rev-parse', 'main:tests/freeze_ledger.yaml')
                       .strip(), 'blob', frozen_ledger().encode())
        runs.ledger(runs.base)
        found = runs.forged_findings()
        assert [f.code for f in found] == ['OG734'], found
        assert 'git gave other bytes for `tests/freeze_ledger.yaml` (base ' in found[0].message
    finally:
        runs.close()
