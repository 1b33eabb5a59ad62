"""A full disk for real (issue 34): a broker process with its store on a small tmpfs, 8 MiB commit-log segments,
SYNC_FLUSH, 60 KB sends until the volume is full; then a ballast file is removed and puts must resume. One run
checks: the broker never dies (a SIGBUS on a mapped page would kill it), refusals are SERVICE_NOT_AVAILABLE (14)
with "disk full", every acknowledged message reads back (also after a restart), puts resume once the reserve is
free. Used by ``test_disk_full_tmpfs.py`` (2 runs) and ``bench/disk_full_chaos.py`` (20 runs)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from client.admin.admin_client import AdminClient
from protocol.codes import ResponseCode
from protocol.errors import RemotingError
from protocol.remoting import RemotingClient
from tests.eventually import eventually
from tests.integration.broker_wire import send_cmd
from tests.integration.ha_support import BrokerProc, read_bodies, start_broker_proc

TOPIC = "DiskFullTopic"
BODY = 60_000
BALLAST = 16 * 1024 * 1024


@dataclass
class Outcome:
    acked: int = 0
    refused: int = 0
    other_codes: dict[int, int] = field(default_factory=dict)
    lost: int = 0
    died: int | None = None  # the broker's exit status if it died (negative: a signal)
    resumed: bool = False
    remark: str = ""


def mount_tmpfs(where: Path, size_mb: int) -> bool:
    """Mount a tmpfs of ``size_mb`` at ``where``; False when mounting is not permitted here."""
    where.mkdir(parents=True, exist_ok=True)
    res = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs", str(where)], capture_output=True, check=False
    )
    return res.returncode == 0


def unmount(where: Path) -> None:
    subprocess.run(["umount", "-l", str(where)], capture_output=True, check=False)


async def _send(client: RemotingClient, addr: str, seq: int) -> tuple[int, str]:
    body = b"%08d" % seq + b"x" * (BODY - 8)
    try:
        r = await client.invoke(addr, send_cmd(TOPIC, body, queue_id=0, queue_nums=1), 10.0)
    except RemotingError as exc:
        return -1, str(exc)
    return r.code, r.remark or ""


async def _start(work: Path, store: Path, name: str) -> BrokerProc:
    return await start_broker_proc(
        work,
        name,
        "",
        storePathRootDir=store,
        mappedFileSizeCommitLog=8 * 1024 * 1024,
        flushDiskType="SYNC_FLUSH",
        cleanFileForciblyEnable="false",  # this run checks that nothing acknowledged is lost
    )


async def one_run(work: Path, mnt: Path) -> Outcome:
    """One scenario on the tmpfs mounted at ``mnt`` (``work``: config and logs, off the tmpfs)."""
    out = Outcome()
    store = mnt / "store"
    ballast = mnt / "ballast"
    with ballast.open("wb") as f:
        f.write(b"\1" * BALLAST)  # written, not sparse: it really takes the space
    broker = await _start(work, store, "full")
    acked: set[int] = set()
    client = RemotingClient()
    try:
        seq = 0
        refused_in_a_row = 0
        while refused_in_a_row < 20 and seq < 5000:
            code, remark = await _send(client, broker.addr, seq)
            if code == ResponseCode.SUCCESS:
                acked.add(seq)
                refused_in_a_row = 0
            elif code == ResponseCode.SERVICE_NOT_AVAILABLE:
                out.refused += 1
                refused_in_a_row += 1
                out.remark = remark
            else:
                out.other_codes[code] = out.other_codes.get(code, 0) + 1
                if broker.proc.returncode is not None:
                    break
                refused_in_a_row += 1
            seq += 1
        await asyncio.sleep(0)
        if broker.proc.returncode is not None:
            out.died = broker.proc.returncode
            return out
        ballast.unlink()  # 16 MiB free again: puts resume at the next probe (once a second)

        async def put_taken() -> bool:
            nonlocal seq
            code, _ = await _send(client, broker.addr, seq)
            if code == ResponseCode.SUCCESS:
                acked.add(seq)
                return True
            seq += 1
            return False

        # a put that never resumes is the test's to report (``resumed``), after whether the broker died
        with contextlib.suppress(AssertionError):
            out.resumed = await eventually(put_taken, timeout=15, what="a put taken again", step=0.2)
        out.acked = len(acked)
        async with AdminClient("127.0.0.1:9") as admin:
            got = {int(b[:8]) for b in await read_bodies(admin, broker.addr, TOPIC, 1)}
        out.lost = len(acked - got)
        if broker.proc.returncode is not None:
            out.died = broker.proc.returncode
            return out
        broker.proc.send_signal(signal.SIGTERM)
        rc = await broker.proc.wait()
        if rc not in (0, -signal.SIGTERM):
            out.died = rc
            return out
        again = await _start(work, store, "restart")  # the store reopens on the (nearly) full volume
        try:
            async with AdminClient("127.0.0.1:9") as admin:
                got = {int(b[:8]) for b in await read_bodies(admin, again.addr, TOPIC, 1)}
            out.lost = max(out.lost, len(acked - got))
        finally:
            again.proc.send_signal(signal.SIGTERM)
            with contextlib.suppress(ProcessLookupError):
                await asyncio.wait_for(again.proc.wait(), 30)
    finally:
        await client.close()
        if broker.proc.returncode is None:
            await broker.kill()
    return out


def can_mount() -> bool:
    return os.geteuid() == 0
