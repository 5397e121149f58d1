"""Preprocess: make a small regression data set (y = 3x + 2 + noise), normalise nothing,
split it into one training shard per trainer replica and a held-out test set, all under
the shared volume ($DATA_DIR, the volume's mountPath)."""

import json
import os
import random

data = os.environ.get("DATA_DIR", "/data")
shards = int(os.environ.get("SHARDS", "2"))
rng = random.Random(42)
rows = [(x, 3.0 * x + 2.0 + rng.gauss(0, 0.1)) for x in (rng.uniform(-1, 1) for _ in range(600))]
train, test = rows[:500], rows[500:]
for k in range(shards):
    with open(os.path.join(data, f"shard-{k}.json"), "w") as f:
        json.dump(train[k::shards], f)
with open(os.path.join(data, "test.json"), "w") as f:
    json.dump(test, f)
print(f"preprocess: {len(train)} training rows in {shards} shards, {len(test)} test rows")
