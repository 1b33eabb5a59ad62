"""Shared pieces of the replication tests: in-process master + slave pairs on port 0, and byte/queue comparisons of
their stores."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from broker.app import BrokerApp
from broker.store.message_store import MessageStore
from client.admin.admin_client import AdminClient
from namesrv.app import NamesrvApp
from protocol.codes import RequestCode, ResponseCode
from protocol.headers import PullMessageRequestHeader
from protocol.record_decode import decode_records
from tests.eventually import eventually
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


# -- brokers as real processes (SIGKILL, SIGSTOP) ---------------------------------------------------------------------

REPO = Path(__file__).resolve().parents[2]


@dataclass
class BrokerProc:
    proc: asyncio.subprocess.Process
    addr: str
    conf: Path
    out: Path

    async def kill(self) -> None:
        """SIGKILL (after SIGCONT, in case it is stopped) and reap."""
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGCONT)
                self.proc.kill()
            await self.proc.wait()


async def start_broker_proc(tmp_path: Path, name: str, ns_addr: str, **conf: Any) -> BrokerProc:
    """``python -m broker -c <conf>`` on port 0; returns once it printed its boot line (the address is in it)."""
    settings: dict[str, Any] = {
        "listenPort": 0,
        "bindAddress": "127.0.0.1",
        "brokerIP1": "127.0.0.1",
        "namesrvAddr": ns_addr,
        "mappedFileSizeCommitLog": 1024 * 1024,
        "mappedFileSizeConsumeQueue": 30_000 * 20,
        "registerNameServerPeriod": 1000,
        **conf,
    }
    path = tmp_path / f"{name}.conf"
    path.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
    out = tmp_path / f"{name}.out"
    with out.open("ab") as sink:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "broker", "-c", str(path), cwd=REPO, stdout=sink, stderr=asyncio.subprocess.STDOUT
        )
    seen = out.stat().st_size if out.exists() else 0
    pattern = re.compile(rb"boot success.*?|The broker\[[^,]+, ([0-9.]+:[0-9]+)\] boot success")

    def booted_addr() -> str | None:
        """The address from this run's "boot success" line, once printed; fails if the broker exited."""
        for m in pattern.finditer(out.read_bytes(), max(0, seen - 200)):
            if m.group(1):
                return str(m.group(1).decode())
        assert proc.returncode is None, f"broker {name} exited: {out.read_bytes()[-2000:].decode(errors='replace')}"
        return None

    try:
        addr = await eventually(booted_addr, timeout=60, what=f"broker {name} to start (see {out})", step=0.05)
    except AssertionError:
        if proc.returncode is None:
            proc.kill()
        raise
    return BrokerProc(proc, addr, path, out)


async def read_bodies(
    admin: AdminClient, addr: str, topic: str, queues: int, group: str = "CG_readback"
) -> list[bytes]:
    """Every message body of ``topic`` held by the broker at ``addr``, by raw pulls from offset 0 of each queue."""
    out: list[bytes] = []
    for qid in range(queues):
        offset = 0
        while True:
            h = PullMessageRequestHeader(group, topic, qid, offset, 32, 0x4, 0, 0, 0, "*")
            resp = await admin.call(
                addr,
                RequestCode.PULL_MESSAGE,
                h.to_ext_fields(),
                ok=(
                    ResponseCode.SUCCESS,
                    ResponseCode.PULL_NOT_FOUND,
                    ResponseCode.PULL_RETRY_IMMEDIATELY,
                    ResponseCode.PULL_OFFSET_MOVED,
                ),
            )
            if resp.code != ResponseCode.SUCCESS:
                break
            out.extend(m.body for m in decode_records(resp.body))
            offset = int(resp.ext_fields["nextBeginOffset"])
    return out


async def ha_status(admin: AdminClient, addr: str) -> dict[str, Any]:
    return dict(json.loads((await admin.call(addr, RequestCode.GET_BROKER_HA_STATUS)).body))


def store_files(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (a store's ``commitlog`` or ``consumequeue/<topic>``), by relative path."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


async def check_replica(
    admin: AdminClient, master: BrokerProc, slave: BrokerProc, master_dir: Path, slave_dir: Path, topic: str, n: int
) -> None:
    """The slave (a process) holds the master's log byte for byte and built the same consume queues; pulls from it
    return the master's ``n`` messages."""

    async def synced() -> bool:
        end = (await ha_status(admin, master.addr))["masterCommitLogMaxOffset"]
        return bool((await ha_status(admin, slave.addr))["haClientRuntimeInfo"]["maxOffset"] >= end)

    await eventually(synced, timeout=60, what="the slave to catch up", step=0.05)
    assert store_files(slave_dir / "commitlog") == store_files(master_dir / "commitlog")
    cq = store_files(master_dir / "consumequeue" / topic)
    assert cq and store_files(slave_dir / "consumequeue" / topic) == cq
    on_master = sorted(await read_bodies(admin, master.addr, topic, 4))
    assert len(on_master) == n
    assert sorted(await read_bodies(admin, slave.addr, topic, 4)) == on_master
