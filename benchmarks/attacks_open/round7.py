"""Reproduce the attacks of ATTACKS.md 111-... (round 7: the uncached compile, the helper
hook, the frozen sweep and the installed entry points, played on branch attack7 at aafb30c,
the integration of seal101 at 1719466 and seal105 at c773c8a).

    python benchmarks/attacks_open/round7.py [NAME ...] [--keep DIR] [--test-env PYTHON]

Each scenario builds the repository of tests/test_ci_attacks.py (``dd``, adopted with
``oracle-guard init``, then the bug on ``main``: ``dedupe`` drops the largest value past
three distinct ones), commits the pull request on branch ``pr``, runs plain ``python -m
pytest -q -p no:cacheprovider`` in a copy of the checkout (after the same install step, if
any), then the gate as the action runs it, ``python -I -m oracle_guard.cli ci --base main
[options] -- python -m pytest -q -p no:cacheprovider``, and prints "plain pytest exit N" and
"gate exit N" per scenario with the gate's findings.

Open when played (gate exit 0 with the bug in place): 111 (a module object in sys.modules
under the helper's name), 111b (a finder first on sys.meta_path answering for the helper
with a file under src), 112b (the helper compiled honestly, its function rebound by the
loader after its code ran), 112c (the owner's own function re-made with other globals,
rebound in the property), 113 (builtins.sorted replaced by an object that is not a
function), 113b (the property module given a ``__builtins__`` of src's before its code
runs), 114 (Hypothesis's dependency rewritten by the install step; needs
``--test-env``), 116 and 116b (the base collection's tree read from git after the install
step). Caught only by the reference run when played, caught where they happen since (their
pieces are imported from tests/test_ci_attacks_round7.py, whose tests replay them): 115 (a
hypothesis entry point under ``src``, where the listing did not look: OG738 since; 115b,
the same beside the property, added since) and 119
(the reference judge's freeze ledger rewritten in git by the test command: OG734 since).
Caught (their tests are tests/test_ci_attacks_round7.py): 111named (111 with the helper's
``__file__``), 112 (a finder before the plugin's loading the helper at its own file from
other text). Caught, no test (it needs a throwaway test
environment): 117 (114 with an entry point added to the dependency's metadata: OG738).
Controls, each caught (gate exit 1): 111control, 112bcontrol, 112ccontrol, 113control,
113bcontrol, 114control, 116control, 119control.

114 and 117 run only with ``--test-env PYTHON``: the interpreter of a throwaway environment
holding pytest, Hypothesis and oracle-guard (the gate then runs with ``--test-python
PYTHON``; the run beside this file used ``python -m venv ENV; ENV/bin/pip install
pytest==9.2.0 hypothesis==6.170.17; ENV/bin/pip install -e .``); the scenario's install
step appends to that environment's ``sortedcontainers/__init__.py`` (117: and its
``entry_points.txt``), and this script puts the files back after each run (plain and gate),
so the gate's own install step is the one that writes them. Every attacker touches only
files in its own checkout and (114, 117) the throwaway environment named on the command
line. The repositories go into a temporary folder (``--keep DIR`` keeps them).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, 'tests'))
sys.path.insert(0, HERE)

from round3 import build  # noqa: E402
from round5 import plain_run  # noqa: E402
from test_ci_attacks import BUG  # noqa: E402
from test_ci_attacks import PYTEST  # noqa: E402
from test_ci_attacks import UNIT_TESTS_FOR_THE_BUG  # noqa: E402
from test_ci_attacks_round3 import PROPERTIES_CONFTEST  # noqa: E402
from test_ci_attacks_round6 import HELPER  # noqa: E402
from test_ci_attacks_round6 import HELPER_PROPERTY  # noqa: E402
from test_ci_attacks_round7 import ENTRY_POINT_INSTALL  # noqa: E402 -- 115, caught since
from test_ci_attacks_round7 import FINDER_HELPER_SRC  # noqa: E402 -- 112, caught
from test_ci_attacks_round7 import LEDGER_AFTER_THE_TEST_COMMAND_SRC  # noqa: E402 -- 119, since
from test_ci_attacks_round7 import NAMED_FAKE_HELPER_SRC  # noqa: E402 -- 111named, caught
from test_ci_attacks_round7 import RESTORING  # noqa: E402 -- 116, caught since
from test_ci_attacks_round7 import REWRITING_THE_BASE_SRC  # noqa: E402
from test_ci_attacks_session import DD_UNIT  # noqa: E402
from test_ci_attacks_session import DD_UNIT_FOR_THE_BUG  # noqa: E402
from test_ci_attacks_session import IMPL_PROPERTY  # noqa: E402
from test_ci_attacks_session import impls  # noqa: E402

# -- 111: a module object put in sys.modules under the helper's name -------------------------
# The base's property takes its expected value from ``tests/properties/_expected.py``
# (round 6's 102 layout) and its conftest imports ``dd``. src, imported first, puts a module
# object of its own in ``sys.modules['_expected']`` whose ``expected`` is ``dedupe``: the
# property's ``from _expected import expected`` takes it, and Python never looks for the
# file. The module has no ``__file__``: the session's list of the test roots' modules (by
# ``__file__``, at the end) does not hold it, and OG714 resolves the property's import
# through the same ``sys.modules``, so the name is "what the import binds".
FAKE_HELPER_SRC = '''\
import sys
import types


def _expected(xs):
    return dedupe(xs)


_helper = types.ModuleType('_expected')
_helper.expected = _expected
sys.modules['_expected'] = _helper


''' + BUG

# -- 111b: the same through the import system: a finder first on sys.meta_path -------------
# src puts a finder before the plugin's ``SourceFinder`` that answers for ``_expected``
# with a file of src's own (``src/dd/_weak.py``, committed): a real module, compiled by
# Python's own loader, whose ``__file__`` is under src, so it is no module of the test roots.
WEAK_HELPER = 'from dd import dedupe as expected  # noqa: F401\n'
PLANTED_FINDER_SRC = '''\
import importlib.util
import os
import sys


class _Finder:
    def find_spec(self, name, path=None, target=None):
        if name != '_expected':
            return None
        return importlib.util.spec_from_file_location(
            name, os.path.join(os.path.dirname(__file__), '_weak.py'))


sys.meta_path.insert(0, _Finder())


''' + BUG

# -- 112b: the helper compiled honestly, then its function rebound by the loader -------------
# src's finder, first on sys.meta_path, asks the finders after it (the plugin's
# ``SourceFinder`` among them: the helper gets the plugin's own loader, its compile is said
# with its true digest) and wraps the loader's ``exec_module``: once the helper's code has
# run, ``module.expected = dedupe``. The module is the helper's, compiled from its bytes;
# the code check at the end judges only functions that claim a file of the test roots
# (``dedupe`` claims src's), and OG714 resolves the property's import to the rebound name.
REBINDING_FINDER_SRC = '''\
import sys


class _Finder:
    busy = False

    def find_spec(self, name, path=None, target=None):
        if name != '_expected' or self.busy:
            return None
        self.busy = True  # the plugin's finder asks every finder after it, this one too
        try:
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, 'find_spec'):
                    continue
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    break
            else:
                return None
        finally:
            self.busy = False
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            module.expected = dedupe

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _Finder())


''' + BUG

# -- 112c: the owner's own function, re-made with other globals, rebound in the property -----
# OG714 takes a replacement for the human owner's test double when its code is code a file
# of the properties folder compiles to. src's finder (112b's) wraps the loader of the
# property module itself (pytest's rewriter): once the property's code has run, its
# ``expected`` becomes a new function made of the helper's own code object (compiled from
# the helper's bytes, said to the gate) with globals in which ``sorted`` is the bug.
# (pytest's rewriter is the loader of every module it rewrites: only the property's is
# changed.)
CLONING_FINDER_SRC = REBINDING_FINDER_SRC.replace(
    "if name != '_expected' or self.busy:",
    "if name.rsplit('.', 1)[-1] != 'test_dd_props' or self.busy:").replace(
    '            module.expected = dedupe\n', '''\
            if module.__name__.rsplit('.', 1)[-1] != 'test_dd_props':
                return  # the rewriter is one loader for every module it rewrites
            honest = module.expected
            fake = dict(honest.__globals__, sorted=lambda it: dedupe(list(it)))
            module.expected = types.FunctionType(honest.__code__, fake, honest.__name__)
''').replace('import sys\n', 'import sys\nimport types\n', 1)
assert CLONING_FINDER_SRC.count('types.FunctionType') == 1

# -- 113: builtins.sorted replaced by an object that is not a function ----------------------
# The plain base (no conftest): the property imports dd, and dd replaces the builtin
# ``sorted`` by an instance of a class with ``__call__`` that drops the largest value when
# its caller is the property (``sys._getframe``), so ``sorted(set(xs))`` equals the bug's
# answer there and only there. ``setattr(len.__self__, ...)``: ``len.__self__`` is the
# builtins module, a form rule 43's reader does not resolve; OG714's builtins check looks
# at functions and classes only.
CALLABLE_SORTED_SRC = '''\
import sys

_sorted = sorted


class _Sorted:
    def __call__(self, iterable, *args, **kwargs):
        out = _sorted(iterable, *args, **kwargs)
        if sys._getframe(1).f_code.co_filename.endswith('test_dd_props.py') and len(out) > 3:
            return out[:-1]
        return out


setattr(len.__self__, 'sorted', _Sorted())


''' + BUG

# -- 113b: the property module's own ``__builtins__`` -----------------------------------------
# The base's properties conftest imports dd (round 3's), the property compares with
# ``sorted(set(xs))`` (no helper). src's finder (112b's) wraps the loader of the property
# module (pytest's rewriter) and, before the property's code runs, puts in its namespace a
# ``__builtins__`` of its own: a copy of the builtins in which ``sorted`` is a plain function
# of src's dropping the largest value. Python takes a module's builtins from its globals'
# ``__builtins__``; the builtins module itself is untouched, and OG714 skips the namespace's
# dunder names.
OWN_BUILTINS_SRC = REBINDING_FINDER_SRC.replace(
    "if name != '_expected' or self.busy:",
    "if name.rsplit('.', 1)[-1] != 'test_dd_props' or self.busy:").replace('''\
            run(module)
            module.expected = dedupe
''', '''\
            if module.__name__.rsplit('.', 1)[-1] == 'test_dd_props':
                module.__dict__['__builtins__'] = dict(vars(builtins), sorted=_sorted)
            run(module)
''').replace('import sys\n', 'import builtins\nimport sys\n', 1).replace(
    '\n\nsys.meta_path.insert(0, _Finder())\n', '''

def _sorted(iterable, *args, **kwargs):
    out = sorted(iterable, *args, **kwargs)
    return out[:-1] if len(out) > 3 else out


sys.meta_path.insert(0, _Finder())
''')
assert OWN_BUILTINS_SRC.count('_sorted') == 2

# -- 114: Hypothesis's dependency rewritten by the install step ------------------------------
# rule 46 compares the installed pytest, pluggy, Hypothesis and oracle-guard with their
# RECORD; Hypothesis imports ``sortedcontainers``, whose files nothing compares. The install
# step (the pull request's script, standing for a setup.py that ``pip install -e .`` runs)
# appends to ``sortedcontainers/__init__.py`` a ``sorted`` that drops the largest value for
# the property, as 113's does, installed as the builtin when Hypothesis is imported (the
# test command, the reference run). Its code is installed code: OG714 takes no installed
# package for repository code.
PAYLOAD = '''

import builtins as _builtins
import sys as _sys

_og_sorted = _builtins.sorted


def sorted(iterable, *args, **kwargs):  # noqa: A001
    out = _og_sorted(iterable, *args, **kwargs)
    if _sys._getframe(1).f_code.co_filename.endswith('test_dd_props.py') and len(out) > 3:
        return out[:-1]
    return out


_builtins.sorted = sorted
'''
DEPENDENCY_INSTALL = '''\
import sortedcontainers

PAYLOAD = %r
with open(sortedcontainers.__file__, encoding='utf-8') as f:
    text = f.read()
if PAYLOAD not in text:
    with open(sortedcontainers.__file__, 'a', encoding='utf-8') as f:
        f.write(PAYLOAD)
''' % PAYLOAD

# -- 116: the base collection's tree read from git after the install step ------------------
# Attack 79's shape (round 3): the property is parametrized over ``dd.IMPLS``; the bug is
# in ``_fast``; the pull request stops declaring ``fast``. The base revision's collection
# (rule 39b) says ``[fast]`` ran at the base: OG703, and OG733 in the reference run. The
# install step rewrites the loose object of the base's ``src/dd/__init__.py`` (a blob
# nothing else reads after the install step) with the pull request's bytes: the base
# collection, whose tree is written from git after the install step, collects no
# ``[fast]`` either.
BASE_IMPLS = impls("Impl('pure', _pure), Impl('fast', _fast)", '_fast')
HEAD_IMPLS = impls("Impl('pure', _pure)", '_fast', buggy=True)
# 116b: the same with every object git gives the base collection a true one: the pull
# request's bytes written as a new blob (``git hash-object -w``), and the loose object of
# the base's ``src/dd`` tree rewritten to name that blob. The base collection's listing then
# names the new blob, whose bytes are its id's: not even a report of the tree's forged
# blobs would show it. src puts the tree object back, as in 116.
REWRITING_THE_BASE_TREE = r"""import os
import subprocess
import zlib


def git(*args, data=None):
    return subprocess.run(['git', *args], input=data, capture_output=True,
                          check=True).stdout


blob = git('hash-object', '-w', 'src/dd/__init__.py').strip().decode()
tree = git('rev-parse', 'main:src/dd').strip().decode()
listing = git('ls-tree', tree).decode().splitlines()
rows = []
for row in listing:
    meta, name = row.split('\t', 1)
    mode, kind, oid = meta.split()
    rows.append('%s %s %s\t%s' % (mode, kind, blob if name == '__init__.py' else oid, name))
new = git('mktree', data=('\n'.join(rows) + '\n').encode()).strip().decode()
body = git('cat-file', 'tree', new)
loose = os.path.join('.git', 'objects', tree[:2], tree[2:])
os.chmod(loose, 0o644)  # raises if the tree is not a loose object: the scenario needs one
with open(loose, 'rb') as f:
    kept = f.read()
with open(os.path.join('.git', 'og-orig-' + tree), 'wb') as f:  # for src to put back
    f.write(kept)
with open(loose, 'wb') as f:
    f.write(zlib.compress(b'tree %d\0' % len(body) + body))
"""

# -- 117: 114's payload as a hypothesis entry point of that dependency (caught) --------------
# The same install step also adds ``[hypothesis]`` to sortedcontainers' own
# ``entry_points.txt`` in the test environment: an entry point the install step added, from
# a distribution the base does not name as a dependency (OG738).
ENTRY_POINT_DEPENDENCY_INSTALL = DEPENDENCY_INSTALL + '''
from importlib import metadata

dist = metadata.distribution('sortedcontainers')
where = dist.locate_file(str(dist._path.name) + '/entry_points.txt')
with open(where, 'a', encoding='utf-8') as f:
    f.write('[hypothesis]\\nsc = sortedcontainers:SortedList\\n')
'''

NEEDS_TEST_ENV = ('114', '114control', '117')
INSTALL = ('--install-command', 'python tools/install.py')


def scenarios() -> dict[str, tuple[dict[str, str], dict[str, str], tuple[str, ...]]]:
    """name -> (the project before adoption, the pull request, the gate's options)."""
    helper = {'tests/properties/conftest.py': PROPERTIES_CONFTEST,
              'tests/properties/_expected.py': HELPER,
              'tests/properties/test_dd_props.py': HELPER_PROPERTY}
    units = {'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}
    conftest = {'tests/properties/conftest.py': PROPERTIES_CONFTEST}
    impl_project = {'src/dd/__init__.py': BASE_IMPLS, 'tests/test_dd.py': DD_UNIT,
                    'tests/properties/test_dd_props.py': IMPL_PROPERTY}
    return {
        '111': (helper, {'src/dd/__init__.py': FAKE_HELPER_SRC, **units}, ()),
        '111control': (helper, {'src/dd/__init__.py': FAKE_HELPER_SRC.replace(
            "sys.modules['_expected'] = _helper\n", ''), **units}, ()),
        '111named': (helper, {'src/dd/__init__.py': NAMED_FAKE_HELPER_SRC, **units}, ()),
        '111b': (helper, {'src/dd/__init__.py': PLANTED_FINDER_SRC,
                          'src/dd/_weak.py': WEAK_HELPER, **units}, ()),
        '112': (helper, {'src/dd/__init__.py': FINDER_HELPER_SRC, **units}, ()),
        '112b': (helper, {'src/dd/__init__.py': REBINDING_FINDER_SRC, **units}, ()),
        '112bcontrol': (helper, {'src/dd/__init__.py': REBINDING_FINDER_SRC.replace(
            '            module.expected = dedupe\n', '            pass\n'), **units}, ()),
        '112c': (helper, {'src/dd/__init__.py': CLONING_FINDER_SRC, **units}, ()),
        '112ccontrol': (helper, {'src/dd/__init__.py': CLONING_FINDER_SRC.replace(
            "sorted=lambda it: dedupe(list(it))", "sorted=sorted"), **units}, ()),
        '113': ({}, {'src/dd/__init__.py': CALLABLE_SORTED_SRC, **units}, ()),
        '113control': ({}, {'src/dd/__init__.py': CALLABLE_SORTED_SRC.replace(
            "setattr(len.__self__, 'sorted', _Sorted())\n", ''), **units}, ()),
        '113b': (conftest, {'src/dd/__init__.py': OWN_BUILTINS_SRC, **units}, ()),
        '113bcontrol': (conftest, {'src/dd/__init__.py': OWN_BUILTINS_SRC.replace(
            "sorted=_sorted", "sorted=sorted"), **units}, ()),
        '114': ({}, {'tools/install.py': DEPENDENCY_INSTALL, **units}, INSTALL),
        '114control': ({}, {'tools/install.py': 'print("nothing")\n', **units}, INSTALL),
        '115': ({}, {'tools/install.py': ENTRY_POINT_INSTALL, **units}, INSTALL),
        # 115b, added with the close: the same metadata beside the property, a folder
        # pytest's prepend import mode puts on sys.path to import it (no pythonpath needed)
        '115b': ({}, {'tools/install.py': ENTRY_POINT_INSTALL.replace(
            "os.path.join('src', ", "os.path.join('tests', 'properties', "), **units}, INSTALL),
        '119': ({}, {'src/dd/__init__.py': LEDGER_AFTER_THE_TEST_COMMAND_SRC}, ()),
        '119control': ({}, {'src/dd/__init__.py': LEDGER_AFTER_THE_TEST_COMMAND_SRC.replace(
            "if _oid and os.path.exists(_loose):", "if False:")}, ()),
        '117': ({}, {'tools/install.py': ENTRY_POINT_DEPENDENCY_INSTALL, **units}, INSTALL),
        '116': (impl_project, {'src/dd/__init__.py': RESTORING + HEAD_IMPLS,
                               'tools/install.py': REWRITING_THE_BASE_SRC,
                               'tests/test_dd.py': DD_UNIT_FOR_THE_BUG}, INSTALL),
        '116b': (impl_project, {'src/dd/__init__.py': RESTORING + HEAD_IMPLS,
                                'tools/install.py': REWRITING_THE_BASE_TREE,
                                'tests/test_dd.py': DD_UNIT_FOR_THE_BUG}, INSTALL),
        '116control': (impl_project, {'src/dd/__init__.py': HEAD_IMPLS,
                                      'tools/install.py': 'print("nothing")\n',
                                      'tests/test_dd.py': DD_UNIT_FOR_THE_BUG}, INSTALL),
    }


def _restore(saved: list[tuple[str, bytes | None]]) -> None:
    """The throwaway environment's files as they were (None: there was no such file)."""
    for path, data in saved:
        if data is None:
            if os.path.exists(path):
                os.remove(path)
            continue
        with open(path, 'wb') as f:
            f.write(data)


def main(argv: list[str]) -> int:
    keep = None
    if '--keep' in argv:
        keep = argv[argv.index('--keep') + 1]
        argv = [a for a in argv if a not in ('--keep', keep)]
    test_env = None
    if '--test-env' in argv:
        test_env = argv[argv.index('--test-env') + 1]
        argv = [a for a in argv if a not in ('--test-env', test_env)]
    chosen = argv or [name for name in scenarios() if 'control' not in name and
                      (test_env or name not in NEEDS_TEST_ENV)]
    folder = keep or tempfile.mkdtemp(prefix='round7-attacks-')
    through = 0
    try:
        for name in chosen:
            project, pull_request, options = scenarios()[name]
            pytest = PYTEST
            saved: list[tuple[str, bytes | None]] = []
            if name in NEEDS_TEST_ENV:
                if test_env is None:
                    raise SystemExit(f'{name} needs --test-env PYTHON')
                pytest = (test_env, *PYTEST[1:])
                options = ('--test-python', test_env, *options)
                listed = subprocess.run([test_env, '-c', (
                    'import sortedcontainers\nfrom importlib import metadata\n'
                    'print(sortedcontainers.__file__)\n'
                    "d = metadata.distribution('sortedcontainers')\n"
                    "print(d.locate_file(d._path.name + '/entry_points.txt'))\n")],
                    check=True, capture_output=True, text=True).stdout.split()
                for where in listed:
                    with open(where, 'rb') if os.path.exists(where) else \
                            open(os.devnull, 'rb') as f:
                        saved.append((where, f.read() if os.path.exists(where) else None))
            main_bug = {'src/dd/__init__.py': impls(
                "Impl('pure', _pure), Impl('fast', _fast)", '_fast', buggy=True)} \
                if name.startswith('116') else {'src/dd/__init__.py': BUG}
            repo = build(os.path.join(folder, name), project, main_bug)
            repo.pull_request(pull_request, bug=False)
            try:
                plain = plain_run(repo, options, pytest)
                _restore(saved)
                gate = repo.start([sys.executable, '-I', *repo.ci_args(pytest, *options)[1:]])
                ci = repo.finish(gate)
            finally:
                _restore(saved)
            found = [line for line in ci.out.splitlines() if (line.startswith(
                'oracle-guard ci:') or re.match(r'\S+:\d+:\d+: OG\d+ ', line)) and
                ' note: ' not in line]
            print(f'== {name}: plain pytest exit {plain.rc}, gate exit {ci.rc}')
            print(f'plain pytest exit {plain.rc}')
            print(f'gate exit {ci.rc}')
            print('\n'.join(found))
            through += ci.rc == 0
    finally:
        if keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    print(f'{through} of {len(chosen)} got through (gate exit 0)')
    return 0


if __name__ == '__main__':
    raise SystemExit(main(sys.argv[1:]))
