"""What `vcflow run`, `describe` and `get -o wide` show of a fan-out `for`
(docs/flow-features.md section 19): the entry with its items' counts, its items after it in
index order, and past 16 items, only those that did not complete — one line says where the
others are."""

from __future__ import annotations

from pathlib import Path

import pytest

from .flows import cli, flow, template

SCRIPT = (
    'if [ -z "$VCFLOW_ITEM" ]; then echo "{\\"xs\\": $XS}" > "$VCFLOW_OUTPUTS"; '
    'else echo "{\\"sq\\": $((VCFLOW_ITEM * VCFLOW_ITEM))}" > "$VCFLOW_OUTPUTS"; fi'
)


def manifest(count: int) -> str:
    text = template("step", SCRIPT) + flow(
        "fan",
        "{name: prep, template: step}",
        "{name: sq, template: step, dependsOn: {targets: [prep]},"
        " for: {fromOutput: prep.xs, parallelism: 4}}",
        "{name: last, template: step, dependsOn: {targets: [sq]}}",
        spec="  arguments: []\n",
    )
    return text.replace("$XS", str(list(range(count))))


@pytest.mark.parametrize("count", [3, 20])
def test_the_items_are_reported_and_folded_past_16(tmp_path: Path, count: int) -> None:
    path = tmp_path / "flow.yaml"
    path.write_text(manifest(count))
    state = tmp_path / "state"
    done = cli(state, "run", "-f", str(path), "--no-live")
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line.split()[1] for line in done.stdout.splitlines() if line.startswith("fan ")]
    shown = [f"sq-{i}" for i in range(count)] if count <= 16 else []
    assert rows == ["prep", "sq", *shown, "last"]
    assert f"{count} items: {count} Completed" in done.stdout
    text = cli(state, "describe", "jobflow", "fan").stdout
    jobs = text.split("  Jobs:", 1)[1].split("Completed Jobs:", 1)[0]
    listed = [line.split()[0] for line in jobs.splitlines()[2:] if line.strip()]
    if count <= 16:
        assert listed == ["fan-prep", "fan-sq", *[f"fan-sq-{i}" for i in range(count)], "fan-last"]
    else:
        assert listed == ["fan-prep", "fan-sq", "fan-sq-*", "fan-last"]
        assert f"{count} completed items not listed" in jobs
    wide = cli(state, "get", "jobflow", "fan", "-o", "wide").stdout
    assert wide.splitlines()[1].split()[-2:] == ["3/3", "-"]  # (entries, not vcjobs; ended)
