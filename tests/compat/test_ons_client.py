"""The Node.js RocketMQ client ali-ons 3.12.0 (npm; its frames are in ``reference/golden/``) against our name server
and broker as separate processes: its producer and push consumer (tag filter, a retry through ``%RETRY%``), and
mixed with our SDK in both directions.

``make test`` installs ali-ons with ``npm ci`` into ``tests/compat/ons/node_modules`` when npm is on PATH; without
it these tests skip with that reason. ``tests/compat/ons/driver.js`` reports JSON lines like ``cpp_driver.py``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from client import Message, Producer
from tests.compat.cpp_support import FAST_LEVELS
from tests.compat.ons_support import NEEDS_ONS, create_topic, run_node
from tests.compat.sdk_support import consume_ours
from tests.servers import Servers

pytestmark = [pytest.mark.compat, *NEEDS_ONS]

BROKER_CONF = FAST_LEVELS  # the servers fixture's broker


def lines(servers: Servers, *args: str, name: str, deadline: float) -> list[dict[str, Any]]:
    """The driver's events up to its "done"; fails on a "fatal" one."""
    evs = run_node(servers, *args, name=name, until=("done", "fatal"), deadline=deadline)
    assert evs[-1]["event"] == "done", evs[-1]
    return evs


def produce_ons(servers: Servers, topic: str, prefix: str, count: int) -> list[dict[str, Any]]:
    evs = lines(
        servers, "produce", servers.ns_addr, topic, prefix, str(count), name=f"ons-produce-{prefix}", deadline=90
    )
    assert evs[-1] == {"event": "done", "ok": count}
    return [e for e in evs if e["event"] == "sent"]


def consume_ons(
    servers: Servers, topic: str, group: str, expr: str, want: int, fail_key: str = ""
) -> list[dict[str, Any]]:
    args = ["consume", servers.ns_addr, topic, group, expr, str(want)] + ([fail_key] if fail_key else [])
    return lines(servers, *args, name=f"ons-consume-{group}", deadline=120)


def test_ons_producer_to_ons_consumer_with_a_tag_filter_and_a_retry(servers: Servers) -> None:
    create_topic(servers, "OnsAll")
    sent = produce_ons(servers, "OnsAll", "o", 30)
    assert all(s["status"] == "SEND_OK" for s in sent) and {int(s["queueId"]) for s in sent} == {0, 1, 2, 3}
    evs = consume_ons(servers, "OnsAll", "CID_ons_all", "TagA || TagC", 20, fail_key="o-key-0")
    msgs = [e for e in evs if e["event"] == "msg"]
    want = {f"o-key-{i}" for i in range(30) if i % 3 != 1}
    assert {m["keys"] for m in msgs} == want
    assert {m["tags"] for m in msgs} == {"TagA", "TagC"}
    for m in msgs:
        i = int(m["keys"].rsplit("-", 1)[1])
        assert (m["topic"], m["body"], m["props"]) == ("OnsAll", f"o-body-{i}", {"seq": str(i), "origin": "ons"})
    failed = [e for e in evs if e["event"] == "failed"]
    assert [f["keys"] for f in failed] == ["o-key-0"]
    again = [m for m in msgs if m["keys"] == "o-key-0"]
    assert [m["reconsumeTimes"] for m in again] == [1]  # back through %RETRY%CID_ons_all, topic restored


def test_ons_producer_to_our_push_consumer(servers: Servers) -> None:
    create_topic(servers, "OnsToPy")
    produce_ons(servers, "OnsToPy", "n", 20)
    got = asyncio.run(consume_ours(servers.ns_addr, "OnsToPy", 20, "CID_ons_py"))
    for i in range(20):
        m = got[f"n-key-{i}"]
        assert (m.topic, m.body, m.tags) == ("OnsToPy", f"n-body-{i}".encode(), ("TagA", "TagB", "TagC")[i % 3])
        assert {k: m.properties[k] for k in ("seq", "origin")} == {"seq": str(i), "origin": "ons"}


async def send_ours(ns: str, topic: str, n: int) -> None:
    async with Producer("PID_py_to_ons", namesrv_addr=ns) as p:
        for i in range(n):
            msg = Message(topic, f"p-body-{i}".encode(), tags="TagA", keys=[f"p-key-{i}"])
            msg.properties.update({"seq": str(i), "origin": "ons"})
            await p.send(msg)


def test_our_producer_to_the_ons_consumer(servers: Servers) -> None:
    create_topic(servers, "PyToOns")
    asyncio.run(send_ours(servers.ns_addr, "PyToOns", 20))
    evs = consume_ons(servers, "PyToOns", "CID_py_ons", "*", 20)
    msgs = {m["keys"]: m for m in evs if m["event"] == "msg"}
    assert set(msgs) == {f"p-key-{i}" for i in range(20)}
    for i in range(20):
        m = msgs[f"p-key-{i}"]
        assert (m["body"], m["tags"], m["props"]) == (f"p-body-{i}", "TagA", {"seq": str(i), "origin": "ons"})
