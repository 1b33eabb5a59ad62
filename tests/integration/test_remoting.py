"""The asyncio remoting shell on real sockets (127.0.0.1, port 0): dispatch, unknown codes, reply serialize types
checked as raw bytes, oneway, held requests, handler errors, bad frames, client timeouts, connection loss,
reconnect, one shared dial, back-pressure, graceful stop and broker → client calls.

No sleeps as synchronisation: the tests wait on events, futures and replies. Every test also fails if the event
loop reported an error (a task exception nobody retrieved, a protocol callback that raised).
"""

from __future__ import annotations

import asyncio
import json
import struct
from typing import Any

import msgpack
import pytest

from protocol.codes import RPC_ONEWAY, RPC_TYPE_RESPONSE, ResponseCode, SerializeType
from protocol.command import RemotingCommand
from protocol.errors import ConnectionClosedError, RequestTimeoutError
from protocol.frame import MAX_FRAME, FrameDecoder, encode_frame
from protocol.header_codec import BIN_FIXED
from protocol.remoting import HandlerRegistry, RemotingClient, RemotingConnectError, RequestContext
from tests.integration.remoting_support import (
    AFTER_AWAIT,
    BACK,
    BOOM,
    CALLBACK_CODE,
    FAST,
    HOLD,
    MISSING,
    REFUSE,
    UNKNOWN,
    WHERE,
    Handlers,
    RawPeer,
    Served,
    frame_parts,
    loop_errors,
    server,
    start,
)

__all__ = ["loop_errors", "server"]  # fixtures


def req(code: int, opaque: int, st: SerializeType = SerializeType.JSON, flag: int = 0, **kw: Any) -> bytes:
    cmd = RemotingCommand(code=code, opaque=opaque, serialize_type=st, **kw)
    cmd.flag = flag
    return encode_frame(cmd)


def raw_json_frame(header: bytes, body: bytes = b"") -> bytes:
    return struct.pack(">iI", 4 + len(header) + len(body), len(header)) + header + body


# -- dispatch ---------------------------------------------------------------------------------------------------------


async def test_dispatch_by_code_and_unknown_code_answers_not_supported(server: Served) -> None:
    peer = await RawPeer.open(server.port)
    await peer.send(req(UNKNOWN, 41))
    resp = await peer.read()
    assert resp.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED == 3
    assert resp.opaque == 41 and resp.flag & RPC_TYPE_RESPONSE
    assert resp.remark == f" request type {UNKNOWN} not supported"
    # the same connection goes on working, and each code reaches its own handler
    await peer.send(req(FAST, 42, ext_fields={"n": "1"}), req(REFUSE, 43))
    fast, refuse = await peer.read(), await peer.read()
    assert (fast.opaque, fast.code, fast.ext_fields) == (42, ResponseCode.SUCCESS, {"n": "1"})
    assert (refuse.opaque, refuse.code) == (43, ResponseCode.NO_PERMISSION)
    assert len(server.accepted) == 1
    peer.close()


async def test_json_request_gets_a_json_reply_with_top_byte_0_and_string_ext_values(server: Served) -> None:
    # what the C++ client sends: numbers and booleans as ext values, keys sorted, remark ""
    header = b'{"code":2,"extFields":{"queueId":3,"k":false,"s":"x"},"flag":0,"language":"CPP","opaque":7,"remark":""}'
    peer = await RawPeer.open(server.port)
    await peer.send(raw_json_frame(header, b"body"))
    wire = await peer.read_wire()
    assert wire[4] == 0  # the whole second word is the header length for C++ and ali-ons
    st, hdr, body = frame_parts(wire)
    obj = json.loads(hdr)
    assert st == 0 and body == b"body"
    assert obj["opaque"] == 7 and obj["flag"] == RPC_TYPE_RESPONSE and obj["code"] == 0
    assert obj["extFields"] == {"queueId": "3", "k": "false", "s": "x"}
    assert all(isinstance(v, str) for v in obj["extFields"].values())
    peer.close()


async def test_rocketmq_request_gets_a_rocketmq_reply(server: Served) -> None:
    peer = await RawPeer.open(server.port)
    await peer.send(req(FAST, 8, SerializeType.ROCKETMQ, ext_fields={"a": "b"}, body=b"xyz"))
    st, hdr, body = frame_parts(await peer.read_wire())
    assert st == SerializeType.ROCKETMQ and body == b"xyz"
    code, _lang, _version, opaque, flag = BIN_FIXED.unpack_from(hdr)
    assert (code, opaque, flag) == (0, 8, RPC_TYPE_RESPONSE)
    pos = BIN_FIXED.size
    (rlen,) = struct.unpack_from(">i", hdr, pos)
    pos += 4 + rlen
    (elen,) = struct.unpack_from(">i", hdr, pos)
    assert hdr[pos + 4 : pos + 4 + elen] == struct.pack(">h", 1) + b"a" + struct.pack(">i", 1) + b"b"
    peer.close()


async def test_msgpack_request_gets_a_msgpack_reply(server: Served) -> None:
    peer = await RawPeer.open(server.port)
    await peer.send(req(FAST, 9, SerializeType.MSGPACK, ext_fields={"a": "b"}))
    st, hdr, _ = frame_parts(await peer.read_wire())
    obj = msgpack.unpackb(hdr, raw=False)
    assert st == SerializeType.MSGPACK
    assert obj["opaque"] == 9 and obj["flag"] == RPC_TYPE_RESPONSE and obj["extFields"] == {"a": "b"}
    peer.close()


async def test_oneway_requests_are_never_answered(server: Served) -> None:
    peer = await RawPeer.open(server.port)
    oneway = [req(FAST, 1, flag=RPC_ONEWAY), req(UNKNOWN, 2, flag=RPC_ONEWAY), req(BOOM, 3, flag=RPC_ONEWAY)]
    await peer.send(*oneway, req(FAST, 4))
    assert (await peer.read()).opaque == 4
    await peer.send(req(FAST, 5))  # anything written for 1-3 would have come before this reply
    assert (await peer.read()).opaque == 5
    assert server.h.seen == [1, 3, 4, 5]  # the oneway requests were handled, just not answered
    peer.close()


async def test_a_held_request_does_not_delay_the_next_on_the_same_connection(server: Served) -> None:
    peer = await RawPeer.open(server.port)
    await peer.send(req(HOLD, 1), req(FAST, 2))  # one write, one connection
    assert (await peer.read()).opaque == 2  # answered while 1 is held
    await server.h.held.wait()
    assert server.h.holding == 1
    server.h.release.set()
    held = await peer.read()
    assert held.opaque == 1 and held.body == b"held"
    peer.close()


async def test_the_client_gets_a_fast_reply_while_its_held_request_waits(server: Served) -> None:
    client = RemotingClient()
    held = asyncio.create_task(client.invoke(server.addr, RemotingCommand.request(HOLD), 10))
    await server.h.held.wait()
    fast = await client.invoke(server.addr, RemotingCommand.request(FAST, {"n": "x"}), 3)
    assert fast.ext_fields["n"] == "x" and not held.done()
    assert len(server.accepted) == 1  # one connection carried both
    server.h.release.set()
    assert (await held).body == b"held"
    await client.close()


async def test_handler_exceptions_become_replies_and_the_connection_stays_open(server: Served) -> None:
    client = RemotingClient()
    resp = await client.invoke(server.addr, RemotingCommand.request(BOOM), 3)
    assert resp.code == ResponseCode.SYSTEM_ERROR and "kaboom" in (resp.remark or "")
    resp = await client.invoke(server.addr, RemotingCommand.request(REFUSE), 3)
    assert resp.code == ResponseCode.NO_PERMISSION and resp.remark == "not you"
    resp = await client.invoke(server.addr, RemotingCommand.request(MISSING), 3)
    assert resp.code == ResponseCode.SYSTEM_ERROR and resp.remark == "the custom field <topic> is null"
    assert (await client.invoke(server.addr, RemotingCommand.request(FAST), 3)).code == ResponseCode.SUCCESS
    assert len(server.accepted) == 1 and not server.accepted[0].is_closed
    await client.close()


async def test_a_reply_that_cannot_be_encoded_becomes_system_error(server: Served) -> None:
    # "\ud800" decodes to a lone surrogate, which the echoed reply cannot carry in UTF-8
    peer = await RawPeer.open(server.port)
    await peer.send(raw_json_frame(b'{"code":2,"opaque":5,"extFields":{"n":"\\ud800"}}'))
    resp = await peer.read()
    assert resp.opaque == 5 and resp.code == ResponseCode.SYSTEM_ERROR
    assert "does not encode" in (resp.remark or "")
    await peer.send(req(FAST, 6))
    assert (await peer.read()).opaque == 6
    peer.close()


async def test_a_handler_that_suspends_runs_in_a_task(server: Served) -> None:
    client = RemotingClient()
    resp = await client.invoke(server.addr, RemotingCommand.request(AFTER_AWAIT), 3)
    assert resp.code == ResponseCode.SUCCESS and resp.remark == "Task"
    await client.close()


async def test_a_handler_that_never_suspends_runs_inline_without_a_task(server: Served, client: RemotingClient) -> None:
    resp = await client.invoke(server.addr, RemotingCommand.request(WHERE), 3)
    assert resp.code == ResponseCode.SUCCESS and resp.remark == "inline 0"
    # while another request of the connection is held in a Task, a non-suspending one still runs inline
    held = asyncio.ensure_future(client.invoke(server.addr, RemotingCommand.request(HOLD), 10))
    await server.h.held.wait()
    resp = await client.invoke(server.addr, RemotingCommand.request(WHERE), 3)
    assert resp.remark == "inline 1"
    assert server.accepted[0].in_flight == 1
    server.h.release.set()
    assert (await held).body == b"held"
    assert server.accepted[0].in_flight == 0


async def test_a_handler_cancelled_after_it_suspended_sees_the_cancel(server: Served, client: RemotingClient) -> None:
    held = asyncio.ensure_future(client.invoke(server.addr, RemotingCommand.request(HOLD), 10))
    await server.h.held.wait()
    assert server.h.holding == 1
    server.accepted[0].cancel_in_flight()
    await server.accepted[0].wait_idle()
    assert server.h.holding == 0  # its finally ran: the CancelledError reached the handler's await
    assert server.accepted[0].in_flight == 0
    held.cancel()


# -- hostile input ----------------------------------------------------------------------------------------------------

BAD_FRAMES = {
    "length bomb 16 MiB + 1": struct.pack(">iI", MAX_FRAME + 1, 10),
    "length bomb 2 GiB": struct.pack(">iI", 2**31 - 1, 10),
    "negative length": struct.pack(">iI", -1, 0),
    "header length > frame": struct.pack(">iI", 10, 100) + b"x" * 6,
    "unknown serialize type 7": struct.pack(">iI", 6, (7 << 24) | 2) + b"{}",
    "garbage JSON": raw_json_frame(b"{bad}"),
    "JSON nested 100k deep": raw_json_frame(b"[" * 100_000),
    "JSON not UTF-8": raw_json_frame(b'{"code":"\xff"}'),
    "JSON code missing": raw_json_frame(b'{"opaque":1}'),
    "ROCKETMQ remark length past the end": struct.pack(">iI", 4 + 17, (1 << 24) | 17)
    + BIN_FIXED.pack(2, 0, 0, 1, 0)
    + struct.pack(">i", 999),
    "msgpack garbage": struct.pack(">iI", 6, (2 << 24) | 2) + b"\xc1\xc1",
}


@pytest.mark.parametrize("garbage", list(BAD_FRAMES.values()), ids=list(BAD_FRAMES))
async def test_a_bad_frame_closes_only_that_connection(server: Served, garbage: bytes) -> None:
    client = RemotingClient()
    good = await client.get_connection(server.addr)  # connected before the bad peer shows up
    bad = await RawPeer.open(server.port)
    await bad.send(garbage)
    assert await bad.read_until_eof() == b""  # the server closed it without answering
    bad.close()
    resp = await client.invoke(server.addr, RemotingCommand.request(FAST, {"n": "after"}), 3)
    assert resp.ext_fields == {"n": "after"}
    assert await client.get_connection(server.addr) is good and not good.is_closed
    other = RemotingClient()  # and new connections are still accepted
    assert (await other.invoke(server.addr, RemotingCommand.request(FAST), 3)).code == ResponseCode.SUCCESS
    await other.close()
    await client.close()


async def test_a_bad_frame_ends_the_connection_and_nothing_after_it_is_handled(server: Served) -> None:
    peer = await RawPeer.open(server.port)
    await peer.send(req(FAST, 1), req(FAST, 2), raw_json_frame(b"{bad}"), req(FAST, 3))
    try:
        rest = await peer.read_until_eof()
    except ConnectionResetError:  # an abort may reach us as a reset
        rest = b""
    dec = FrameDecoder()
    dec.feed(rest)
    assert {c.opaque for c in dec.frames()} <= {1, 2}  # replies to the frames before it may still arrive
    assert server.h.seen == [1, 2]
    peer.close()


# -- deadlines -----------------------------------------------------------------------------------------------------


async def test_idle_connections_are_closed_but_not_one_with_a_request_in_flight(
    loop_errors: list[dict[str, Any]],
) -> None:
    served = await start(Handlers(), idle_timeout_s=0.2, frame_deadline_s=0)
    try:
        busy = await RawPeer.open(served.port)
        await busy.send(req(HOLD, 1))
        await served.h.held.wait()
        idle = await RawPeer.open(served.port)
        await idle.send(req(FAST, 2))
        assert (await idle.read()).opaque == 2
        assert await idle.read_until_eof() == b""  # nothing more from it: the server closed it
        busy_conn = next(c for c in served.accepted if c.in_flight)
        assert not busy_conn.is_closed  # idle for as long, but a request of its peer is held
        served.h.release.set()
        assert (await busy.read()).body == b"held"
        assert await busy.read_until_eof() == b""  # and once answered it is idle too
        assert {c.close_reason for c in served.accepted} == {"idle for 0.2s"}
        idle.close()
        busy.close()
    finally:
        await served.srv.stop(grace=1.0)


async def test_a_frame_left_incomplete_past_the_deadline_closes_only_that_connection(
    loop_errors: list[dict[str, Any]],
) -> None:
    served = await start(Handlers(), idle_timeout_s=0, frame_deadline_s=0.2)
    try:
        client = RemotingClient()
        good = await client.get_connection(served.addr)
        slow = await RawPeer.open(served.port)
        whole = req(FAST, 1)
        await slow.send(whole[:7])  # length and part of the header, then nothing
        try:
            assert await slow.read_until_eof() == b""
        except ConnectionResetError:  # an abort may reach us as a reset
            pass
        assert any(c.close_reason == "frame not completed within 0.2s" for c in served.accepted)
        resp = await client.invoke(served.addr, RemotingCommand.request(FAST, {"n": "ok"}), 3)
        assert resp.ext_fields == {"n": "ok"} and not good.is_closed  # idle timeout off: it stays
        slow.close()
        await client.close()
    finally:
        await served.srv.stop(grace=1.0)


# -- the client -------------------------------------------------------------------------------------------------------


async def test_a_timeout_raises_request_timeout_and_the_late_reply_is_dropped(server: Served) -> None:
    client = RemotingClient()
    with pytest.raises(RequestTimeoutError):
        await client.invoke(server.addr, RemotingCommand.request(HOLD), 0.05)
    server.h.release.set()  # the reply for the timed-out request now arrives and matches nothing
    for n in range(3):
        resp = await client.invoke(server.addr, RemotingCommand.request(FAST, {"n": str(n)}), 3)
        assert resp.ext_fields == {"n": str(n)}
    assert len(server.accepted) == 1
    await client.close()


async def test_a_short_timeout_expires_on_time_behind_a_long_one_that_still_gets_its_reply(server: Served) -> None:
    # one sweep timer per connection: armed for the 30 s request, it must move earlier for the 0.05 s one, and the
    # sweep that fails the short one must leave the long one pending
    client = RemotingClient()
    long = asyncio.ensure_future(client.invoke(server.addr, RemotingCommand.request(HOLD), 30))
    await server.h.held.wait()  # the long request is pending: the sweep is armed for it
    async with asyncio.timeout(5):  # fails the test instead of waiting for the 30 s sweep
        with pytest.raises(RequestTimeoutError):
            await client.invoke(server.addr, RemotingCommand.request(HOLD), 0.05)
    assert not long.done()
    server.h.release.set()
    async with asyncio.timeout(5):
        resp = await long
    assert resp.code == ResponseCode.SUCCESS
    await client.close()


async def test_a_dropped_connection_fails_every_pending_request(server: Served) -> None:
    server.h.hold_target = 5
    client = RemotingClient()
    pending = [asyncio.create_task(client.invoke(server.addr, RemotingCommand.request(HOLD), 10)) for _ in range(5)]
    await server.h.held.wait()
    [conn] = server.accepted
    conn.abort("test drops the connection")  # from the server side
    for task in pending:
        with pytest.raises(ConnectionClosedError):
            await task
    # the next request dials again
    assert (await client.invoke(server.addr, RemotingCommand.request(FAST), 3)).code == ResponseCode.SUCCESS
    assert len(server.accepted) == 2
    await client.close()


async def test_the_client_reconnects_after_the_server_restarts_on_the_same_port(
    loop_errors: list[dict[str, Any]],
) -> None:
    first = await start(Handlers())
    port = first.port
    client = RemotingClient()
    addr = f"127.0.0.1:{port}"
    assert (await client.invoke(addr, RemotingCommand.request(FAST), 3)).code == ResponseCode.SUCCESS
    conn = await client.get_connection(addr)
    await first.srv.stop(grace=1.0)
    await conn.closed_event.wait()
    with pytest.raises(RemotingConnectError):  # nobody listens now
        await client.invoke(addr, RemotingCommand.request(FAST), 3)
    second = await start(Handlers(), port=port)
    try:
        assert (await client.invoke(addr, RemotingCommand.request(FAST), 3)).code == ResponseCode.SUCCESS
        assert len(second.accepted) == 1
    finally:
        await client.close()
        await second.srv.stop(grace=1.0)


async def test_concurrent_first_requests_share_one_connection(server: Served) -> None:
    client = RemotingClient()
    replies = await asyncio.gather(
        *(client.invoke(server.addr, RemotingCommand.request(FAST, {"n": str(i)}), 3) for i in range(20))
    )
    assert [r.ext_fields["n"] for r in replies] == [str(i) for i in range(20)]
    assert len(server.accepted) == 1 and client.addresses == [server.addr]
    await client.close()


async def test_close_sends_what_was_written_before_it(server: Served) -> None:
    client = RemotingClient()
    conn = await client.get_connection(server.addr)
    conn.invoke_oneway(RemotingCommand.request(FAST, {"n": "last words"}))
    conn.close("done")  # in the same loop pass as the write
    await conn.closed_event.wait()
    [srv_conn] = server.accepted
    await srv_conn.closed_event.wait()  # the server read up to our FIN, so it handled what came before it
    assert len(server.h.seen) == 1
    await client.close()


async def test_the_server_calls_the_client_back_over_its_connection(server: Served) -> None:
    reg = HandlerRegistry()

    async def pong(ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        return cmd.make_response(body=b"pong:" + cmd.ext_fields["q"].encode())

    reg.register(CALLBACK_CODE, pong)
    client = RemotingClient(reg)
    resp = await client.invoke(server.addr, RemotingCommand.request(BACK), 3)
    assert resp.body == b"pong:ping" and resp.ext_fields == {"answerCode": "0"}
    await client.close()


async def test_a_client_without_that_code_answers_not_supported(server: Served) -> None:
    client = RemotingClient()  # no registry: the server's call back gets REQUEST_CODE_NOT_SUPPORTED
    resp = await client.invoke(server.addr, RemotingCommand.request(BACK), 3)
    assert resp.ext_fields == {"answerCode": str(int(ResponseCode.REQUEST_CODE_NOT_SUPPORTED))}
    await client.close()


# -- back-pressure and shutdown ---------------------------------------------------------------------------------------


async def test_back_pressure_pauses_reading_at_the_in_flight_limit_and_resumes(
    loop_errors: list[dict[str, Any]],
) -> None:
    bound = 4
    served = await start(Handlers(hold_target=bound), max_in_flight=bound)
    peer = await RawPeer.open(served.port)
    try:
        # 40 held requests and then a fast one, all in one write
        await peer.send(*(req(HOLD, i) for i in range(1, 41)), req(FAST, 41))
        await served.h.held.wait()
        [conn] = served.accepted
        assert conn.reading_paused and conn.in_flight == bound
        assert served.h.seen == []  # the fast request waits behind the limit, unread or undispatched
        served.h.release.set()
        opaques = {(await peer.read()).opaque for _ in range(41)}
        assert opaques == set(range(1, 42))
        assert served.h.max_holding == bound  # never more in flight than the bound
        assert not conn.reading_paused
        await peer.send(req(FAST, 42))
        assert (await peer.read()).opaque == 42
    finally:
        peer.close()
        await served.srv.stop(grace=1.0)


async def test_stop_waits_for_in_flight_requests_then_closes_connections(server: Served) -> None:
    client = RemotingClient()
    held = asyncio.create_task(client.invoke(server.addr, RemotingCommand.request(HOLD), 10))
    await server.h.held.wait()
    conn = await client.get_connection(server.addr)
    stopping = asyncio.create_task(server.srv.stop(grace=10))
    # a round trip on the open connection: by its end ``stop`` has run up to its wait
    assert (await client.invoke(server.addr, RemotingCommand.request(FAST), 3)).code == ResponseCode.SUCCESS
    with pytest.raises(RemotingConnectError):  # no longer accepting
        await RemotingClient().invoke(server.addr, RemotingCommand.request(FAST), 3)
    assert not stopping.done() and not conn.is_closed
    server.h.release.set()
    assert (await held).body == b"held"  # the in-flight request finished and its reply went out
    await stopping
    await conn.closed_event.wait()
    await client.close()


async def test_stop_fails_pending_requests_after_the_grace_period(server: Served) -> None:
    client = RemotingClient()
    pending = asyncio.create_task(client.invoke(server.addr, RemotingCommand.request(HOLD), 10))
    await server.h.held.wait()
    await server.srv.stop(grace=0.05)
    with pytest.raises(ConnectionClosedError):
        await pending
    assert server.h.holding == 0  # the held handler was cancelled
    await client.close()
