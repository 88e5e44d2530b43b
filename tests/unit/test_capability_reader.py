"""Rule 54's reader: the interpreter capabilities a module of production code uses, spelled
directly or through a computed name, and which of them a change adds."""
from __future__ import annotations

import textwrap

import pytest

from oracle_guard.reading.capabilities import capability_uses
from oracle_guard.reading.capabilities import new_uses
from oracle_guard.reading.capabilities import parse_module


def uses(source: str, own: tuple[str, ...] = ('dd',)) -> list[tuple[int, str, str]]:
    tree = parse_module(textwrap.dedent(source).encode())
    assert tree is not None
    return [tuple(use) for use in capability_uses(tree, own)]  # type: ignore[misc]


# The forms the gate's bound names, each as the one line of a module; (kind, expression).
FORMS = {
    'faulthandler': ('import faulthandler\nON = faulthandler.is_enabled()\n',
                     'interpreter-state', 'faulthandler.is_enabled'),
    'recursion-limit': ('import sys\nDEEP = sys.getrecursionlimit() > 1500\n',
                        'interpreter-state', 'sys.getrecursionlimit'),
    'flags': ('import sys\nSEALED = sys.flags.isolated\n', 'interpreter-state', 'sys.flags'),
    'gettrace': ('from sys import gettrace\nT = gettrace()\n', 'interpreter-state',
                 'gettrace'),
    'orig-argv': ('import sys\nA = sys.orig_argv\n', 'interpreter-state', 'sys.orig_argv'),
    'proc-self': ('S = open("/proc/self/" + "status").read()\n', 'interpreter-state',
                  "'/proc/self/' + 'status'"),
    'currentframe': ('import inspect\nF = inspect.currentframe()\n', 'frames',
                     'inspect.currentframe'),
    'f-back': ('def up(f):\n    return f.f_back\n', 'frames', 'f.f_back'),
    'getframe-aliased': ('import sys as s\nget = s._getframe\n', 'frames', 's._getframe'),
    'getframe-computed': ('import sys\nF = getattr(sys, "_get" + "frame")(1)\n', 'frames',
                          "getattr(sys, '_get' + 'frame')"),
    'walk-stack': ('import traceback\nW = list(traceback.walk_stack(None))\n', 'frames',
                   'traceback.walk_stack'),
    'gc-callbacks': ('import gc\ngc.callbacks.append(print)\n', 'object-graph',
                     'gc.callbacks.append'),
    'gc-computed': ('import importlib\nG = importlib.import_module("g" "c")\n',
                    'object-graph', "importlib.import_module('gc')"),
    'subclasses': ('ALL = object.__subclasses__()\n', 'object-graph', 'object.__subclasses__'),
    'sys-modules': ('import sys\nM = "x" in sys.modules\n', 'object-graph', 'sys.modules'),
    'vars-write': ('import json\nvars(json)["dumps"] = repr\n', 'object-graph',
                   "vars(json)['dumps']"),
    'exec': ('exec("x = 1")\n', 'code-and-imports', 'exec'),
    'eval': ('V = eval("1")\n', 'code-and-imports', 'eval'),
    'compile': ('C = compile("1", "f", "eval")\n', 'code-and-imports', 'compile'),
    'code-write': ('def f():\n    pass\nf.__code__ = (lambda: 1).__code__\n',
                   'code-and-imports', 'f.__code__'),
    'function-type': ('import types\nT = types.FunctionType\n', 'code-and-imports',
                      'types.FunctionType'),
    'meta-path': ('import sys\nsys.meta_path.insert(0, object())\n', 'code-and-imports',
                  'sys.meta_path'),
    'computed-import': ('import importlib\nM = importlib.import_module(NAME)\n',
                        'code-and-imports', 'importlib.import_module(NAME)'),
    'dunder-import': ('M = __import__(NAME)\n', 'code-and-imports', '__import__(NAME)'),
    'atexit': ('import atexit\natexit.register(print)\n', 'process-control',
               'atexit.register'),
    'os-exit': ('from os import _exit\n_exit(0)\n', 'process-control', '_exit'),
    'signal': ('import signal\nsignal.signal(signal.SIGTERM, print)\n', 'process-control',
               'signal.signal'),
    'dup2': ('import os\nos.dup2(1, 2)\n', 'process-control', 'os.dup2'),
    'close-stdout': ('import os, sys\nos.close(sys.stdout.fileno())\n', 'process-control',
                     'os.close(sys.stdout.fileno())'),
    'patch-stdlib': ('import json\njson.JSONEncoder.iterencode = lambda self, o, _=0: iter([])\n',
                     'foreign-attribute', 'json.JSONEncoder.iterencode'),
    'setattr-stdlib': ('import socket\nsetattr(socket.socket, "send", print)\n',
                       'foreign-attribute', "setattr(socket.socket, 'send', print)"),
    'builtins-write': ('import builtins\nbuiltins.len = repr\n', 'builtins', 'builtins.len'),
    'builtins-item': ('__builtins__["len"] = repr\n', 'builtins', "__builtins__['len']"),
    # the process's identity: its command line, its import path, its environment enumerated
    'argv': ('import sys\nA = sys.argv[0]\n', 'interpreter-state', 'sys.argv'),
    'sys-path': ('import sys\nP = sys.path[0]\n', 'code-and-imports', 'sys.path'),
    'sys-path-append': ('import sys\nsys.path.append("tools")\n', 'code-and-imports',
                        'sys.path'),
    'environ-scan': ('import os\nE = any("X" in k for k in os.environ)\n',
                     'interpreter-state', 'os.environ'),
    'environ-copy': ('from os import environ\nE = environ.copy()\n', 'interpreter-state',
                     'environ'),
    'environ-computed': ('import os\nE = os.environ.get(NAME)\n', 'interpreter-state',
                         'os.environ'),
    'getenv-computed': ('import os\nE = os.getenv(NAME)\n', 'interpreter-state',
                        'os.getenv(NAME)'),
    'proc-pid': ('import os\nS = open("/proc/%d/cmdline" % os.getpid()).read()\n',
                 'interpreter-state', "'/proc/%d/cmdline'"),
    'proc-fstring': ('import os\nS = open(f"/proc/{os.getpid()}/status").read()\n',
                     'interpreter-state', "'/proc/'"),
    # the standard library walking the stack for its caller
    'find-caller': ('import logging\nC = logging.getLogger().findCaller(stack_info=True)\n',
                    'frames', 'logging.getLogger().findCaller'),
    'format-stack': ('import traceback\nS = traceback.format_stack()\n', 'frames',
                     'traceback.format_stack'),
    'warnings-record': ('import warnings\nW = warnings.catch_warnings(record=True)\n',
                        'frames', 'warnings.catch_warnings'),
    # a capability named by data or by a name computed at run time
    'getattr-runtime': ('import sys\nF = getattr(sys, "".join(reversed(NAME)))\n',
                        'code-and-imports', "getattr(sys, ''.join(reversed(NAME)))"),
    'pickle-loads': ('import pickle\nF = pickle.loads(DATA)\n', 'code-and-imports',
                     'pickle.loads'),
    'marshal-loads': ('import marshal\nC = marshal.loads(DATA)\n', 'code-and-imports',
                      'marshal.loads'),
    # code loaded from a path of any name
    'source-loader': ('from importlib.machinery import SourceFileLoader as L\n'
                      'M = L("m", "impl.dat")\n', 'code-and-imports', 'L'),
    'spec-from-file': ('import importlib.util\n'
                       'S = importlib.util.spec_from_file_location("m", "impl.dat")\n',
                       'code-and-imports', 'importlib.util.spec_from_file_location'),
    'exec-module': ('def load(spec, module):\n    spec.loader.exec_module(module)\n',
                    'code-and-imports', 'spec.loader.exec_module'),
    'run-path': ('import runpy\nG = runpy.run_path("impl.dat")\n', 'code-and-imports',
                 'runpy.run_path'),
    # the program that started the process, and what a test runner sets for its run
    'main-module': ('import __main__\nM = hasattr(__main__, "__file__")\n',
                    'interpreter-state', '__main__'),
    'main-attribute': ('from __main__ import __file__ as f\nM = f\n', 'interpreter-state',
                       'f'),
    'warning-filters': ('import warnings\nW = warnings.filters[0]\n', 'interpreter-state',
                        'warnings.filters'),
    'unraisable-hook': ('import sys\nH = sys.unraisablehook is sys.__unraisablehook__\n',
                        'interpreter-state', 'sys.unraisablehook'),
    'thread-hook': ('import threading\nH = threading.excepthook\n', 'interpreter-state',
                    'threading.excepthook'),
}


@pytest.mark.parametrize('name', sorted(FORMS))
def test_each_capability_is_found_with_its_kind_line_and_expression(name: str) -> None:
    source, kind, expression = FORMS[name]
    line = len(source.rstrip('\n').splitlines())
    assert (line, kind, expression) in uses(source)


HONEST = '''\
import dataclasses
import functools
import logging
import os
import re
import signal
import subprocess

from . import config
from dd import settings

log = logging.getLogger(__name__)
WORD = re.compile(r"\\w+")


@dataclasses.dataclass
class Item:
    name: str


@functools.lru_cache(maxsize=None)
def words(text):
    log.debug("splitting %d characters", len(text))
    return WORD.findall(text)


def stop(proc, fd):
    proc.send_signal(signal.SIGTERM)
    os.close(fd)
    config.verbose = True
    settings.LIMIT = 3
    return subprocess.run(["true"], check=False)


def compile(pattern):
    return re.compile(pattern)


PATTERN = compile("x")
'''


def test_honest_helpers_use_no_capability() -> None:
    """functools, re, dataclasses, logging, a signal constant, a descriptor the code
    opened, the project's own modules configured, a function of its own named compile."""
    assert uses(HONEST) == []


HONEST_PROCESS = '''\
import logging
import os
import subprocess
import sys
import threading
import warnings

HOME = os.environ.get("HOME", "")
DEBUG = "DD_DEBUG" in os.environ
os.environ.setdefault("DD_MODE", "fast")
os.environ["DD_SEEN"] = "1"
LEVEL = os.getenv("DD_LEVEL")
log = logging.getLogger(__name__)


def old(x):
    warnings.warn("old() is deprecated", DeprecationWarning, stacklevel=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return x


def run(cmd):
    subprocess.run(cmd, env={**os.environ, "DD": "1"}, check=True)
    subprocess.run(cmd, env=dict(os.environ, DD="1"), check=True)
    subprocess.run(cmd, env=os.environ.copy(), check=True)
    sys.stdout.write(getattr(sys, "platform") + "\\n")


def main():
    threading.Thread(target=run, args=(["true"],)).start()


if __name__ == "__main__":
    main()
'''


def test_process_reads_every_program_does_are_not_a_use() -> None:
    """A variable read by its name, the environment handed on whole to a child, a
    deprecation warning with its stacklevel, a constant getattr of a plain attribute."""
    assert uses(HONEST_PROCESS) == []


def test_a_docstring_naming_proc_self_is_not_a_use() -> None:
    assert uses('"""Reads /proc/self/status on Linux."""\n') == []


def test_a_use_the_base_had_is_not_new_and_an_added_one_is() -> None:
    base = parse_module(b'import sys\n\ndef loaded(name):\n    return name in sys.modules\n')
    edited = parse_module(b'import sys\n\ndef loaded(name):\n    """Say."""\n'
                          b'    return name in sys.modules\n\nimport gc\nN = gc.get_count()\n')
    assert [tuple(u) for u in new_uses(base, edited)] == [
        (8, 'object-graph', 'gc.get_count')]


def test_a_second_use_of_the_same_expression_is_new() -> None:
    base = parse_module(b'X = eval("1")\n')
    edited = parse_module(b'X = eval("1")\nY = eval("2")\n')
    assert [tuple(u) for u in new_uses(base, edited)] == [(2, 'code-and-imports', 'eval')]


def test_the_project_s_own_module_is_not_foreign() -> None:
    assert uses('import dd.settings\ndd.settings.LIMIT = 3\n') == []
    assert uses('import dd.settings\ndd.settings.LIMIT = 3\n', own=()) == [
        (2, 'foreign-attribute', 'dd.settings.LIMIT')]


def test_a_walk_of_the_subclasses_it_was_given_is_the_project_s_own() -> None:
    """cattrs's include_subclasses: a walk from a class the caller passes."""
    assert uses('def tree(cl):\n    return [cl, *(s for c in cl.__subclasses__()'
                ' for s in tree(c))]\n\n\nALL = tree(Base)\n') == []


def test_a_walk_given_a_root_that_reaches_every_class_is_a_use() -> None:
    assert uses('def tree(cl):\n    return [cl, *(s for c in cl.__subclasses__()'
                ' for s in tree(c))]\n\n\nALL = tree(object)\n') == [
        (5, 'object-graph', 'tree(object)')]
    assert uses('import socket\nS = socket.socket.__subclasses__()\n') == [
        (2, 'object-graph', 'socket.socket.__subclasses__')]


def test_lazy_import_of_the_package_s_own_submodule_is_not_a_use() -> None:
    """attrs and dateutil: a module ``__getattr__`` importing ``"." + name``."""
    assert uses('import importlib, sys\n\ndef __getattr__(name):\n'
                '    return importlib.import_module("." + name, __name__)\n\n'
                'def f(name):\n    return importlib.import_module(f".{name}", "dd")\n\n'
                'ME = sys.modules[__name__]\n') == []


def test_a_base_that_does_not_compile_vouches_for_the_uses_its_text_holds() -> None:
    """A change that fixes a syntax error of the base adds no use the base spelled."""
    fixed = parse_module(b'from importlib import import_module\n\n'
                         b'def load(name):\n    return import_module(name)\n')
    broken = 'from importlib import import_module\nif True:\n\ndef load(name):\n' \
             '    return import_module(name)\n'
    assert new_uses(None, fixed, (), broken) == []
    assert [tuple(u) for u in new_uses(None, fixed)] == [
        (4, 'code-and-imports', 'import_module(name)')]
