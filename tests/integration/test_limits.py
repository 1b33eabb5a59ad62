"""Limits that keep a hostile peer from hurting others: the connection cap and the global cap on bytes buffered for
incomplete frames (the 100 × 15 MiB attack, scaled down; full size in ``bench/security_bench.py``)."""

from __future__ import annotations

import asyncio
import struct
from pathlib import Path

from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.remoting import RemotingClient
from tests.eventually import eventually
from tests.harness import run_broker, run_namesrv

MiB = 1024 * 1024


async def _closed_by_peer(reader: asyncio.StreamReader) -> bool:
    try:
        return await asyncio.wait_for(reader.read(1), 10) == b""
    except ConnectionError:
        return True


async def test_connection_cap(tmp_path: Path) -> None:
    async with run_namesrv(tmp_path, serverMaxConnections=3) as ns:
        server = ns.server
        assert server is not None
        host, port = ns.addr.rsplit(":", 1)
        held = [await asyncio.open_connection(host, int(port)) for _ in range(3)]
        await eventually(lambda: server.connection_count == 3)
        r, w = await asyncio.open_connection(host, int(port))
        assert await _closed_by_peer(r)
        w.close()
        assert server.stats.refused == 1
        held[0][1].close()
        await eventually(lambda: server.connection_count == 2)
        client = RemotingClient()
        try:
            resp = await client.invoke(ns.addr, RemotingCommand.request(RequestCode.GET_BROKER_CLUSTER_INFO), 5.0)
            assert resp.code == ResponseCode.SUCCESS
        finally:
            await client.close()
            for _r, w in held[1:]:
                w.close()


async def test_partial_frame_budget(tmp_path: Path) -> None:
    cap = 16 * MiB
    async with run_broker(None, tmp_path, serverMaxPendingFrameBytes=cap) as broker:
        server = broker.server
        assert server is not None
        host, port = broker.addr.rsplit(":", 1)
        good = RemotingClient()
        attackers = []
        try:
            chunk = b"\x00" * (256 * 1024)
            for _ in range(12):  # each declares a 16 MiB frame and sends 2 MiB of it: 24 MiB > the cap
                r, w = await asyncio.open_connection(host, int(port))
                w.write(struct.pack(">iI", 16 * MiB - 8, 0))
                for _ in range(8):
                    w.write(chunk)
                    await w.drain()
                attackers.append((r, w))
                assert server.pending_bytes <= cap
                ping = RemotingCommand.request(RequestCode.GET_BROKER_RUNTIME_INFO)
                assert (await good.invoke(broker.addr, ping, 5.0)).code == ResponseCode.SUCCESS
            await eventually(lambda: server.budget.evicted >= 4)
            assert server.pending_bytes <= cap
            # the evicted connections are gone; the others and the good client remain
            await eventually(lambda: server.connection_count == len(attackers) - server.budget.evicted + 1)
        finally:
            await good.close()
            for _r, w in attackers:
                w.close()
