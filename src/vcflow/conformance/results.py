"""The verdict of one conformance case: Passed, Failed or Skipped, each with a one-line reason.

Every kind runner returns one of these; the runner wraps it in an Outcome that names the case
(its id, or the file path when the file could not be read as a case). Pure data.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Passed:
    detail: str = ""


@dataclass(frozen=True)
class Failed:
    reason: str


@dataclass(frozen=True)
class Skipped:
    reason: str


Result = Passed | Failed | Skipped


@dataclass(frozen=True)
class Outcome:
    """One case's result; `label` is the case id, or the file path if there is no id."""

    label: str
    result: Result
    path: str = ""
