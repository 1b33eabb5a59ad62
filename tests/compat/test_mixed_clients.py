"""Mixed clients: our producer → the official C++ push consumer, and the C++ producer → our push consumer, with the
same bodies, keys, tags and properties on both sides."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from client import ConsumeResult, Message, Producer, PushConsumer
from protocol.message_ext import MessageExt
from tests.compat.test_cpp_client import Consumer, expected, produce, wait_total
from tests.servers import Servers, start_servers

pytestmark = pytest.mark.compat
N = 100


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    with start_servers(tmp_path_factory.mktemp("mixed")) as s:
        yield s


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
        wait_total([c], N, 90)
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


async def consume_ours(ns: str, topic: str, n: int = N, group: str = "CID_mixed_py") -> dict[str, MessageExt]:
    """Our push consumer from the first offset until ``n`` distinct keys are in; the messages by key."""
    got: dict[str, MessageExt] = {}
    done = asyncio.Event()

    async def on_msgs(msgs: list[MessageExt]) -> ConsumeResult:
        for m in msgs:
            got[m.keys[0]] = m
        if len(got) >= n:
            done.set()
        return ConsumeResult.SUCCESS

    consumer = PushConsumer(group, namesrv_addr=ns, consume_from_where="FIRST_OFFSET")
    consumer.subscribe(topic, "*", on_msgs)
    async with consumer:
        await asyncio.wait_for(done.wait(), 60)
    return got


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
