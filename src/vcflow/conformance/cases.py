"""Conformance case files: find them, load one, check the keys every kind shares, and pick
what vcflow is judged on — `expect_vcflow` over `expect`, `vcflow_skip`, trailing skipped
steps, and the rule that a flagged case without a vcflow expectation is skipped, never passed
(the cases' README, "vcflow expectations and the runner"). Judging is the kind runners' job.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vcflow.api import loading
from vcflow.api.errors import Origin, ParseError

KINDS = ("admission", "controller", "runtime")
CASE_SUFFIX = ".yaml"
NO_VCFLOW_EXPECTATION = "no vcflow expectation"


class CaseError(Exception):
    """The file is not a valid case; the message is the one-line reason."""


class UsageError(Exception):
    """The paths given do not name any case file."""


@dataclass(frozen=True)
class Case:
    """One loaded case: its id, kind, raw data and the YAML document (for line numbers)."""

    id: str
    kind: str
    path: str
    document: loading.Document

    @property
    def data(self) -> Mapping[str, Any]:
        return self.document.data

    @property
    def flagged(self) -> bool:
        return bool(self.data.get("volcano_bug")) or bool(self.data.get("design_divergence"))

    def has_vcflow_expectation(self) -> bool:
        """`expect_vcflow` at the top or in any step."""
        if "expect_vcflow" in self.data:
            return True
        steps = self.data.get("steps")
        return isinstance(steps, list) and any(
            isinstance(s, Mapping) and "expect_vcflow" in s for s in steps
        )

    def sub_document(self, data: dict[str, Any], loc: Sequence[str | int]) -> loading.Document:
        """A Document for an object nested at `loc` in the case, with its own line."""
        doc = loading.Document(data, self.document.origin, self.document.node, tuple(loc))
        origin = Origin(self.path, self.document.origin.document, doc.line_of(()))
        return loading.Document(data, origin, self.document.node, tuple(loc))


@dataclass(frozen=True)
class Step:
    """A step as vcflow runs it: `expect` is `expect_vcflow` when the step has one."""

    index: int
    name: str
    do: Sequence[Any]
    expect: Mapping[str, Any]
    raw: Mapping[str, Any]


def discover(paths: Iterable[str]) -> list[str]:
    """Case files: given files as they are, directories searched recursively for *.yaml."""
    found: list[str] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found += sorted(str(p) for p in path.rglob(f"*{CASE_SUFFIX}") if p.is_file())
        elif path.exists():
            found.append(raw)
        else:
            raise UsageError(f"no such file or directory: {raw}")
    if not found:
        raise UsageError(f"no *{CASE_SUFFIX} case files in: {' '.join(paths)}")
    return list(dict.fromkeys(found))


def load_case(path: str) -> Case:
    """Read and check one case file; raises CaseError with the reason."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CaseError(f"not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise CaseError(f"cannot read: {exc.strerror or exc}") from None
    try:
        docs = loading.parse_text(text, path)
    except ParseError as exc:
        line = f"line {exc.origin.line}: " if exc.origin.line else ""
        raise CaseError(line + str(exc).removeprefix(f"{exc.origin}: ")) from None
    if len(docs) != 1:
        raise CaseError(f"expected one YAML document (the case), found {len(docs)}")
    return _checked(path, docs[0])


def _checked(path: str, doc: loading.Document) -> Case:
    data = doc.data
    case_id, kind = data.get("id"), data.get("kind")
    if not isinstance(case_id, str) or not case_id:
        raise CaseError("missing id (a non-empty string)")
    if case_id != Path(path).stem:
        raise CaseError(f'id "{case_id}" is not the file stem "{Path(path).stem}"')
    if kind not in KINDS:
        raise CaseError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    for key in ("volcano_bug", "design_divergence"):
        if not isinstance(data.get(key, False), bool):
            raise CaseError(f"{key} must be a boolean")
    for key in ("vcflow_skip", "vcflow_follows_volcano"):
        if key in data and (not isinstance(data[key], str) or not data[key].strip()):
            raise CaseError(f"{key} must be a non-empty string")
    return Case(case_id, str(kind), path, doc)


def skip_reason(case: Case) -> str | None:
    """Why vcflow does not run this case at all, or None to run it."""
    skip = case.data.get("vcflow_skip")
    if isinstance(skip, str):
        return " ".join(skip.split())
    if case.flagged and "vcflow_follows_volcano" not in case.data:
        if not case.has_vcflow_expectation():
            return NO_VCFLOW_EXPECTATION
    return None


def pick_expect(where: Mapping[str, Any], what: str) -> Mapping[str, Any]:
    """`expect_vcflow` if present, else `expect`; raises CaseError when neither is a map."""
    key = "expect_vcflow" if "expect_vcflow" in where else "expect"
    value = where.get(key)
    if not isinstance(value, Mapping):
        raise CaseError(f"{what}: {key} must be a map")
    return value


def vcflow_steps(case: Case) -> list[Step]:
    """The steps vcflow runs, in order: those before the first `vcflow_skip` step.

    Only trailing steps may carry `vcflow_skip`; anything else is a malformed case.
    """
    raw = case.data.get("steps")
    if not isinstance(raw, list) or not raw:
        raise CaseError("steps must be a non-empty list")
    steps: list[Step] = []
    skipping = False
    for i, step in enumerate(raw):
        what = f"steps[{i}]"
        if not isinstance(step, Mapping):
            raise CaseError(f"{what} must be a map")
        if "vcflow_skip" in step:
            skipping = True
            continue
        if skipping:
            raise CaseError(f"{what}: only trailing steps may carry vcflow_skip")
        do = step.get("do", [])
        if not isinstance(do, list):
            raise CaseError(f"{what}.do must be a list")
        name = str(step.get("name", what))
        steps.append(Step(i, name, do, pick_expect(step, what), step))
    return steps
