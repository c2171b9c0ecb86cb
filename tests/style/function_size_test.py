#!/usr/bin/env python3
"""No function in efu/, common/ or modules/ is longer than 80 lines or has a cyclomatic
complexity above 20, as lizard measures them.

A long or branchy function is hard to review and to test branch by branch; the limits are the
ones of `lizard -l cpp -w -L 80 -C 20 efu common modules`, and this test measures the same way:
lizard's `length` (first to last line of the function, comments and blank lines included) and
its cyclomatic complexity (1 + every if, loop, case, catch, ?:, && and ||). A function at the
limit passes; one line or one branch more fails.

Scanned: every C and C++ source and header under the three folders. Skipped: generated code,
i.e. anything under a folder whose name starts with "build" (a build dir inside the tree), a
FlatBuffers header (`*_generated.h`), and a file whose first lines say it is generated.

Every offender is printed as `file:line function NLOC/CCN (length lines)`, so the line can be
opened from a terminal. Usage: function_size_test.py [--root REPO] [--max-length N]
[--max-ccn N] [PATH ...] (paths relative to the root; default efu common modules). Exit 0 when
every function is within the limits, 1 otherwise or when lizard is missing; the last line is
"N passed, M failed". Needs the Python package lizard (scripts/setup puts it in the venv).
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

DEFAULT_DIRS = ("efu", "common", "modules")
SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".inl")
# Phrases by which code generators (flatc, protoc, bison, CMake's configure_file users...) mark
# their output in its first lines.
GENERATED_MARKERS = ("automatically generated", "do not edit", "@generated")
GENERATED_HEAD_LINES = 10


def is_generated(path: Path) -> bool:
    if path.name.endswith("_generated.h"):
        return True
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            head = "".join(f.readline() for _ in range(GENERATED_HEAD_LINES)).lower()
    except OSError:
        return False
    return any(marker in head for marker in GENERATED_MARKERS)


def source_files(root: Path, dirs: list[str]) -> list[Path]:
    files = []
    for top in dirs:
        for folder, subdirs, names in os.walk(root / top):
            # Hidden folders and build dirs inside the tree hold no maintained source.
            subdirs[:] = sorted(d for d in subdirs if not d.startswith((".", "build")))
            for name in sorted(names):
                path = Path(folder) / name
                if path.suffix in SOURCE_SUFFIXES and not is_generated(path):
                    files.append(path)
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2])
    parser.add_argument("--max-length", type=int, default=80)
    parser.add_argument("--max-ccn", type=int, default=20)
    parser.add_argument("paths", nargs="*", default=list(DEFAULT_DIRS))
    args = parser.parse_args()
    try:
        import lizard  # noqa: PLC0415 (a missing package is reported, not a traceback)
    except ImportError:
        print(f"lizard is not installed for {sys.executable}; run scripts/setup")
        print("0 passed, 1 failed")
        return 1

    root = args.root.resolve()
    missing = [p for p in args.paths if not (root / p).is_dir()]
    files = source_files(root, [p for p in args.paths if p not in missing])
    analyzer = lizard.FileAnalyzer(lizard.get_extensions([]))
    passed = 0
    failures = [f"{p}: no such folder under {root}" for p in missing]
    if not files:
        failures.append(f"no C or C++ files found under {', '.join(args.paths)} in {root}")
    for path in files:
        relative = path.relative_to(root)
        for fn in analyzer(str(path)).function_list:
            if fn.length <= args.max_length and fn.cyclomatic_complexity <= args.max_ccn:
                passed += 1
                continue
            failures.append(f"{relative}:{fn.start_line} {fn.name} "
                            f"{fn.nloc}/{fn.cyclomatic_complexity} ({fn.length} lines)")

    for line in failures:
        print(line)
    if failures:
        print(f"limits: {args.max_length} lines, cyclomatic complexity {args.max_ccn}; split "
              "the function (see the docstring of this test)")
    print(f"{passed} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
