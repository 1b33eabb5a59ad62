"""The floor for a Python client and a Python server on this machine: a bare uvloop relay that stores nothing.

Neither side does any work beyond framing, so no Python server can answer a send, or hand a message to a consumer,
faster than this. ``bench/latency_bench.py`` runs it as the system "floor" beside the others: every send awaits the
relay's ack, and workload B's consumer receives what the relay forwards. Server and client are the leanest
``asyncio.Protocol`` code that frames correctly (the shape of the anchors' ``tcp_limits.py echo``).

Frame, both directions:

| offset | size | field                           |
|--------|------|---------------------------------|
| 0      | 4    | u32 big-endian: payload length   |
| 4      | len  | payload                          |

| frame                | from → to         | meaning                                                              |
|----------------------|-------------------|----------------------------------------------------------------------|
| empty payload        | client → relay    | subscribe this connection (the relay acks it like a message)          |
| payload (≥ 1 byte)   | client → relay    | a message: forwarded to every subscriber (kept until the first one), then acked |
| empty payload        | relay → client    | the ack of the client's oldest unacked frame                           |
| payload (≥ 1 byte)   | relay → subscriber | a forwarded message                                                   |

All frames from one read are acked in one write, and a subscriber gets them in one write too.

    python bench/_floor.py PORT    # serve on 127.0.0.1:PORT until terminated
"""

from __future__ import annotations

import asyncio
import collections
import struct
import sys
from collections.abc import Callable
from typing import Any

_LEN = struct.Struct(">I")
_ACK = _LEN.pack(0)


def _frames(buf: bytearray, data: bytes) -> list[bytes]:
    """Append ``data`` to ``buf``; take out and return its whole frames (length prefix included)."""
    buf += data
    out: list[bytes] = []
    pos = 0
    n = len(buf)
    while n - pos >= 4:
        end = pos + 4 + _LEN.unpack_from(buf, pos)[0]
        if end > n:
            break
        out.append(bytes(buf[pos:end]))
        pos = end
    if pos:
        del buf[:pos]
    return out


class Relay:
    """The relay's state: its subscribers, and what arrived before the first one."""

    def __init__(self) -> None:
        self.subscribers: list[RelayConnection] = []
        self.backlog: list[bytes] = []


class RelayConnection(asyncio.Protocol):
    def __init__(self, relay: Relay) -> None:
        self.relay = relay
        self.buf = bytearray()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport: Any = transport

    def connection_lost(self, exc: Exception | None) -> None:
        if self in self.relay.subscribers:
            self.relay.subscribers.remove(self)

    def data_received(self, data: bytes) -> None:
        frames = _frames(self.buf, data)
        if not frames:
            return
        relay = self.relay
        msgs = [f for f in frames if len(f) > 4]
        if len(msgs) < len(frames):  # a subscribe among them
            relay.subscribers.append(self)
            if relay.backlog:
                msgs = relay.backlog + msgs
                relay.backlog = []
        if msgs:
            if relay.subscribers:
                out = b"".join(msgs)
                for sub in relay.subscribers:
                    sub.transport.write(out)
            else:
                relay.backlog += msgs
        self.transport.write(_ACK * len(frames))


class FloorClient(asyncio.Protocol):
    """Acks answer this connection's frames in order; forwarded messages go to ``on_bodies`` once subscribed."""

    def __init__(self) -> None:
        self.waiting: collections.deque[asyncio.Future[None]] = collections.deque()
        self.buf = bytearray()
        self.on_bodies: Callable[[list[bytes]], None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport: Any = transport

    def data_received(self, data: bytes) -> None:
        bodies = []
        for f in _frames(self.buf, data):
            if len(f) == 4:
                self.waiting.popleft().set_result(None)
            else:
                bodies.append(f[4:])
        if bodies and self.on_bodies is not None:
            self.on_bodies(bodies)

    def connection_lost(self, exc: Exception | None) -> None:
        while self.waiting:
            fut = self.waiting.popleft()
            if not fut.done():
                fut.set_exception(ConnectionError("the relay closed the connection"))

    def request(self, payload: bytes) -> asyncio.Future[None]:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting.append(fut)
        self.transport.write(_LEN.pack(len(payload)) + payload)
        return fut

    def request_many(self, payloads: list[bytes]) -> list[asyncio.Future[None]]:
        loop = asyncio.get_running_loop()
        futs = [loop.create_future() for _ in payloads]
        self.waiting.extend(futs)
        self.transport.write(b"".join(_LEN.pack(len(p)) + p for p in payloads))
        return futs


async def serve(port: int) -> None:
    relay = Relay()
    server = await asyncio.get_running_loop().create_server(lambda: RelayConnection(relay), "127.0.0.1", port)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    import uvloop

    uvloop.run(serve(int(sys.argv[1])))
