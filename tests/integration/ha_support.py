"""Shared pieces of the replication tests: in-process master + slave pairs on port 0, and byte/queue comparisons of
their stores."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from broker.app import BrokerApp
from broker.store.message_store import MessageStore
from namesrv.app import NamesrvApp
from tests.harness import run_broker


@asynccontextmanager
async def run_pair(
    ns: NamesrvApp, tmp_path: Path, *, role: str = "ASYNC_MASTER", **overrides: Any
) -> AsyncIterator[tuple[BrokerApp, BrokerApp]]:
    """A master (``role``) and one slave of ``broker-ha``, the slave learning its master from the name server."""
    common: dict[str, Any] = {"brokerName": "broker-ha", "registerNameServerPeriod": 1000, **overrides}
    async with (
        run_broker(ns, tmp_path, brokerRole=role, storePathRootDir=tmp_path / "master", **common) as master,
        run_broker(
            ns, tmp_path, brokerRole="SLAVE", brokerId=1, storePathRootDir=tmp_path / "slave", **common
        ) as slave,
    ):
        yield master, slave


def log_bytes(store: MessageStore, start: int, end: int) -> bytes:
    """The commit log's bytes in [start, end), across files."""
    out = bytearray()
    off = start
    while off < end:
        chunk = store.read_replication_chunk(off, end - off)
        assert chunk, f"no bytes at {off}"
        out += chunk
        off += len(chunk)
    return bytes(out)


def queue_units(store: MessageStore, topic: str, queue_id: int) -> list[tuple[int, int, int]]:
    units: list[tuple[int, int, int]] = []
    index = 0
    while True:
        sl = store.read_consume_queue(topic, queue_id, index, 10_000)
        assert sl is not None
        if not sl.units:
            return units
        units += [(u.phys_offset, u.size, u.tags_code) for u in sl.units]
        index += len(sl.units)
