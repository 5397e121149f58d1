"""Train: data-parallel linear regression on two replicas. Each replica computes the gradient
on its shard; the gradients are averaged every step by an all-reduce over TCP at the master
(replica 0, at the svc plugin's host name `<job>-trainer-0.<job>`, port $MASTER_PORT), as
torch.distributed does. Replica 0 writes the model to the shared volume."""

import json
import os
import socket
import time

rank = int(os.environ["VK_TASK_INDEX"])
world = int(os.environ["VC_TRAINER_NUM"])
master = os.environ["VC_TRAINER_HOSTS"].split(",")[0]
port = int(os.environ["MASTER_PORT"])
lr, epochs = float(os.environ["LEARNING_RATE"]), int(os.environ["EPOCHS"])
data = os.environ.get("DATA_DIR", "/data")
with open(os.path.join(data, f"shard-{rank}.json")) as f:
    shard = json.load(f)


def connect() -> list[socket.socket]:
    """The master accepts every other replica; the others connect to the master."""
    if rank == 0:
        server = socket.create_server(("0.0.0.0", port), reuse_port=False)
        server.settimeout(60)
        return [server.accept()[0] for _ in range(world - 1)]
    deadline = time.monotonic() + 60
    while True:
        try:
            return [socket.create_connection((master, port), timeout=60)]
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def all_reduce(peers: list[socket.socket], readers: list, grad: list[float]) -> list[float]:
    """The mean of every replica's gradient, on every replica."""
    if rank == 0:
        grads = [grad] + [json.loads(r.readline()) for r in readers]
        mean = [sum(g[i] for g in grads) / world for i in range(len(grad))]
        for peer in peers:
            peer.sendall((json.dumps(mean) + "\n").encode())
        return mean
    peers[0].sendall((json.dumps(grad) + "\n").encode())
    return json.loads(readers[0].readline())


peers = connect()
readers = [p.makefile() for p in peers]
w = b = 0.0
for _epoch in range(epochs):
    n = len(shard)
    gw = sum(2 * (w * x + b - y) * x for x, y in shard) / n
    gb = sum(2 * (w * x + b - y) for x, y in shard) / n
    gw, gb = all_reduce(peers, readers, [gw, gb])
    w, b = w - lr * gw, b - lr * gb
loss = sum((w * x + b - y) ** 2 for x, y in shard) / len(shard)
print(f"train: rank {rank}/{world} on {socket.gethostname()}: w={w:.3f} b={b:.3f} loss={loss:.4f}")
if rank == 0:
    with open(os.path.join(data, "model.json"), "w") as f:
        json.dump({"w": w, "b": b, "epochs": epochs, "replicas": world}, f)
