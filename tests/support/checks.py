"""The one check() and fail() of every Python test.

check() prints "ok   <what>" or "FAIL <what>", records a failure and goes on, so that one run
shows every assertion that failed; require() is check() that stops the test at once (a later
step needs it to hold); fail() stops the test at once. A test ends with sys.exit(finish()). As a
safety net a test that recorded a failure never exits 0, even if it forgot finish().
"""
from __future__ import annotations

import atexit
import os
import sys
from typing import NoReturn

failures: list[str] = []


def check(condition: bool, message: str) -> bool:
    print(("ok   " if condition else "FAIL ") + message, flush=True)
    if not condition:
        failures.append(message)
    return bool(condition)


def fail(message: str) -> NoReturn:
    check(False, message)
    sys.exit(finish())


def require(condition: bool, message: str) -> None:
    if not check(condition, message):
        sys.exit(finish())


def finish() -> int:
    """The exit code: 0 if every check passed; prints how many failed."""
    if failures:
        print(f"{len(failures)} check(s) failed", flush=True)
        return 1
    return 0


@atexit.register
def _never_pass_with_failures() -> None:
    # sys.exit(0) or falling off the end after a failed check() would pass the test: not so.
    if failures:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)
