"""The prefilter's byte reading of imports against the compiler's, on code nobody here wrote.

    python benchmarks/helper_imports.py [FOLDER ...]

check-named-freezes asks a test file that spells no silence word which helper modules it
imports (rule 14 through helpers, ``oracle_guard/reading/helper_paths.py``), reading its
imports from the bytes; only a statement that reading is not sure of is compiled. For
every ``.py`` file below the folders (default: this interpreter's standard library and
site-packages) it prints whether the byte reading holds every import of the compiled
syntax tree (it must: a miss would be a hole), how many files fell back to compiling,
and the CPU time of both readings over all files (warm: each process's first compile
costs about 0.9 ms once, which the one-file commit would pay).
"""
from __future__ import annotations

import os
import sys
import sysconfig
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                'hooks'))

from oracle_guard.reading.helper_paths import _compiled_imports  # noqa: E402
from oracle_guard.reading.helper_paths import _imports_in_bytes  # noqa: E402
from oracle_guard.reading.silence_prefilter import as_python_reads  # noqa: E402


def python_files(folders: list[str]) -> list[str]:
    found = []
    for folder in folders:
        for top, dirs, names in os.walk(folder):
            dirs.sort()
            found.extend(os.path.join(top, n) for n in sorted(names) if n.endswith('.py'))
    return found


def main() -> int:
    folders = sys.argv[1:] or [sysconfig.get_paths()['stdlib'], sysconfig.get_paths()['purelib']]
    files = python_files(folders)
    sources = []
    for path in files:
        try:
            with open(path, 'rb') as f:
                sources.append((path, f.read()))
        except OSError:
            pass
    compile('x = 1', '<warm>', 'exec', 0x400)  # the first compile of the process
    compiled, compile_cpu = {}, 0.0
    for path, source in sources:
        start = time.process_time()
        compiled[path] = _compiled_imports(source, path)
        compile_cpu += time.process_time() - start
    read, missed, unsure, byte_cpu = 0, [], 0, 0.0
    for path, source in sources:
        start = time.process_time()
        found = _imports_in_bytes(as_python_reads(source))
        byte_cpu += time.process_time() - start
        if compiled[path] is None:
            continue  # not Python this interpreter compiles
        read += 1
        if found is None:
            unsure += 1
            continue
        missed += [(path, imp) for imp in compiled[path] if imp not in set(found)]
    size = sum(len(s) for _, s in sources)
    print(f'python {sys.version.split()[0]}; {len(sources)} files, {size / 1e6:.1f} MB under '
          f'{", ".join(folders)}')
    print(f'{read} compile here; the byte reading was not sure of {unsure} (compiled then)')
    print(f'imports the compiler sees that the byte reading missed: {len(missed)}')
    for path, imp in missed[:20]:
        print(f'  {path}: {imp}')
    print(f'CPU over all files: byte reading {byte_cpu:.3f} s, compiling {compile_cpu:.3f} s')
    return 1 if missed else 0


if __name__ == '__main__':
    raise SystemExit(main())
