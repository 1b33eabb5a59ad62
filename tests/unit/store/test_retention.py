"""Retention: expired commit-log files go at the deleteWhen hour, or at any hour when the disk is over the ratio;
never the active file; reads of removed ranges answer with statuses, not exceptions."""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

import pytest
from _store_util import commit_log_files, get_all, put, small_config

from broker.store import GetMessageStatus, MessageStore
from broker.store.request import GetRequest
from tests.eventually import eventually

S = GetMessageStatus
T = "TopicRetention"
BODY = b"r" * 400
FILE = 4096


class Clock:
    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def at_hour(hour: int, *, year: int = 2035) -> float:
    return time.mktime((year, 6, 1, hour, 30, 0, 0, 0, -1))


async def _fill(store: MessageStore, n: int = 60, queues: int = 2) -> None:
    for i in range(n):
        await put(store, T, i % queues, BODY + b"%d" % i, {"KEYS": f"k{i}"})


def _open(root: Path, clock: Clock, **kw) -> MessageStore:
    cfg = small_config(root, mapped_file_size_commit_log=FILE, file_reserved_time_hours=1, delete_when="04", **kw)
    return MessageStore.open(cfg, clock=clock)


async def test_deletes_at_delete_hour_only(tmp_path: Path) -> None:
    clock = Clock(at_hour(5))
    store = _open(tmp_path / "s", clock)
    try:
        await _fill(store)
        files = commit_log_files(tmp_path / "s")
        assert len(files) >= 6
        # wrong hour, disk fine: nothing
        for h in (0, 3, 5, 12, 23):
            clock.t = at_hour(h)
            assert store.clean_expired(ratio=lambda: 10.0) == 0
        assert commit_log_files(tmp_path / "s") == files
        # delete hour, but files are not old enough (written a minute before the clock): nothing. The files' times
        # are set rather than taken from the wall clock, which made this row fail between 00:00 and 03:00
        lt = time.localtime()
        clock.t = time.mktime((lt.tm_year, lt.tm_mon, lt.tm_mday, 4, 0, 0, 0, 0, -1))
        for f in files:
            os.utime(f, (clock.t - 60, clock.t - 60))
        assert store.clean_expired(ratio=lambda: 10.0) == 0
        # delete hour and expired: every file but the active one (batch max 10)
        clock.t = at_hour(4)
        n = store.clean_expired(ratio=lambda: 10.0)
        assert n == len(files) - 1
        left = commit_log_files(tmp_path / "s")
        assert left == files[-1:]
        assert store.get_commit_log_min_offset() == int(os.path.basename(files[-1]))
        # the active file is never deleted, however many passes
        for _ in range(3):
            assert store.clean_expired(ratio=lambda: 99.0) == 0
        assert commit_log_files(tmp_path / "s") == files[-1:]
    finally:
        await store.close()


async def test_forced_clean_at_any_hour_when_disk_is_full(tmp_path: Path) -> None:
    clock = Clock(time.time())  # files are NOT expired
    store = _open(tmp_path / "s", clock)
    try:
        await _fill(store)
        files = commit_log_files(tmp_path / "s")
        deleted = 0
        for _ in range(len(files) + 3):
            deleted += store.clean_expired(ratio=lambda: 99.0)
        assert deleted == len(files) - 1
        assert commit_log_files(tmp_path / "s") == files[-1:]
        # under the ratio and not the delete hour: nothing more (there is nothing but the active file anyway)
        assert store.clean_expired(ratio=lambda: 0.0) == 0
    finally:
        await store.close()


async def test_forced_clean_one_file_per_pass(tmp_path: Path) -> None:
    store = _open(tmp_path / "s", Clock(time.time()))
    try:
        await _fill(store)
        files = commit_log_files(tmp_path / "s")
        assert store.clean_expired(ratio=lambda: 99.0) == 1
        assert commit_log_files(tmp_path / "s") == files[1:]
    finally:
        await store.close()


async def test_batch_max_limits_a_pass(tmp_path: Path) -> None:
    store = _open(tmp_path / "s", Clock(at_hour(4)), delete_files_batch_max=2)
    try:
        await _fill(store)
        files = commit_log_files(tmp_path / "s")
        assert store.clean_expired(ratio=lambda: 0.0) == 2
        assert store.clean_expired(ratio=lambda: 0.0) == 2
        assert commit_log_files(tmp_path / "s") == files[4:]
    finally:
        await store.close()


async def test_reads_after_retention(tmp_path: Path) -> None:
    clock = Clock(at_hour(4))
    store = _open(tmp_path / "s", clock, delete_files_batch_max=100)
    try:
        await _fill(store, n=300, queues=2)  # 150 per queue: 2 consume-queue files of 100 units each
        phys_first = store.look_message_by_offset(0)
        assert phys_first is not None
        store.dispatcher.drain()
        assert len(store._queues[(T, 0)].queue.files) == 2
        assert store.clean_expired(ratio=lambda: 0.0) > 0
        cl_min = store.get_commit_log_min_offset()
        assert cl_min > 0
        for qid in (0, 1):
            lo, hi = store.get_min_offset_in_queue(T, qid), store.get_max_offset_in_queue(T, qid)
            assert 0 < lo < hi == 150
            msgs = get_all(store, T, qid, lo)
            assert [m.queue_offset for m in msgs] == list(range(lo, hi))
            assert msgs[0].commit_log_offset >= cl_min
            for off in (0, lo // 2, lo - 1):
                r = store.get_message_sync(GetRequest("g", T, qid, off, 32))
                assert (r.status, r.next_begin_offset, r.min_offset) == (S.OFFSET_TOO_SMALL, lo, lo)
            # by-time lookup and store timestamps of removed offsets do not raise
            assert store.get_offset_in_queue_by_time_sync(T, qid, 0) == lo
            assert store.get_message_store_timestamp(T, qid, 0) == -1
            assert await store.get_earliest_message_time(T, qid) == int(clock.t * 1000)
        # consume-queue files holding only removed units are gone
        assert len(store._queues[(T, 0)].queue.files) == 1
        # removed bytes are not served by physical offset either
        assert store.look_message_by_offset(0) is None
        assert store.select_one_message_by_offset(cl_min - 1) is None
        # the index forgets removed messages
        assert store.query_message(T, "k0", 10, 0, 2**62) == []
        assert len(store.query_message(T, "k299", 10, 0, 2**62)) == 1
        # puts continue
        res = await put(store, T, 0, b"after")
        assert res.queue_offset == 150
    finally:
        await store.close()


async def test_min_offset_survives_restart(tmp_path: Path) -> None:
    """After retention and a clean restart the consume-queue min offset is still the first live message (RocketMQ
    corrects it at start: correctMinOffset), so a pull below it answers OFFSET_TOO_SMALL, not a removed range."""
    clock = Clock(at_hour(4))
    store = _open(tmp_path / "s", clock)
    await _fill(store, n=60, queues=1)
    assert store.clean_expired(ratio=lambda: 0.0) > 0
    lo = store.get_min_offset_in_queue(T, 0)
    assert lo > 0
    await store.close()
    for clean in (True, False):
        if not clean:
            (tmp_path / "s" / "abort").write_bytes(b"")
        store = _open(tmp_path / "s", clock)
        try:
            assert store.last_exit_ok is clean
            assert store.get_min_offset_in_queue(T, 0) == lo
            r = store.get_message_sync(GetRequest("g", T, 0, 0, 32))
            assert (r.status, r.next_begin_offset) == (S.OFFSET_TOO_SMALL, lo)
            assert [m.queue_offset for m in get_all(store, T, 0, lo)] == list(range(lo, 60))
        finally:
            await store.close()


async def test_retention_loop_runs_in_background(tmp_path: Path) -> None:
    """start() runs clean_expired on its interval; close() stops it. Synchronised on the file count, not sleeps."""

    clock = Clock(at_hour(4))
    store = _open(tmp_path / "s", clock, clean_resource_interval_ms=10)
    await store.start()
    try:
        await _fill(store, n=60, queues=1)
        await eventually(
            lambda: len(commit_log_files(tmp_path / "s")) <= 1, what="the expired files deleted", step=0.01
        )
        assert store.get_min_offset_in_queue(T, 0) > 0
    finally:
        await store.close()


async def test_delete_expired_now_ignores_the_delete_hour(tmp_path: Path) -> None:
    """mqadmin deleteExpiredCommitLog (J executeDeleteFilesManually): expired files go at any hour."""
    clock = Clock(at_hour(5))  # deleteWhen is 04
    store = _open(tmp_path / "s", clock)
    try:
        await _fill(store)
        files = commit_log_files(tmp_path / "s")
        assert store.clean_expired(ratio=lambda: 10.0) == 0
        assert store.delete_expired_now() == len(files) - 1
        assert commit_log_files(tmp_path / "s") == files[-1:]
        assert store.clean_expired_consume_queues() >= 0
        assert store.get_min_offset_in_queue(T, 0) > 0  # the consume queue no longer starts at deleted messages
    finally:
        await store.close()


async def test_forced_clean_of_unconsumed_messages_warns_per_topic_and_counts(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = _open(tmp_path / "s", Clock(time.time()))  # not expired: only a forced clean deletes
    committed = {(T, 0): 2}  # queue 0: a group consumed the first 2; queue 1: no group has committed
    store.consumed_offset = lambda topic, qid: committed.get((topic, qid))
    try:
        await _fill(store)
        before = {q: store.get_min_offset_in_queue(T, q) for q in (0, 1)}
        with caplog.at_level(logging.WARNING, logger="rocketq.store.retention"):
            assert store.clean_expired(ratio=lambda: 99.0) == 1
        removed = {q: store.get_min_offset_in_queue(T, q) - before[q] for q in (0, 1)}
        assert sum(removed.values()) > 2
        fc = store.forced_clean
        assert fc.removed == {T: sum(removed.values())}
        assert fc.unconsumed == {T: removed[0] - 2 + removed[1]}
        [rec] = [r for r in caplog.records if "forced clean" in r.getMessage()]
        assert rec.levelno == logging.WARNING and T in rec.getMessage()
    finally:
        await store.close()


async def test_clean_file_forcibly_disabled_keeps_unexpired_files(tmp_path: Path) -> None:
    store = _open(tmp_path / "s", Clock(time.time()), clean_file_forcibly_enable=False)
    try:
        await _fill(store)
        files = commit_log_files(tmp_path / "s")
        assert store.clean_expired(ratio=lambda: 99.0) == 0
        assert commit_log_files(tmp_path / "s") == files and not store.forced_clean.removed
    finally:
        await store.close()
