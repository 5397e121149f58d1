"""The steps of examples/sweep, one per subcommand (plain python3, no GPU).

Each step reads what vcflow gives every job of a flow that uses the flow language
(docs/flow-features.md part II): `VCFLOW_ARGS` (the flow's arguments), `VCFLOW_INPUTS` (its
targets' outputs; a target with `for` hands on a list, one item's outputs each, in index
order), and for an item of a `for`, `VCFLOW_ITEM` (the item, JSON unless a string) and
`VCFLOW_INDEX`. Each writes its own outputs, one JSON object, to the file `VCFLOW_OUTPUTS`
names.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time

RATES = [0.001, 0.003, 0.01, 0.03, 0.05, 0.1, 0.2, 0.5]


def inputs() -> dict:
    return json.loads(os.environ.get("VCFLOW_INPUTS") or "{}")


def hand_on(outputs: dict) -> None:
    with open(os.environ["VCFLOW_OUTPUTS"], "w", encoding="utf-8") as out:
        json.dump(outputs, out)
    print(f"outputs: {json.dumps(outputs)}")


def data(seed: int, rows: int) -> list[tuple[float, float]]:
    """y = 3x + 2 with a little noise: what each configuration fits."""
    rng = random.Random(seed)
    return [(x, 3 * x + 2 + rng.gauss(0, 0.05)) for x in (rng.random() for _ in range(rows))]


def prep() -> None:
    """The sweep's configurations: one learning rate each, all on the same data."""
    configs = [{"lr": rate, "epochs": 200} for rate in RATES]
    hand_on({"seed": 7, "rows": 200, "configs": configs})


def train() -> None:
    """Gradient descent with this item's configuration; hands on its loss, its score
    (1 / (1 + loss), in (0, 1]) and when it started and ended (time.time())."""
    started = time.time()
    config = json.loads(os.environ["VCFLOW_ITEM"])
    index = int(os.environ["VCFLOW_INDEX"])
    given = inputs()["prep"]
    rows = data(given["seed"], given["rows"])
    rate = float(config["lr"])
    w = b = 0.0
    for _ in range(int(config["epochs"])):
        gw = sum(2 * (w * x + b - y) * x for x, y in rows) / len(rows)
        gb = sum(2 * (w * x + b - y) for x, y in rows) / len(rows)
        w, b = w - rate * gw, b - rate * gb
    loss = sum((w * x + b - y) ** 2 for x, y in rows) / len(rows)
    time.sleep(0.4)  # a little longer, so that the items running at once can be seen
    hand_on(
        {
            "index": index,
            "lr": rate,
            "loss": round(loss, 6),
            "score": round(1 / (1 + loss), 6),
            "started": started,
            "ended": time.time(),
        }
    )


def pick() -> None:
    """The best of the sweep: the item with the highest score (the first, on a tie)."""
    runs = inputs()["train"]
    best = max(range(len(runs)), key=lambda i: (runs[i]["score"], -i))
    hand_on({"best": best, "lr": runs[best]["lr"], "score": runs[best]["score"]})


def deploy() -> None:
    chosen = inputs()["pick"]
    print(f"deploy: item {chosen['best']} (lr {chosen['lr']}, score {chosen['score']})")
    hand_on({"deployed": chosen["best"]})


if __name__ == "__main__":
    {"prep": prep, "train": train, "pick": pick, "deploy": deploy}[sys.argv[1]]()
