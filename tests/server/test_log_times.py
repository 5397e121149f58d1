"""The log route's `timestamps`, `sinceSeconds` and `sinceTime` (kube's PodLogOptions), and
the values kube refuses refused alike (400): the lines' times are the log's time index's
(`podserver.logtimes`; the timing itself: tests/cli/test_logs_times.py)."""

from __future__ import annotations

import re
import time

from vcflow.podserver import logtimes

from .conftest import CORE, FLOW, Start, flow_phase, jobflow, template, wait_until


def test_the_log_routes_time_parameters(start_server: Start) -> None:
    server = start_server()
    with server.client() as client:
        made = client.post(f"{FLOW}/jobtemplates", json=template("a", "echo one; echo two"))
        assert made.status_code == 201, made.text
        assert client.post(f"{FLOW}/jobflows", json=jobflow("f", "a")).status_code == 201
        wait_until(lambda: flow_phase(client, "f") == "Succeed", "the flow to succeed")
        log = f"{CORE}/pods/f-a-t-0/log"
        stamped = client.get(f"{log}?timestamps=true").text.splitlines()
        assert len(stamped) == 2
        times = []
        for line, text in zip(stamped, ("one", "two"), strict=True):
            found = re.fullmatch(r"(\S+Z) (.*)", line)
            assert found is not None and found.group(2) == text
            times.append(logtimes.parse_rfc3339(found.group(1)))
        assert times[0] <= times[1] <= time.time_ns()
        assert client.get(f"{log}?sinceSeconds=3600").text == "one\ntwo\n"
        future = logtimes.rfc3339(time.time_ns() + 3600 * 10**9)
        assert client.get(log, params={"sinceTime": future}).text == ""
        at = logtimes.rfc3339(times[0])
        assert client.get(log, params={"sinceTime": at, "tailLines": "1"}).text == "two\n"
        for query, message in (
            ({"sinceSeconds": "0"}, "sinceSeconds must be a positive integer"),
            ({"sinceSeconds": "1.5"}, "sinceSeconds: '1.5' is not an integer"),
            ({"sinceSeconds": "1", "sinceTime": at}, "only one of sinceTime or sinceSeconds"),
            ({"sinceTime": "yesterday"}, 'sinceTime: "yesterday" is not an RFC 3339 time'),
            ({"timestamps": "maybe"}, "'maybe' is not a boolean"),
        ):
            refused = client.get(log, params=query)
            assert refused.status_code == 400, query
            assert message in refused.json()["message"]
