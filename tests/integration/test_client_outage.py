"""A producer across a 5 s broker restart: sends keep going through the outage without an exception reaching the
caller (each send retries within its ``send_timeout_ms``, with a backoff and a fresh connection), and every
acknowledged message is in the restarted broker's store. Also the SDK's one exception root."""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from pathlib import Path

import pytest

import client
from broker.store import GetMessageStatus, MessageStore
from broker.store.request import GetRequest
from client import Message, Producer, SendResult
from protocol.bodies import TopicConfig
from protocol.errors import ProtocolError
from tests.harness import run_broker, run_namesrv
from tests.integration.client_support import until

TOPIC = "TopicOutage"
OUTAGE_S = 5.0


async def _routed(p: Producer) -> bool:
    route = await p.instance.get_route(TOPIC, refresh=True)
    return route is not None and bool(route.publish_queues())


async def test_sends_ride_out_a_5s_broker_restart(tmp_path: Path) -> None:
    results: list[SendResult] = []
    async with (
        run_namesrv(tmp_path / "ns") as ns,
        Producer("PG_outage", namesrv_addr=ns.addr) as probe,
        AsyncExitStack() as first,  # the first broker; closing it is the outage
    ):
        broker = await first.enter_async_context(run_broker(ns, tmp_path / "b"))
        port = int(broker.addr.rsplit(":", 1)[1])
        broker.topics.put(TopicConfig.with_queues(TOPIC, 2))
        await until(lambda: _routed(probe), what="the topic's route")
        budget_ms = int((OUTAGE_S + 10) * 1000)
        async with Producer("PG_outage", namesrv_addr=ns.addr, send_timeout_ms=budget_ms) as p:
            stop = asyncio.Event()

            async def keep_sending() -> None:  # what an application loop without try/except does
                i = 0
                while not stop.is_set():
                    results.append(await p.send(Message(TOPIC, b"m-%d" % i)))
                    i += 1

            sender = asyncio.create_task(keep_sending())
            try:
                await until(lambda: len(results) >= 10, what="sends before the outage")
                await first.aclose()  # the broker stops
                down_at = len(results)
                await asyncio.sleep(OUTAGE_S)  # the outage itself (the scenario, not synchronisation)
                assert not sender.done()
                assert len(results) <= down_at + 1  # nothing is acknowledged while the broker is down
                async with run_broker(ns, tmp_path / "b", listenPort=port) as again:
                    await until(lambda: len(results) >= down_at + 10, timeout=30, what="sends after the restart")
                    stop.set()
                    await sender  # raises whatever reached the caller
                    acked = {b"m-%d" % i for i in range(len(results))}
                    # every acknowledged message survived the restart (polled: dispatch is asynchronous)
                    await until(lambda: acked <= _stored(again.store, 0) | _stored(again.store, 1), what="the store")
            finally:
                stop.set()
                if not sender.done():
                    sender.cancel()
    assert all(r.send_status.name == "SEND_OK" for r in results)


def _stored(store: MessageStore, queue_id: int) -> set[bytes]:
    bodies: set[bytes] = set()
    offset = 0
    while True:
        got = store.get_message_sync(GetRequest("check", TOPIC, queue_id, offset, 32))
        if got.status is not GetMessageStatus.FOUND:
            return bodies
        bodies |= {m.body for m in got.messages()}
        offset = got.next_begin_offset


async def test_a_send_that_outlasts_its_budget_fails_with_the_remoting_error(tmp_path: Path) -> None:
    async with run_namesrv(tmp_path / "ns") as ns:
        async with run_broker(ns, tmp_path / "b") as broker:
            broker.topics.put(TopicConfig.with_queues(TOPIC, 1))
            async with Producer("PG_budget", namesrv_addr=ns.addr) as probe:
                await until(lambda: _routed(probe), what="the topic's route")
        async with Producer("PG_budget", namesrv_addr=ns.addr, send_timeout_ms=300) as p:
            p.instance.routes[TOPIC] = probe.instance.routes[TOPIC]  # the route from before the broker stopped
            with pytest.raises(client.RemotingError) as info:  # the connection error, once the budget is spent
                await p.send(Message(TOPIC, b"x"))
            assert isinstance(info.value, client.RocketqError)


def test_one_exception_root() -> None:
    for cls in (client.MQClientError, client.RemotingError, client.BrokerError, client.RouteNotFoundError,
                client.ConnectionClosedError, client.RequestTimeoutError, ProtocolError):  # fmt: skip
        assert issubclass(cls, client.RocketqError), cls
    assert (Path(client.__file__).parent / "py.typed").is_file()
