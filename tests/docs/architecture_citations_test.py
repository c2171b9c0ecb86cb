#!/usr/bin/env python3
"""Every citation of docs/architecture.md in the tree names a section that exists.

Code comments and documents cite the architecture document as "architecture.md" followed by a
section sign and a number: a section (3), a subsection (5.1) or a lettered one (5.2b). A list
after one file name ("architecture.md" then "§1, §3") cites each, also where a comment wraps
between the file name and the number. This test scans efu/, common/, modules/, tests/,
benchmarks/, scripts/ and docs/ and fails, with one line per citation (file:line and the
section), when docs/architecture.md has no heading with that number.

It also checks the document itself, so that it fails before any code cites it: the numbered
sections 1 to 9 and the wire-format subsections that code cites by number (5.1, 5.2, 5.2b,
5.2c, 5.3, 5.4) exist, and no number is used by two headings.

And it fails on a pointer a reader of the repository cannot follow, one line per occurrence: a
"design.md" (a design file that is not in the repository), an "issue N" (a tracker the reader
may not have), and "the study" (also "measurement study", "study's") without a citation of
architecture.md §9, which says what the study is: in code and scripts within two lines of the
mention, in a Markdown document anywhere in it (docs/architecture.md itself defines it). These
checks also cover README.md, CMakeLists.txt, cmake/, docker/ and packaging/.

Usage: architecture_citations_test.py [--root REPO]. Exit 0 when every check passes, 1
otherwise; the last line is "N passed, M failed". Python 3 standard library only.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

SCANNED_DIRS = ("efu", "common", "modules", "tests", "benchmarks", "scripts", "docs", "cmake",
                "docker", "packaging")
SCANNED_TOP_FILES = ("README.md", "CMakeLists.txt")
DOCUMENT = Path("docs") / "architecture.md"

# A heading "## 3. Threads, rings, affinity", "### 3.1 The threads" or "### 5.2b CAEN readout":
# its number is the first word, without a trailing dot.
HEADING = re.compile(r"^#{2,6}\s+(\d+(?:\.\d+)*[a-z]?)\.?(?:\s|$)")
SECTION = r"\d+(?:\.\d+)*[a-z]?"
# Between the file name and a number, or between two numbers: spaces, commas, "&", "and", "or",
# and, where a comment wraps, a line break and the next line's comment marker (//, #, *).
SEPARATOR = r"(?:[\s,&]|/{2,}|#+|\*+)*(?:(?:and|or)\s+)?"
# "architecture.md" (or "architecture.md)" after a Markdown link), then one or more section
# numbers, each after a section sign.
CITATION = re.compile(
    r"architecture\.md\)?((?:" + SEPARATOR + r"§\s*" + SECTION + r")+)")
CITED_NUMBER = re.compile(r"§\s*(" + SECTION + r")")

# Pointers a reader cannot follow. A mention of the study is fine next to a citation of §9.
DESIGN_FILE = re.compile(r"\bdesign\.md\b", re.IGNORECASE)
ISSUE_NUMBER = re.compile(r"\bissues?\s+#?\d+", re.IGNORECASE)
STUDY = re.compile(r"\b(?:the|measurement)\s+study\b|\bstudy's", re.IGNORECASE)
STUDY_SECTION = "9"
STUDY_CITATION_LINES = 2  # how far from a mention in code its citation may be
# This test names the patterns it looks for; nothing else may use them.
SELF = Path("tests") / "docs" / "architecture_citations_test.py"
# (file, pattern name) pairs still to fix by whoever owns the file. Remove an entry once fixed;
# an entry whose file no longer has the pointer fails the test, so the list cannot go stale.
PENDING_POINTERS: set[tuple[str, str]] = set()

REQUIRED = [str(n) for n in range(1, 10)] + ["5.1", "5.2", "5.2b", "5.2c", "5.3", "5.4"]
# Files larger than this are data (corpora, results), not prose or code.
MAX_FILE_BYTES = 2_000_000


def document_sections(text: str) -> tuple[list[str], list[str]]:
    """The section numbers of the document's headings, and the numbers used more than once.
    Lines inside fenced code blocks are not headings."""
    numbers: list[str] = []
    in_fence = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        m = HEADING.match(line)
        if m:
            numbers.append(m.group(1))
    duplicates = sorted({n for n in numbers if numbers.count(n) > 1})
    return numbers, duplicates


def citations(text: str) -> list[tuple[int, str]]:
    """(line number, section) for every section cited in `text`; a citation that a comment
    wraps onto the next line is found too, at the line of its number."""
    found: list[tuple[int, str]] = []
    for m in CITATION.finditer(text):
        for n in CITED_NUMBER.finditer(m.group(1)):
            offset = m.start(1) + n.start(1)
            found.append((text.count("\n", 0, offset) + 1, n.group(1)))
    return found


def scanned_files(root: Path) -> list[Path]:
    files: list[Path] = [root / name for name in SCANNED_TOP_FILES if (root / name).is_file()]
    for top in SCANNED_DIRS:
        base = root / top
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            if path.is_file() and not path.is_symlink() and path.stat().st_size <= MAX_FILE_BYTES:
                files.append(path)
    return files


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def unfollowable_pointers(rel: Path, text: str) -> list[tuple[int, str, str]]:
    """(line, pattern name, matched text) for every pointer in `text` that a reader of the
    repository cannot follow; a mention of the study counts only without its citation."""
    found = [(line_of(text, m.start()), name, m.group(0))
             for name, pattern in (("design file", DESIGN_FILE), ("issue number", ISSUE_NUMBER))
             for m in pattern.finditer(text)]
    if rel == DOCUMENT:
        return found
    cited = [line for line, number in citations(text) if number == STUDY_SECTION]
    for m in STUDY.finditer(text):
        line = line_of(text, m.start())
        if rel.suffix == ".md":
            near = bool(cited)
        else:
            near = any(abs(line - c) <= STUDY_CITATION_LINES for c in cited)
        if not near:
            found.append((line, "study without a citation of §9", m.group(0)))
    return found


def check_pointers(root: Path, files: list[Path]) -> tuple[int, list[str]]:
    """Scans every file for unfollowable pointers: (files that passed, failure lines). A
    PENDING_POINTERS entry excuses its file and pattern, and fails when there is nothing left
    to excuse."""
    passed = 0
    failures: list[str] = []
    excused: set[tuple[str, str]] = set()
    for path in files:
        rel = path.relative_to(root)
        text = read_text(path)
        if text is None or rel == SELF:
            continue
        bad = []
        for line, name, what in unfollowable_pointers(rel, text):
            if (rel.as_posix(), name) in PENDING_POINTERS:
                excused.add((rel.as_posix(), name))
                print(f"{rel}:{line}: pending: {name} ({what!r})")
            else:
                bad.append(f"{rel}:{line}: {name} ({what!r}); cite {DOCUMENT} §N or "
                           "another file of the repository instead")
        failures += bad
        passed += not bad
    for file, name in sorted(PENDING_POINTERS - excused):
        failures.append(f"{file}: no {name} left; remove its PENDING_POINTERS entry")
    return passed, failures


def read_text(path: Path) -> str | None:
    """The file as text, or None for a binary file (a NUL byte, or not UTF-8)."""
    data = path.read_bytes()
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2],
                        help="the repository (default: two levels above this script)")
    args = parser.parse_args()
    root: Path = args.root.resolve()

    document = root / DOCUMENT
    if not document.is_file():
        print(f"{DOCUMENT}: missing; expected the architecture document")
        print("0 passed, 1 failed")
        return 1
    numbers, duplicates = document_sections(document.read_text(encoding="utf-8"))
    sections = set(numbers)

    passed = 0
    failures: list[str] = []
    for number in REQUIRED:
        if number in sections:
            passed += 1
        else:
            failures.append(f"{DOCUMENT}: no heading for §{number}; expected one "
                            "(code cites the design's numbering)")
    for number in duplicates:
        failures.append(f"{DOCUMENT}: §{number} is the number of more than one heading")
    if not duplicates:
        passed += 1

    cited = 0
    for path in scanned_files(root):
        text = read_text(path)
        if text is None or "architecture.md" not in text:
            continue
        for lineno, number in citations(text):
            cited += 1
            if number in sections:
                passed += 1
            else:
                failures.append(f"{path.relative_to(root)}:{lineno}: architecture.md §{number}: "
                                f"no such section in {DOCUMENT}")

    pointer_passes, pointer_failures = check_pointers(root, scanned_files(root))
    passed += pointer_passes
    failures += pointer_failures

    for line in failures:
        print(line)
    print(f"{cited} citation(s) of {DOCUMENT} checked against {len(sections)} section(s)")
    print(f"{passed} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
