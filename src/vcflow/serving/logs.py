"""The log levels a serving process takes (`--log-level`, uvicorn's names) and the logging
it sets up with one: `trace` is uvicorn's, below Python's DEBUG."""

from __future__ import annotations

import logging
from enum import StrEnum

from vcflow.serving import Refused

#: one line a record, what `vcflow server` and `vcflow webhook` print
BRIEF = "%(levelname)s: %(message)s"
#: with the time and the logger, what `vcflow operator` prints (a pod's log, read later)
STAMPED = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class LogLevel(StrEnum):
    CRITICAL = "critical"
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"
    DEBUG = "debug"
    TRACE = "trace"


LEVELS = tuple(level.value for level in LogLevel)


def check_level(level: str) -> None:
    """Refused unless `level` is one of LEVELS."""
    if level not in LEVELS:
        raise Refused(f"--log-level {level!r}: one of {', '.join(LEVELS)}")


def python_level(level: str) -> str:
    """The `logging` level of a `--log-level` (trace: DEBUG, Python has none below)."""
    return level.upper() if level != LogLevel.TRACE else "DEBUG"


def configure(level: str, fmt: str = BRIEF) -> None:
    """The root logger at `level`, records written as `fmt` to stderr."""
    logging.basicConfig(level=python_level(level), format=fmt)
