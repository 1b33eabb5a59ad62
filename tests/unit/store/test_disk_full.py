"""A full disk: puts are refused with SERVICE_NOT_AVAILABLE (not an exception), stored messages stay readable, the
half-written record is overwritten, and puts resume once the volume has space again — also across a restart."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest
from _store_util import BORN, get_all, put, small_config

from broker.store import MessageStore, PutMessageStatus, mapped_file
from broker.store.file_queue import MappedFileQueue
from broker.store.mapped_file import MappedFile
from broker.store.put import DISK_FULL_REMARK, DISK_SPACE_LOW
from broker.store.request import BatchPutRequest, PutRequest
from protocol.batch import BatchItem

T = "TopicDiskFull"


class Volume:
    """The store's clock and free-space probe, both under the test's control."""

    def __init__(self) -> None:
        self.t = 1_900_000_000.0
        self.free = DISK_SPACE_LOW  # plenty until a test says otherwise

    def clock(self) -> float:
        return self.t

    def free_space(self) -> int:
        return self.free


def enospc_after_half(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The commit log's write writes half of its data, then fails as a full disk does; returns the failure count."""
    failures: list[int] = []

    def half_then_enospc(fd: int, data: Any, pos: int) -> int:
        os.pwrite(fd, bytes(data[: len(data) // 2]), pos)
        failures.append(len(data))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(mapped_file, "pwrite", half_then_enospc)
    return failures


async def _put(store: MessageStore, body: bytes) -> Any:
    return await store.put_message(PutRequest(T, 0, 0, 0, 1_700_000_000_000, BORN, body, {"KEYS": body.decode()}))


async def test_enospc_refuses_puts_until_space_is_back_and_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vol = Volume()
    cfg = small_config(tmp_path / "s")
    store = MessageStore.open(cfg, clock=vol.clock, free_space=vol.free_space)
    await store.start()
    try:
        for i in range(5):
            await put(store, T, 0, b"before-%d" % i)
        vol.free = 0  # the volume is full: the write fails, and the next probe agrees
        with monkeypatch.context() as m:
            failures = enospc_after_half(m)
            res = await _put(store, b"lost-to-enospc")
            assert res.status is PutMessageStatus.SERVICE_NOT_AVAILABLE and res.remark == DISK_FULL_REMARK
            assert len(failures) == 1
        # the disk is still full: refused without touching the file, batches too
        res = await _put(store, b"still-full")
        assert res.status is PutMessageStatus.SERVICE_NOT_AVAILABLE
        batch = await store.put_messages(BatchPutRequest(T, 0, 0, 1_700_000_000_000, BORN, [BatchItem(b"b", {})]))
        assert batch.status is PutMessageStatus.SERVICE_NOT_AVAILABLE
        # reads are unaffected
        assert [m.body for m in get_all(store, T, 0)] == [b"before-%d" % i for i in range(5)]
        # space is freed, but the probe runs at most once a second
        vol.free = DISK_SPACE_LOW
        assert (await _put(store, b"too-soon")).status is PutMessageStatus.SERVICE_NOT_AVAILABLE
        vol.t += 1.5
        for i in range(3):
            await put(store, T, 0, b"after-%d" % i)
        want = [b"before-%d" % i for i in range(5)] + [b"after-%d" % i for i in range(3)]
        assert [m.body for m in get_all(store, T, 0)] == want
        assert [m.queue_offset for m in get_all(store, T, 0)] == list(range(8))
    finally:
        await store.close()
    reopened = MessageStore.open(cfg, clock=vol.clock)  # recovery sees a clean log: the half record was overwritten
    await reopened.start()
    try:
        assert [m.body for m in get_all(reopened, T, 0)] == want
    finally:
        await reopened.close()


async def test_a_segment_that_cannot_be_created_refuses_the_put(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vol = Volume()
    store = MessageStore.open(small_config(tmp_path / "s", mapped_file_size_commit_log=4096), clock=vol.clock)
    store._appender._free_space = vol.free_space
    await store.start()
    try:
        body = b"x" * 1000
        await put(store, T, 0, body)  # the first segment exists
        stored = 1
        with monkeypatch.context() as m:

            def no_space(self: MappedFileQueue, start: int) -> MappedFile:
                raise OSError(errno.ENOSPC, "No space left on device")

            m.setattr(MappedFileQueue, "new_file", no_space)
            vol.free = 0
            while (res := await _put(store, body)).ok:
                stored += 1
            assert res.status is PutMessageStatus.SERVICE_NOT_AVAILABLE and res.remark == DISK_FULL_REMARK
        assert stored >= 2  # the segment filled up first
        vol.free, vol.t = DISK_SPACE_LOW, vol.t + 2
        await put(store, T, 0, b"next-file")
        bodies = [m.body for m in get_all(store, T, 0)]
        assert bodies == [body] * stored + [b"next-file"]
    finally:
        await store.close()


async def test_other_write_errors_are_unknown_error_and_do_not_stop_puts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = MessageStore.open(small_config(tmp_path / "s"))
    await store.start()
    try:
        with monkeypatch.context() as m:

            def eio(fd: int, data: Any, pos: int) -> int:
                raise OSError(errno.EIO, "Input/output error")

            m.setattr(mapped_file, "pwrite", eio)
            res = await _put(store, b"eio")
            assert res.status is PutMessageStatus.UNKNOWN_ERROR and "Input/output error" in res.remark
        await put(store, T, 0, b"fine")
        assert [m.body for m in get_all(store, T, 0)] == [b"fine"]
    finally:
        await store.close()


async def test_low_free_space_refuses_puts_before_any_write_fails(tmp_path: Path) -> None:
    """Puts stop below the reserve (room for consume queues, index and metadata), checked at most once a second, and
    resume on the first probe that finds it free again (J: as soon as the ratio allows, no hysteresis)."""
    vol = Volume()
    store = MessageStore.open(small_config(tmp_path / "s"), clock=vol.clock, free_space=vol.free_space)
    await store.start()
    try:
        await put(store, T, 0, b"plenty")
        vol.free = DISK_SPACE_LOW - 1
        await put(store, T, 0, b"probe-not-due")  # within the second: not probed yet
        vol.t += 1.0
        res = await _put(store, b"low")
        assert res.status is PutMessageStatus.SERVICE_NOT_AVAILABLE and res.remark == DISK_FULL_REMARK
        vol.t += 0.5
        assert (await _put(store, b"not-probed")).status is PutMessageStatus.SERVICE_NOT_AVAILABLE
        vol.free = DISK_SPACE_LOW  # the reserve is free again: the next probe resumes
        vol.t += 1.0
        await put(store, T, 0, b"resumed")
        assert [m.body for m in get_all(store, T, 0)] == [b"plenty", b"probe-not-due", b"resumed"]
    finally:
        await store.close()
