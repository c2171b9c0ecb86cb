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

Usage: architecture_citations_test.py [--root REPO]. Exit 0 when every check passes, 1
otherwise; the last line is "N passed, M failed". Python 3 standard library only.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

SCANNED_DIRS = ("efu", "common", "modules", "tests", "benchmarks", "scripts", "docs")
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
    files: list[Path] = []
    for top in SCANNED_DIRS:
        base = root / top
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            if path.is_file() and not path.is_symlink() and path.stat().st_size <= MAX_FILE_BYTES:
                files.append(path)
    return files


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

    for line in failures:
        print(line)
    print(f"{cited} citation(s) of {DOCUMENT} checked against {len(sections)} section(s)")
    print(f"{passed} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
