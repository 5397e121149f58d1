"""`vcflow run --container-log-max-size SIZE --container-log-max-files N`: the kubelet's
log rotation, per container run (`runtime.logrotate`); bad values are usage errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from vcflow.runtime import logrotate

from .conftest import Vc

JOB = """
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: chatty}
spec:
  minAvailable: 1
  tasks:
    - name: t
      replicas: 1
      template:
        spec:
          restartPolicy: Never
          containers:
            - name: c
              command: [sh, -c, '{SCRIPT}']
"""
SCRIPT = 'i=0; while [ $i -lt 40 ]; do printf "%08192d\\n" 0; i=$((i+1)); sleep 0.05; done'


def test_a_runs_logs_are_rotated_within_the_limits_given(
    vc: Vc, state_dir: Path, tmp_path: Path
) -> None:
    manifest = tmp_path / "job.yaml"
    manifest.write_text(JOB.replace("{SCRIPT}", SCRIPT))
    limits = ("--container-log-max-size", "16Ki", "--container-log-max-files", "2")
    result = vc("run", "-f", manifest, "--no-live", *limits)
    assert result.exit_code == 0, result.stderr
    log = state_dir / "pods" / "default" / "chatty-t-0" / "c.0.log"
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
    vc: Vc, tmp_path: Path, option: str, value: str, said: str
) -> None:
    manifest = tmp_path / "job.yaml"
    manifest.write_text(JOB)
    result = vc("run", "-f", manifest, "--no-live", option, value)
    assert result.exit_code == 2
    assert said in result.stderr
