"""The client across a broker restart: pulls and sends fail while it is down, then carry on on their own (re-dial,
immediate re-heartbeat); nothing acknowledged is lost."""

from __future__ import annotations

from pathlib import Path

from client import ConsumeResult, Message, Producer, PushConsumer
from namesrv.app import NamesrvApp
from protocol.bodies import TopicConfig
from protocol.message_ext import MessageExt
from tests.harness import run_broker, run_namesrv
from tests.integration.client_support import until


async def test_consumer_and_producer_survive_a_broker_restart(tmp_path: Path) -> None:
    seen: set[bytes] = set()

    async def listener(msgs: list[MessageExt]) -> ConsumeResult:
        seen.update(m.body for m in msgs)
        return ConsumeResult.SUCCESS

    async with run_namesrv(tmp_path / "ns") as ns:
        c = PushConsumer("CG_restart", namesrv_addr=ns.addr)
        c.subscribe("TopicRestart", "*", listener)
        async with Producer("PG_restart", namesrv_addr=ns.addr) as p:
            try:
                await _scenario(ns, tmp_path, p, c, seen)
            finally:
                await c.close()
    assert seen == {b"before-%d" % i for i in range(50)} | {b"after-%d" % i for i in range(50)}


async def _scenario(ns: NamesrvApp, tmp_path: Path, p: Producer, c: PushConsumer, seen: set[bytes]) -> None:
    async with run_broker(ns, tmp_path / "b") as broker:
        port = int(broker.addr.rsplit(":", 1)[1])
        broker.topics.put(TopicConfig.with_queues("TopicRestart", 2))
        await until(lambda: _routed(p, "TopicRestart"), what="the topic's route")
        await c.start()
        for i in range(50):
            await p.send(Message("TopicRestart", b"before-%d" % i))
        await until(lambda: len(seen) == 50, what="50 messages before the restart")
        await c.persist_offsets()
    # the broker is down: the consumer's pulls fail and are retried
    async with run_broker(ns, tmp_path / "b", listenPort=port) as broker:
        await until(
            lambda: c.instance.client_id in broker.clients.client_ids("CG_restart"),
            timeout=10,
            what="the consumer to heartbeat the restarted broker",
        )
        for i in range(50):
            await p.send(Message("TopicRestart", b"after-%d" % i))
        await until(lambda: len(seen) == 100, timeout=20, what="50 messages after the restart")


async def _routed(p: Producer, topic: str) -> bool:
    route = await p.instance.get_route(topic, refresh=True)
    return route is not None and bool(route.publish_queues())
