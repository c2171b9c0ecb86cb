"""The command port's protocol as docs/operations.md writes it: its tables, and a documented
reply as a regex. The operations tests check efu's replies against these, byte for byte."""
from __future__ import annotations

import re

from support.efu import SOURCE

DOC = SOURCE / "docs" / "operations.md"


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _code(cell: str) -> str | None:
    m = re.fullmatch(r"`([^`]*)`", cell)
    return m.group(1) if m else None


def doc_tables() -> tuple[list[tuple[int, str, str]], list[tuple[str, str]]]:
    """The command table (number, request, reply) and the table of other replies (request,
    reply) from docs/operations.md. A request that is prose, not code, is returned as is."""
    commands, others = [], []
    header = None
    for line in DOC.read_text().splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = _cells(line)
        if header is None:
            header = cells
            continue
        if set(line) <= set("|- "):
            continue
        if header[:3] == ["#", "request", "reply"]:
            commands.append((int(cells[0]), _code(cells[1]), _code(cells[2])))
        elif header == ["request", "reply"]:
            others.append((_code(cells[0]) or cells[0], _code(cells[1])))
    return commands, others


def template_regex(template: str, values: dict[str, str]) -> re.Pattern:
    """A documented reply as a regex: literal text exactly, each {name} as values[name] (itself
    a regex)."""
    out, pos = "", 0
    for m in re.finditer(r"\{(\w+)\}", template):
        out += re.escape(template[pos:m.start()]) + "(?:" + values[m.group(1)] + ")"
        pos = m.end()
    return re.compile(out + re.escape(template[pos:]))
