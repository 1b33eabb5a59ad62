"""A request no handler answers gets REQUEST_CODE_NOT_SUPPORTED and one WARN line naming the code and the peer,
rate-limited per code and peer host; on the bare remoting server, the broker and the name server."""

from __future__ import annotations

from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

from structlog.testing import capture_logs

from protocol.codes import ResponseCode
from protocol.command import RemotingCommand
from protocol.remoting import RemotingClient
from tests.harness import run_broker, run_namesrv
from tests.integration.remoting_support import UNKNOWN, Served, loop_errors, server

__all__ = ["loop_errors", "server"]  # fixtures


def warnings_for(logs: list[MutableMapping[str, Any]]) -> list[tuple[int, str]]:
    return [
        (e["code"], e["peer"])
        for e in logs
        if e["event"] == "request code not supported" and e["log_level"] == "warning"
    ]


async def ask(client: RemotingClient, addr: str, code: int) -> int:
    resp = await client.invoke(addr, RemotingCommand.request(code))
    return resp.code


async def test_unsupported_code_warns_once_per_code_and_peer(server: Served) -> None:
    client = RemotingClient()
    try:
        with capture_logs() as logs:
            codes = [await ask(client, server.addr, UNKNOWN) for _ in range(5)]
            codes.append(await ask(client, server.addr, UNKNOWN + 1))
    finally:
        await client.close()
    assert codes == [ResponseCode.REQUEST_CODE_NOT_SUPPORTED] * 6
    lines = warnings_for(logs)
    assert [code for code, _ in lines] == [UNKNOWN, UNKNOWN + 1]
    assert all(peer.startswith("127.0.0.1:") for _, peer in lines)


async def test_broker_and_namesrv_warn_on_unsupported_codes(tmp_path: Path) -> None:
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path) as broker:
        client = RemotingClient()
        try:
            with capture_logs() as logs:
                assert await ask(client, ns.addr, 9001) == ResponseCode.REQUEST_CODE_NOT_SUPPORTED
                assert await ask(client, broker.addr, 9002) == ResponseCode.REQUEST_CODE_NOT_SUPPORTED
        finally:
            await client.close()
    assert [code for code, _ in warnings_for(logs)] == [9001, 9002]
