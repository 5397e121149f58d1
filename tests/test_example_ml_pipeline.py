"""examples/ml-pipeline end to end with `vcflow run`: preprocess → 2-replica training with a
TCP rendezvous → evaluate, sharing files through a hostPath volume at /data and reading
hyperparameters from a ConfigMap (the volume's host path moved into tmp_path)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from vcflow.podserver import isolation

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "ml-pipeline"


@pytest.mark.skipif(not isolation.usable(), reason="no private namespaces on this machine")
def test_the_ml_pipeline_trains_and_evaluates(tmp_path: Path) -> None:
    project = tmp_path / "ml-pipeline"
    shutil.copytree(EXAMPLE, project)
    shared = tmp_path / "shared"
    manifest = project / "pipeline.yaml"
    manifest.write_text(manifest.read_text().replace("/tmp/vcflow-ml-pipeline", str(shared)))
    state = tmp_path / "state"
    argv = [sys.executable, "-m", "vcflow", "--state-dir", str(state), "run", "-f", "."]
    done = subprocess.run(
        [*argv, "--no-live", "--timeout", "120"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "flow ml-pipeline Succeed" in done.stdout
    metrics = json.loads((shared / "metrics.json").read_text())
    assert metrics["test_rows"] == 100 and metrics["mse"] < 0.05
    model = json.loads((shared / "model.json").read_text())
    assert model["replicas"] == 2 and abs(model["w"] - 3) < 0.1 and abs(model["b"] - 2) < 0.1
    pods = state / "pods" / "default"
    for rank in (0, 1):
        log = (pods / f"ml-pipeline-train-trainer-{rank}" / "trainer.0.log").read_text()
        assert log.startswith(f"train: rank {rank}/2 on ml-pipeline-train-trainer-{rank}: ")
