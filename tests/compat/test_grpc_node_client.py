"""The Node.js RocketMQ 5.x client (npm ``rocketmq-client-nodejs`` 1.0.8, gRPC) against ``mqbroker --enable-proxy``,
in separate processes: its producer → its SimpleConsumer, and its producer → the official Python 5.x consumer.

``make test`` installs it with ``npm ci`` into ``tests/compat/node5/node_modules`` when npm is on PATH (as ali-ons);
without it these tests skip with that reason. ``tests/compat/node5/driver.js`` reports JSON lines."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.compat.driver_events import events
from tests.compat.grpc_support import (
    Env,
    create_group,
    create_topic,
    msgs,
    start_consumer,
    wait_online,
)
from tests.servers import Proc

NODE5 = Path(__file__).with_name("node5")
DRIVER = NODE5 / "driver.js"

pytestmark = [
    pytest.mark.compat,
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH"),
    pytest.mark.skipif(
        not (NODE5 / "node_modules" / "rocketmq-client-nodejs").is_dir(),
        reason="rocketmq-client-nodejs is not installed: run `make node5` (needs npm)",
    ),
]


def node(env: Env, *args: str, name: str) -> Proc:
    return Proc(["node", str(DRIVER), *args], env.servers.tmp / f"{name}.log")


def node_produce(env: Env, topic: str, prefix: str, n: int) -> list[dict[str, Any]]:
    p = node(env, "produce", env.endpoint, topic, prefix, str(n), name=f"node5-produce-{prefix}")
    try:
        evs = events(p, lambda ev, _s: ev["event"] in ("stopped", "error"), 90)
    finally:
        p.stop()
    assert [e.get("ok") for e in evs if e["event"] == "done"] == [n], evs[-1]
    return [e for e in evs if e["event"] == "sent"]


def test_node_producer_to_node_simple_consumer(env: Env) -> None:
    topic, group, n = "G5Node", "GID_g5_node", 100
    create_topic(env, topic)
    create_group(env, group)
    c = node(env, "simple", env.endpoint, topic, group, str(n), name="node5-simple")
    try:
        events(c, lambda ev, _s: ev["event"] == "started", 60)
        wait_online(env, group)
        sent = node_produce(env, topic, "n", n)
        evs = events(c, lambda ev, _s: ev["event"] in ("stopped", "error"), 120)
    finally:
        c.stop()
    got = {m["keys"]: m for m in msgs(evs)}
    assert len(got) == n and len(msgs(evs)) == n
    ids = {s["keys"]: s["id"] for s in sent}
    for i in range(n):
        m = got[f"n-key-{i}"]
        assert m["body"] == f"n-body-{i}" and m["tag"] == ("TagA", "TagB", "TagC")[i % 3]
        assert m["props"] == {"seq": str(i), "origin": "node5"}
        assert m["id"] == ids[m["keys"]] and m["attempt"] == 1 and not m["corrupted"]


def test_node_producer_to_the_python_5x_consumer(env: Env) -> None:
    topic, group, n = "G5NodeToPy", "GID_g5_node_py", 50
    create_topic(env, topic)
    create_group(env, group)
    c = start_consumer(env, "simple", topic, group, "--count", str(n))
    try:
        node_produce(env, topic, "np", n)
        evs = events(c, lambda ev, _s: ev["event"] == "stopped", 120)
    finally:
        c.stop()
    got = {m["keys"]: m for m in msgs(evs)}
    assert set(got) == {f"np-key-{i}" for i in range(n)}
    assert all(m["props"]["origin"] == "node5" for m in got.values())
