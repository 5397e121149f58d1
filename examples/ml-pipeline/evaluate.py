"""Evaluate: the trained model on the held-out test set; writes metrics.json beside it and
fails (exit 1) when the error is above $MAX_MSE."""

import json
import os
import sys

data = os.environ.get("DATA_DIR", "/data")
with open(os.path.join(data, "model.json")) as f:
    model = json.load(f)
with open(os.path.join(data, "test.json")) as f:
    test = json.load(f)
mse = sum((model["w"] * x + model["b"] - y) ** 2 for x, y in test) / len(test)
with open(os.path.join(data, "metrics.json"), "w") as f:
    json.dump({"mse": mse, "test_rows": len(test)}, f)
print(f"evaluate: test MSE {mse:.4f} (w={model['w']:.3f}, b={model['b']:.3f})")
sys.exit(0 if mse <= float(os.environ.get("MAX_MSE", "0.05")) else 1)
