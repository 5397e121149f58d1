"""Tier 7: the conformance runner: runs the behaviour cases of `tests/conformance/cases` (format in
their README) against vcflow's real code. `python -m vcflow.conformance PATH...` is the CLI;
`run_file` / `run_files` the Python API; `RUNNERS` maps a case kind to its runner; a
`Serve` puts another store (the Kubernetes API) between the controller cases and their
memory store.
"""

from vcflow.conformance.cases import Case, CaseError, Step, discover, load_case
from vcflow.conformance.results import Failed, Outcome, Passed, Result, Skipped
from vcflow.conformance.runner import RUNNERS, run_case, run_file, run_files
from vcflow.conformance.world import HarnessStore, Serve

__all__ = [
    "RUNNERS",
    "Case",
    "CaseError",
    "Failed",
    "HarnessStore",
    "Outcome",
    "Passed",
    "Result",
    "Serve",
    "Skipped",
    "Step",
    "discover",
    "load_case",
    "run_case",
    "run_file",
    "run_files",
]
