"""`vcflow run --container-log-max-size SIZE --container-log-max-files N`: the kubelet's
log rotation, per container run (`podserver.logrotate`); bad values are usage errors."""

from __future__ import annotations

import pytest

from vcflow.podserver import logrotate

from .conftest import RunOne

SCRIPT = 'i=0; while [ $i -lt 40 ]; do printf "%08192d\\n" 0; i=$((i+1)); sleep 0.05; done'


CHATTY = {"name": "chatty", "kind": "Job", "container": "c"}  # vcjob chatty, container c


def test_a_runs_logs_are_rotated_within_the_limits_given(run_one: RunOne) -> None:
    limits = ("--container-log-max-size", "16Ki", "--container-log-max-files", "2")
    ran = run_one(SCRIPT, *limits, **CHATTY)
    result = ran.result
    assert result.exit_code == 0, result.stderr
    log = ran.pod / "c.0.log"
    kept = logrotate.copies(str(log))
    assert len(kept) == 1  # max-files 2: the log and one copy
    assert log.stat().st_size < 16 * 1024 + 200 * 1024


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("--container-log-max-size", "10MB", "is not a size"),
        ("--container-log-max-size", "100", "less than the smallest log size"),
        ("--container-log-max-files", "1", "is less than 2"),
    ],
)
def test_bad_rotation_values_are_usage_errors(
    run_one: RunOne, option: str, value: str, said: str
) -> None:
    result = run_one(SCRIPT, option, value, **CHATTY).result
    assert result.exit_code == 2
    assert said in result.stderr
