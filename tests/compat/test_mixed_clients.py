"""Mixed clients: our producer → the official C++ push consumer, and the C++ producer → our push consumer, with the
same bodies, keys, tags and properties on both sides."""

from __future__ import annotations

import asyncio

import pytest

from client import Message, Producer
from tests.compat.cpp_support import Consumer, expected, produce, received
from tests.compat.sdk_support import N, consume_ours
from tests.eventually import eventually_sync
from tests.servers import Servers

pytestmark = pytest.mark.compat


async def send_ours(ns: str, topic: str) -> None:
    async with Producer("PID_ours", namesrv_addr=ns) as p:
        for i in range(N):
            want = expected("py", i)
            msg = Message(
                topic,
                want["body"].encode(),
                tags=want["tags"],
                keys=[want["keys"]],
                properties={"seq": str(i), "origin": "cpp"},
            )
            await p.send(msg)


def test_our_producer_to_the_cpp_push_consumer(servers: Servers) -> None:
    asyncio.run(send_ours(servers.ns_addr, "MixedToCpp"))
    c = Consumer(servers, "MixedToCpp", "CID_mixed_cpp", "mixed-cpp")
    try:
        eventually_sync(lambda: len(received([c])) >= N, timeout=90, what=f"{N} messages at the C++ consumer")
    finally:
        c.stop()
    got = {m["keys"]: m for m in c.msgs}
    for i in range(N):
        want = expected("py", i)
        m = got[want["keys"]]
        assert (m["body"], m["tags"], m["props"], m["topic"]) == (
            want["body"],
            want["tags"],
            want["props"],
            "MixedToCpp",
        )


def test_cpp_producer_to_our_push_consumer(servers: Servers) -> None:
    assert produce(servers, "MixedFromCpp", "sync", "c", count=N)["ok"] == N
    got = asyncio.run(consume_ours(servers.ns_addr, "MixedFromCpp"))
    for i in range(N):
        want = expected("c", i)
        m = got[want["keys"]]
        assert m.topic == "MixedFromCpp"
        assert m.body.decode() == want["body"] and m.tags == want["tags"]
        assert {k: m.properties[k] for k in ("seq", "origin")} == want["props"]
        assert m.properties.get("UNIQ_KEY")  # the C++ client's message id survives the broker
