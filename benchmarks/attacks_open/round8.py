"""Reproduce the attacks of ATTACKS.md 121-... (round 8: OG717 inside ``.map``, rule 43's
assignment aliases, the entry points' search; played on branch attack8 at 3eb02f0).

    python benchmarks/attacks_open/round8.py [NAME ...] [--keep DIR]

Each scenario builds the ``dd`` repository of round7.py (adopted with ``oracle-guard
init``, the bug on ``main``: ``dedupe`` drops the largest value past three distinct ones),
commits the pull request on branch ``pr``, runs plain ``python -m pytest -q -p
no:cacheprovider`` in a copy of the checkout (after the same install step, if any), then
the gate as the action runs it (``python -I -m oracle_guard.cli ci --base main [options]
-- python -m pytest -q -p no:cacheprovider``) and prints "plain pytest exit N" and "gate
exit N" per scenario with the gate's findings. The results as played are
round8_results.txt beside this file.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess  # noqa: F401 -- as round7.py
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, 'tests'))
sys.path.insert(0, HERE)

from round3 import build  # noqa: E402
from round5 import plain_run  # noqa: E402
from round7 import CALLABLE_SORTED_SRC  # noqa: E402
from round7 import FAKE_HELPER_SRC  # noqa: E402
from test_ci_attacks import BUG  # noqa: E402
from test_ci_attacks import PYTEST  # noqa: E402
from test_ci_attacks import UNIT_TESTS_FOR_THE_BUG  # noqa: E402
from test_ci_attacks_round3 import PROPERTIES_CONFTEST  # noqa: E402
from test_ci_attacks_round3 import SMALL_UNIT_TESTS  # noqa: E402
from test_ci_attacks_round4 import MAPPED_PROPERTY  # noqa: E402
from test_ci_attacks_round4 import SOMETIMES_DISCARDING_SRC  # noqa: E402
from test_ci_attacks_round6 import HELPER  # noqa: E402
from test_ci_attacks_round6 import HELPER_PROPERTY  # noqa: E402
from test_ci_attacks_round7 import ENTRY_POINT_INSTALL  # noqa: E402

# -- 121: the map's function says it is judged already --------------------------------------
# The mapped property of round 4 (``st.lists(...).map(dedupe)``, ``dedupe(ys) == ys``) and
# src's discards of round 4's test_draws_a_map_through_src_throws_away_now_and_then_fail_ci
# (never three in a row, so ``MappedStrategy.do_draw`` swallows every one). The plugin's
# ``judged_do_draw`` does not wrap a ``pack`` whose ``_oracle_guard_judged`` is true (its own
# wrapper, so as not to wrap twice): src sets that attribute on ``dedupe`` under a name made
# at run time (rule 43 reads constant strings only).
FLAG = "\n\nsetattr(dedupe, '_'.join(['', 'oracle', 'guard', 'judged']), True)\n"
FLAGGED_SRC = SOMETIMES_DISCARDING_SRC + FLAG
# 122: the same without naming the flag at all: ``dedupe`` is an instance whose
# ``__getattr__`` answers True for any missing attribute ending in ``_judged``.
GETATTR_SRC = SOMETIMES_DISCARDING_SRC.replace('def dedupe(xs):', 'def _dedupe(xs):') + '''

class _Dedupe:
    def __call__(self, xs):
        return _dedupe(xs)

    def __getattr__(self, name):
        if name.endswith('_judged'):
            return True
        raise AttributeError(name)


dedupe = _Dedupe()
'''

# -- 123-125: 111 (a module object in sys.modules under the helper's name) through aliases
# rule 43 lists as out of reach --------------------------------------------------------
HELPER_PUT = "sys.modules['_expected'] = _helper\n"
assert HELPER_PUT in FAKE_HELPER_SRC
FOR_ALIAS_SRC = FAKE_HELPER_SRC.replace(
    HELPER_PUT, "for _m in [sys.modules]:\n    _m['_expected'] = _helper\n")
VARS_SETITEM_SRC = FAKE_HELPER_SRC.replace(
    HELPER_PUT, "operator.setitem(vars(sys)['modules'], '_expected', _helper)\n").replace(
    'import sys\n', 'import operator\nimport sys\n', 1)
DEFAULT_ARG_SRC = FAKE_HELPER_SRC.replace(
    HELPER_PUT, "def _put(m=sys.modules):\n    m['_expected'] = _helper\n\n\n_put()\n")
# control: the alias rule 43 follows since 959ea4c
ALIAS_CONTROL_SRC = FAKE_HELPER_SRC.replace(
    HELPER_PUT, "_m = sys.modules\n_m['_expected'] = _helper\n")

# -- 126, 126b: 113 (builtins.sorted replaced by a callable object) through ``with`` and
# ``functools.partial`` ------------------------------------------------------------------
SORTED_PUT = "setattr(len.__self__, 'sorted', _Sorted())\n"
assert SORTED_PUT in CALLABLE_SORTED_SRC
WITH_ALIAS_SRC = CALLABLE_SORTED_SRC.replace(
    SORTED_PUT, "with contextlib.nullcontext(len.__self__) as _b:\n    _b.sorted = _Sorted()\n"
).replace('import sys\n', 'import contextlib\nimport sys\n', 1)
PARTIAL_SRC = CALLABLE_SORTED_SRC.replace(
    SORTED_PUT, "functools.partial(setattr, len.__self__)('sorted', _Sorted())\n").replace(
    'import sys\n', 'import functools\nimport sys\n', 1)

# -- 127: 115's entry point in the unit tests' folder (a test file's folder: searched) -------
TESTS_ENTRY_POINT_INSTALL = ENTRY_POINT_INSTALL.replace(
    "os.path.join('src', ", "os.path.join('tests', ")
# 127b: 115's entry point as an ``.egg-info`` folder on the pythonpath (importlib.metadata
# finds those too)
EGG_ENTRY_POINT_INSTALL = ENTRY_POINT_INSTALL.replace('og_extra-0.1.dist-info',
                                                      'og_extra-0.1.egg-info').replace(
    "'METADATA'", "'PKG-INFO'")
assert TESTS_ENTRY_POINT_INSTALL != ENTRY_POINT_INSTALL != EGG_ENTRY_POINT_INSTALL

INSTALL = ('--install-command', 'python tools/install.py')


def scenarios() -> dict[str, tuple[dict[str, str], dict[str, str], tuple[str, ...]]]:
    """name -> (the project before adoption, the pull request, the gate's options)."""
    mapped = {'tests/properties/test_dd_props.py': MAPPED_PROPERTY}
    small = {'tests/test_dd.py': SMALL_UNIT_TESTS}
    helper = {'tests/properties/conftest.py': PROPERTIES_CONFTEST,
              'tests/properties/_expected.py': HELPER,
              'tests/properties/test_dd_props.py': HELPER_PROPERTY}
    units = {'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}
    return {
        '121': (mapped, {'src/dd/__init__.py': FLAGGED_SRC, **small}, ()),
        '121control': (mapped, {'src/dd/__init__.py': SOMETIMES_DISCARDING_SRC, **small}, ()),
        '122': (mapped, {'src/dd/__init__.py': GETATTR_SRC, **small}, ()),
        '123': (helper, {'src/dd/__init__.py': FOR_ALIAS_SRC, **units}, ()),
        '124': (helper, {'src/dd/__init__.py': VARS_SETITEM_SRC, **units}, ()),
        '125': (helper, {'src/dd/__init__.py': DEFAULT_ARG_SRC, **units}, ()),
        '123control': (helper, {'src/dd/__init__.py': ALIAS_CONTROL_SRC, **units}, ()),
        '126': ({}, {'src/dd/__init__.py': WITH_ALIAS_SRC, **units}, ()),
        '126b': ({}, {'src/dd/__init__.py': PARTIAL_SRC, **units}, ()),
        '127': ({}, {'tools/install.py': TESTS_ENTRY_POINT_INSTALL, **units}, INSTALL),
        '127b': ({}, {'tools/install.py': EGG_ENTRY_POINT_INSTALL, **units}, INSTALL),
        '127control': ({}, {'tools/install.py': 'print("nothing")\n', **units}, INSTALL),
    }


def main(argv: list[str]) -> int:
    keep = None
    if '--keep' in argv:
        keep = argv[argv.index('--keep') + 1]
        argv = [a for a in argv if a not in ('--keep', keep)]
    chosen = argv or list(scenarios())
    folder = keep or tempfile.mkdtemp(prefix='round8-attacks-')
    through = 0
    try:
        for name in chosen:
            project, pull_request, options = scenarios()[name]
            repo = build(os.path.join(folder, name), project, {'src/dd/__init__.py': BUG})
            repo.pull_request(pull_request, bug=False)
            plain = plain_run(repo, options, PYTEST)
            ci = repo.finish(repo.start([sys.executable, '-I',
                                         *repo.ci_args(PYTEST, *options)[1:]]))
            found = [line for line in ci.out.splitlines() if (line.startswith(
                'oracle-guard ci:') or re.match(r'\S+:\d+:\d+: OG\d+ ', line)) and
                ' note: ' not in line]
            print(f'== {name}: plain pytest exit {plain.rc}, gate exit {ci.rc}')
            print('\n'.join(found), flush=True)
            through += ci.rc == 0
    finally:
        if keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    print(f'{through} of {len(chosen)} got through (gate exit 0)')
    return 0


if __name__ == '__main__':
    raise SystemExit(main(sys.argv[1:]))
