"""Header type negotiation: the SDK builds msgpack headers, but a connection sends them as JSON, asking, until its
server offered msgpack in a reply (rocketq servers do); a server that never offers (Apache RocketMQ, here a
JSON-only peer that records what it receives) only ever gets JSON, and a client that never asks never sees the offer. Both the async connection and the sync
producer's direct connection are checked."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from client.direct import DirectConnections
from protocol.codes import ResponseCode, SerializeType
from protocol.command import RemotingCommand
from protocol.frame import FrameDecoder, encode_frame
from protocol.header_codec import MSGPACK_OFFER_FIELD
from protocol.remoting import RemotingClient
from tests.integration.remoting_support import FAST, Served, loop_errors, server

__all__ = ["loop_errors", "server"]  # fixtures


class JsonOnlyPeer:
    """A server that, like Apache RocketMQ, answers JSON and never offers msgpack; it records each request's type."""

    def __init__(self) -> None:
        self.seen: list[int] = []
        self.remarks: list[str | None] = []
        self.srv: asyncio.Server | None = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        decoder = FrameDecoder()
        while data := await reader.read(65536):
            decoder.feed(data)
            while (cmd := decoder.next_frame()) is not None:
                self.seen.append(cmd.serialize_type)
                self.remarks.append(cmd.remark)
                resp = cmd.make_response(ResponseCode.SUCCESS, ext_fields={"ok": "1"})
                resp.serialize_type = SerializeType.JSON
                writer.write(encode_frame(resp))
        writer.close()

    @property
    def addr(self) -> str:
        assert self.srv is not None
        return f"127.0.0.1:{self.srv.sockets[0].getsockname()[1]}"


@pytest.fixture
async def json_peer() -> AsyncIterator[JsonOnlyPeer]:
    peer = JsonOnlyPeer()
    peer.srv = await asyncio.start_server(peer._serve, "127.0.0.1", 0)
    try:
        yield peer
    finally:
        peer.srv.close()


def msgpack_request(n: int) -> RemotingCommand:
    return RemotingCommand.request(FAST, {"n": str(n)}, serialize_type=SerializeType.MSGPACK)


async def test_rocketq_server_offers_once_and_the_connection_upgrades_after_the_first_reply(server: Served) -> None:
    client = RemotingClient()
    try:
        replies = [await client.invoke(server.addr, msgpack_request(n)) for n in range(3)]
    finally:
        await client.close()
    # replies come in the request's type: the first request went as JSON, the next ones as msgpack
    assert [r.serialize_type for r in replies] == [SerializeType.JSON, SerializeType.MSGPACK, SerializeType.MSGPACK]
    assert replies[0].ext_fields == {"n": "0", MSGPACK_OFFER_FIELD: "true"}
    assert replies[1].ext_fields == {"n": "1"}  # offered once per connection


async def test_a_server_that_never_offers_only_gets_json(json_peer: JsonOnlyPeer) -> None:
    client = RemotingClient()
    try:
        for n in range(3):
            await client.invoke(json_peer.addr, msgpack_request(n))
        conn = await client.get_connection(json_peer.addr)
        conn.invoke_oneway(msgpack_request(9))
        await client.invoke(json_peer.addr, msgpack_request(10))
    finally:
        await client.close()
    assert json_peer.seen == [SerializeType.JSON] * 5
    assert json_peer.remarks == [MSGPACK_OFFER_FIELD] * 5  # each asks, none is answered


async def test_direct_connection_negotiates_the_same_way(server: Served, json_peer: JsonOnlyPeer) -> None:
    direct = DirectConnections()

    def three(addr: str) -> list[Any]:
        return [direct.request(addr, msgpack_request(n), 3.0).serialize_type for n in range(3)]

    try:
        ours = await asyncio.to_thread(three, server.addr)
        theirs = await asyncio.to_thread(three, json_peer.addr)
    finally:
        direct.close()
    assert ours == [SerializeType.JSON, SerializeType.MSGPACK, SerializeType.MSGPACK]
    assert theirs == [SerializeType.JSON] * 3
    assert json_peer.seen == [SerializeType.JSON] * 3


async def test_a_json_client_is_never_upgraded(server: Served) -> None:
    client = RemotingClient()
    try:
        cmds = [RemotingCommand.request(FAST, {"n": str(n)}) for n in range(3)]
        replies = [await client.invoke(server.addr, c) for c in cmds]
    finally:
        await client.close()
    assert [r.serialize_type for r in replies] == [SerializeType.JSON] * 3
    assert all(MSGPACK_OFFER_FIELD not in r.ext_fields for r in replies)
