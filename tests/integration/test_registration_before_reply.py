"""The registration race (J's order): a topic auto-created by a send, and a group's retry topic created by its
heartbeat, are registered with the name servers before the send or the heartbeat is answered. A name server that
holds its REGISTER_BROKER reply shows it: the first send to a new topic (and the heartbeat of a new group) stays
unanswered until that name server has answered the registration that carries the topic; later sends do not wait."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from protocol.bodies import RegisterBrokerBody
from protocol.codes import RequestCode, ResponseCode
from protocol.frame import FrameDecoder, encode_frame
from protocol.remoting import RemotingClient
from tests.eventually import eventually
from tests.harness import run_broker
from tests.integration.broker_wire import heartbeat_cmd, send


class HoldingNamesrv:
    """Answers every request SUCCESS, except a REGISTER_BROKER naming a topic in ``hold``: that reply waits for
    ``release``. ``registered`` lists the topic sets of the registrations received."""

    def __init__(self, hold: set[str]) -> None:
        self.hold = hold
        self.release = asyncio.Event()
        self.registered: list[set[str]] = []
        self.srv: asyncio.Server | None = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        decoder = FrameDecoder()
        while data := await reader.read(65536):
            decoder.feed(data)
            while (cmd := decoder.next_frame()) is not None:
                if cmd.code == RequestCode.REGISTER_BROKER:
                    topics = set(RegisterBrokerBody.decode(cmd.body).topic_config_table)
                    self.registered.append(topics)
                    if topics & self.hold:
                        await self.release.wait()
                writer.write(encode_frame(cmd.make_response(ResponseCode.SUCCESS)))
        writer.close()

    @property
    def addr(self) -> str:
        assert self.srv is not None
        return f"127.0.0.1:{self.srv.sockets[0].getsockname()[1]}"

    def saw(self, topic: str) -> bool:
        return any(topic in topics for topics in self.registered)


@pytest.fixture
async def namesrv() -> AsyncIterator[HoldingNamesrv]:
    ns = HoldingNamesrv({"Fresh", "%RETRY%NewGroup"})
    ns.srv = await asyncio.start_server(ns._serve, "127.0.0.1", 0)
    try:
        yield ns
    finally:
        ns.release.set()
        ns.srv.close()


async def test_first_send_to_a_new_topic_waits_for_its_registration(tmp_path: Path, namesrv: HoldingNamesrv) -> None:
    async with run_broker(namesrv.addr, tmp_path) as broker:
        client = RemotingClient()
        try:
            first = asyncio.ensure_future(send(client, broker.addr, "Fresh", b"m0"))
            await eventually(lambda: namesrv.saw("Fresh"))
            await asyncio.sleep(0)  # let any reply already written arrive (none may)
            assert not first.done()  # held by the name server's registration reply
            namesrv.release.set()
            assert (await first).code == ResponseCode.SUCCESS
            assert (await send(client, broker.addr, "Fresh", b"m1")).code == ResponseCode.SUCCESS
            assert broker.store is not None and broker.store.get_max_offset_in_queue("Fresh", 0) >= 0
        finally:
            await client.close()


async def test_heartbeat_of_a_new_group_waits_for_its_retry_topic(tmp_path: Path, namesrv: HoldingNamesrv) -> None:
    async with run_broker(namesrv.addr, tmp_path) as broker:
        client = RemotingClient()
        try:
            beat = asyncio.ensure_future(client.invoke(broker.addr, heartbeat_cmd("cid", "NewGroup", "T"), 5.0))
            await eventually(lambda: namesrv.saw("%RETRY%NewGroup"))
            await asyncio.sleep(0)
            assert not beat.done()
            namesrv.release.set()
            assert (await beat).code == ResponseCode.SUCCESS
            # the next heartbeat creates nothing and is answered at once
            again = await client.invoke(broker.addr, heartbeat_cmd("cid", "NewGroup", "T"), 5.0)
            assert again.code == ResponseCode.SUCCESS
        finally:
            await client.close()
