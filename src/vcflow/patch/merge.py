"""Apply a flow entry's `patch.jobSpec` to its template's spec (SEMANTICS row 3).

PLACEHOLDER: merge rules being written (issue 2/3).
"""

from __future__ import annotations

from vcflow.api.vcjob import JobSpec


def patched_spec(base: JobSpec, patch: JobSpec) -> JobSpec:
    """The template spec with the patch applied. Pure; returns a new object."""
    return base.clone()
