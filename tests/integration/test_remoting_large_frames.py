"""Large frames over real sockets, plain and TLS, on asyncio's loop and on uvloop: the connection receives straight
into its decoder's buffer (``asyncio.BufferedProtocol``), which both loops' TCP and SSL transports support. Bodies
from empty to several MiB go both ways (a batch send's request, a pull reply's reply), several in flight at once,
interleaved with small requests; a body of ``SPLIT_BODY`` bytes or more leaves as its own part of the write."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from pathlib import Path

import pytest
import uvloop

from protocol.codes import ResponseCode
from protocol.command import RemotingCommand
from protocol.frame import SPLIT_BODY
from protocol.remoting import HandlerRegistry, RemotingClient, RequestContext
from protocol.remoting.server import RemotingServer
from protocol.remoting.tls import client_context, server_context
from tests.integration.tls_support import make_pki

ECHO = 901
SIZES = [0, 1, 300, SPLIT_BODY - 1, SPLIT_BODY, 64 * 1024 - 100, 64 * 1024 + 1, 1 << 20, 5 << 20]


async def _echo(ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
    return cmd.make_response(ResponseCode.SUCCESS, None, {"n": str(len(cmd.body))}, body=cmd.body[::-1])


async def _exchange(tls: dict[str, str] | None) -> None:
    registry = HandlerRegistry()
    registry.register(ECHO, _echo)
    server = RemotingServer(
        registry,
        "127.0.0.1",
        0,
        tls_mode="enforcing" if tls else "disabled",
        ssl_context=server_context(tls["cert"], tls["key"]) if tls else None,
    )
    await server.start()
    client = RemotingClient(ssl_context=client_context(trust_cert_path=tls["ca"]) if tls else None)
    addr = f"127.0.0.1:{server.port}"
    try:
        rng = random.Random(5)
        bodies = [rng.randbytes(n) for n in SIZES]

        async def one(body: bytes) -> None:
            resp = await client.invoke(addr, RemotingCommand.request(ECHO, {}, body), 30.0)
            assert resp.code == ResponseCode.SUCCESS and resp.ext_fields["n"] == str(len(body))
            assert resp.body == body[::-1] and type(resp.body) is bytes

        for body in bodies:  # one at a time
            await one(body)
        await asyncio.gather(*(one(b) for b in bodies + bodies[::-1]))  # many in flight, in both directions
    finally:
        await client.close()
        await server.stop()


LOOPS: dict[str, Callable[[], asyncio.AbstractEventLoop]] = {
    "asyncio": asyncio.new_event_loop,
    "uvloop": uvloop.new_event_loop,
}


@pytest.mark.parametrize("loop", sorted(LOOPS))
@pytest.mark.parametrize("tls", [False, True], ids=["plain", "tls"])
def test_large_and_small_frames_round_trip(loop: str, tls: bool, tmp_path: Path) -> None:
    pki = make_pki(tmp_path) if tls else None
    with asyncio.Runner(loop_factory=LOOPS[loop]) as runner:
        runner.run(_exchange(pki))
