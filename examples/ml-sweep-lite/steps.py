"""The steps of examples/ml-sweep-lite, one per subcommand (plain python3, no GPU).

Each step reads what it needs from the environment vcflow gives every job of a flow that
uses the flow language (docs/flow-features.md part II): `VCFLOW_ARGS` (the flow's
arguments), `VCFLOW_INPUTS` (its targets' outputs), and writes its own outputs, one JSON
object, to the file `VCFLOW_OUTPUTS` names. An exit handler also gets `VCFLOW_FLOW_PHASE`.
"""

from __future__ import annotations

import json
import os
import random
import sys


def inputs() -> dict:
    return json.loads(os.environ.get("VCFLOW_INPUTS") or "{}")


def arguments() -> dict:
    return json.loads(os.environ.get("VCFLOW_ARGS") or "{}")


def hand_on(outputs: dict) -> None:
    with open(os.environ["VCFLOW_OUTPUTS"], "w", encoding="utf-8") as out:
        json.dump(outputs, out)
    print(f"outputs: {json.dumps(outputs)}")


def data(seed: int, rows: int) -> list[tuple[float, float]]:
    """y = 3x + 2 with a little noise: what the sweep fits."""
    rng = random.Random(seed)
    return [(x, 3 * x + 2 + rng.gauss(0, 0.05)) for x in (rng.random() for _ in range(rows))]


def prep() -> None:
    hand_on({"seed": 7, "rows": 400})


def train() -> None:
    """Gradient descent with this entry's learning rate; hands on its loss and weights."""
    given = inputs()["prep"]
    rows = data(given["seed"], given["rows"])
    rate, epochs = float(os.environ["LEARNING_RATE"]), 300
    w = b = 0.0
    for _ in range(epochs):
        gw = sum(2 * (w * x + b - y) * x for x, y in rows) / len(rows)
        gb = sum(2 * (w * x + b - y) for x, y in rows) / len(rows)
        w, b = w - rate * gw, b - rate * gb
    loss = sum((w * x + b - y) ** 2 for x, y in rows) / len(rows)
    hand_on({"rate": rate, "loss": round(loss, 6), "w": round(w, 4), "b": round(b, 4)})


def evaluate() -> None:
    """Picks the best of the sweep (lowest loss) and scores it on fresh data."""
    runs = inputs()
    best = min(runs, key=lambda name: runs[name]["loss"])
    w, b = runs[best]["w"], runs[best]["b"]
    test = data(seed=99, rows=200)
    close = sum(1 for x, y in test if abs(w * x + b - y) < 0.15)
    hand_on({"best": best, "accuracy": round(close / len(test), 3)})


def deploy() -> None:
    chosen = inputs()["evaluate"]
    print(f"deploy: {chosen['best']} (accuracy {chosen['accuracy']})")
    hand_on({"deployed": chosen["best"]})


def serve() -> None:
    target = arguments()["target"]
    print(f"serve: on {target} ({os.environ.get('SERVE_IMAGE_KIND', '?')})")


def notify() -> None:
    print(f"notify: the flow ended {os.environ['VCFLOW_FLOW_PHASE']}")


if __name__ == "__main__":
    {
        "prep": prep,
        "train": train,
        "evaluate": evaluate,
        "deploy": deploy,
        "serve": serve,
        "notify": notify,
    }[sys.argv[1]]()
