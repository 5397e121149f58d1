"""A two-process all-reduce over TCP, the way torchrun rendezvous at MASTER_ADDR:MASTER_PORT.

Replica 0 (the master) listens on 0.0.0.0:$MASTER_PORT; every other replica connects to the
master's host name, as Volcano's svc plugin gives it (the first host in $VC_WORKER_HOSTS,
`<job>-worker-0.<job>`), sends its number, and gets the sum of all of them back.
Plain python3: no torch needed.
"""

import os
import socket
import sys
import time

rank = int(os.environ["VK_TASK_INDEX"])  # the env plugin
hosts = os.environ["VC_WORKER_HOSTS"].split(",")  # the svc plugin
world = int(os.environ["VC_WORKER_NUM"])
master, port = hosts[0], int(os.environ.get("MASTER_PORT", "29500"))
value = float(rank + 1)  # this replica's "gradient"

if rank == 0:
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("0.0.0.0", port))
    server.listen()
    server.settimeout(60)
    peers = [server.accept()[0] for _ in range(world - 1)]
    total = value + sum(float(p.makefile().readline()) for p in peers)
    for peer in peers:
        peer.sendall(f"{total}\n".encode())
else:
    deadline = time.monotonic() + 60
    while True:
        try:
            conn = socket.create_connection((master, port), timeout=5)
            break
        except OSError:
            if time.monotonic() > deadline:
                sys.exit(f"rank {rank}: cannot reach the master at {master}:{port}")
            time.sleep(0.05)
    conn.sendall(f"{value}\n".encode())
    total = float(conn.makefile().readline())
print(f"rank {rank} on {socket.gethostname()}: all-reduce of {world} replicas = {total}")
