"""MessageStore.get_message: every GetMessageStatus, its next_begin_offset, batch limits and tag filtering.

The expected values follow RocketMQ 4.9's DefaultMessageStore.getMessage (nextOffsetCorrection on a master).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from _store_util import get_all, put, small_config

from broker.store import GetMessageStatus, MessageStore
from broker.store.request import GetRequest, MessageFilter
from protocol.message_properties import tag_hash

S = GetMessageStatus
T = "TopicTest"
BODY = b"x" * 380  # ~500-byte records (with the 20-byte CRC trailer): 8 per 4 KiB commit-log file


def _delete_hour_clock(hour: int = 4) -> float:
    """A clock value in the future whose local hour is ``hour`` (files written now are then all 'old')."""
    return time.mktime((2035, 6, 1, hour, 30, 0, 0, 0, -1))


@dataclass
class Case:
    name: str
    setup: Callable[[MessageStore], Awaitable[None]]
    topic: str
    qid: int
    offset: int
    status: GetMessageStatus
    next_offset: int
    min_offset: int
    max_offset: int
    count: int = 0
    tag: str | None = None


async def _ten(store: MessageStore) -> None:
    for i in range(10):
        await put(store, T, 0, b"m%d" % i, {"TAGS": "TagA" if i % 2 else "TagB"})


async def _ten_tag_b(store: MessageStore) -> None:
    for i in range(10):
        await put(store, T, 0, b"m%d" % i, {"TAGS": "TagB"})


async def _nothing(store: MessageStore) -> None:
    return None


async def _retained(store: MessageStore) -> None:
    """40 messages over ~6 files, then retention removes every file but the active one."""
    for i in range(40):
        await put(store, T, 0, BODY + b"%d" % i)
    assert store.clean_expired(ratio=lambda: 0.0) > 0


async def _removing_window(store: MessageStore) -> None:
    """Commit-log files deleted but the consume queue not yet corrected (RocketMQ's window between the two
    cleaners): the units still point at removed bytes."""
    for i in range(40):
        await put(store, T, 0, BODY + b"%d" % i)
    store.commitlog.queue.delete_first(2)


CASES = [
    Case("found", _ten, T, 0, 0, S.FOUND, 10, 0, 10, count=10),
    Case("found-mid", _ten, T, 0, 7, S.FOUND, 10, 0, 10, count=3),
    Case("found-tag", _ten, T, 0, 0, S.FOUND, 10, 0, 10, count=5, tag="TagA"),
    Case("no-matched-message", _ten_tag_b, T, 0, 0, S.NO_MATCHED_MESSAGE, 10, 0, 10, tag="TagA"),
    Case("no-matched-message-mid", _ten_tag_b, T, 0, 4, S.NO_MATCHED_MESSAGE, 10, 0, 10, tag="TagA"),
    Case("overflow-one", _ten, T, 0, 10, S.OFFSET_OVERFLOW_ONE, 10, 0, 10),
    Case("overflow-badly-min-0", _ten, T, 0, 11, S.OFFSET_OVERFLOW_BADLY, 0, 0, 10),
    Case("overflow-badly-far-min-0", _ten, T, 0, 10**12, S.OFFSET_OVERFLOW_BADLY, 0, 0, 10),
    Case("no-logic-queue-topic", _ten, "Other", 0, 0, S.NO_MATCHED_LOGIC_QUEUE, 0, 0, 0),
    Case("no-logic-queue-qid", _ten, T, 3, 5, S.NO_MATCHED_LOGIC_QUEUE, 0, 0, 0),
    Case("empty-store", _nothing, T, 0, 0, S.NO_MATCHED_LOGIC_QUEUE, 0, 0, 0),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
async def test_status_table(tmp_path: Path, case: Case) -> None:
    store = MessageStore.open(small_config(tmp_path / "s", mapped_file_size_commit_log=4096))
    try:
        await case.setup(store)
        code = tag_hash(case.tag) if case.tag else None
        r = store.get_message_sync(
            GetRequest(
                "g",
                case.topic,
                case.qid,
                case.offset,
                32,
                filter=MessageFilter(lambda c: c == code, lambda t: t == case.tag) if case.tag else None,
            )
        )
        assert (r.status, r.next_begin_offset, r.min_offset, r.max_offset) == (
            case.status,
            case.next_offset,
            case.min_offset,
            case.max_offset,
        )
        assert r.message_count == case.count == len(r.messages())
        if case.tag:
            assert all(m.tags == case.tag for m in r.messages())
        if r.status is not S.FOUND:
            assert r.buffer == b""
    finally:
        await store.close()


async def test_retention_statuses(tmp_path: Path) -> None:
    """After retention: OFFSET_TOO_SMALL below the new min (next = min), FOUND from min, OFFSET_OVERFLOW_BADLY
    with min > 0 answers max."""
    store = MessageStore.open(
        small_config(tmp_path / "s", mapped_file_size_commit_log=4096, file_reserved_time_hours=1),
        clock=_delete_hour_clock,
    )
    try:
        await _retained(store)
        lo, hi = store.get_min_offset_in_queue(T, 0), store.get_max_offset_in_queue(T, 0)
        assert 0 < lo < hi == 40
        for off in (0, lo - 1):
            r = store.get_message_sync(GetRequest("g", T, 0, off, 32))
            assert (r.status, r.next_begin_offset, r.min_offset, r.max_offset) == (S.OFFSET_TOO_SMALL, lo, lo, hi)
        r = store.get_message_sync(GetRequest("g", T, 0, lo, 32))
        assert r.status is S.FOUND and r.queue_offsets[0] == lo
        assert r.messages()[0].body == BODY + b"%d" % lo
        r = store.get_message_sync(GetRequest("g", T, 0, hi + 5, 32))
        assert (r.status, r.next_begin_offset) == (S.OFFSET_OVERFLOW_BADLY, hi)
        r = store.get_message_sync(GetRequest("g", T, 0, hi, 32))
        assert (r.status, r.next_begin_offset) == (S.OFFSET_OVERFLOW_ONE, hi)
        assert [m.queue_offset for m in get_all(store, T, 0, lo)] == list(range(lo, hi))
    finally:
        await store.close()


async def test_message_was_removing_skips_to_live_data(tmp_path: Path) -> None:
    """J's scan: a unit pointing into a removed file costs one failed read, the rest of that file's units are
    skipped (nextPhyFileStartOffset), and the scan (up to 800 units) goes on to the live messages: FOUND."""
    store = MessageStore.open(small_config(tmp_path / "s", mapped_file_size_commit_log=4096))
    try:
        await _removing_window(store)  # 8 records per file; files 0 and 1 (queue offsets 0-15) are gone
        cl_min = store.get_commit_log_min_offset()
        assert cl_min == 2 * 4096
        assert store.get_min_offset_in_queue(T, 0) == 0  # not corrected yet
        r = store.get_message_sync(GetRequest("g", T, 0, 0, 4))
        assert (r.status, r.queue_offsets, r.next_begin_offset) == (S.FOUND, [16, 17, 18, 19], 20)
        assert all(m.commit_log_offset >= cl_min for m in r.messages())
        # a read that starts in the removed range but reaches live data returns the live messages
        r = store.get_message_sync(GetRequest("g", T, 0, 15, 32))
        assert r.status is S.FOUND and r.queue_offsets[0] == 16
    finally:
        await store.close()


async def test_message_was_removing(tmp_path: Path) -> None:
    """Every scanned unit points into removed files: MESSAGE_WAS_REMOVING, an empty buffer, and next_begin_offset
    past every unit scanned (never backwards), so the consumer moves on."""
    store = MessageStore.open(small_config(tmp_path / "s", mapped_file_size_commit_log=4096))
    try:
        for i in range(16):  # queue 0: files 0 and 1
            await put(store, T, 0, BODY + b"%d" % i)
        for i in range(16):  # queue 1: files 2 and 3
            await put(store, T, 1, BODY + b"%d" % i)
        store.commitlog.queue.delete_first(2)
        for start, max_msgs in [(0, 4), (0, 32), (5, 1), (15, 32)]:
            r = store.get_message_sync(GetRequest("g", T, 0, start, max_msgs))
            assert (r.status, r.next_begin_offset, r.min_offset, r.max_offset) == (S.MESSAGE_WAS_REMOVING, 16, 0, 16)
            assert r.buffer == b"" and r.message_count == 0 and r.queue_offsets == []
        r = store.get_message_sync(GetRequest("g", T, 0, 16, 32))
        assert (r.status, r.next_begin_offset) == (S.OFFSET_OVERFLOW_ONE, 16)
        # queue 1 is untouched
        assert [m.queue_offset for m in get_all(store, T, 1)] == list(range(16))
    finally:
        await store.close()


async def test_no_message_in_queue_after_recovery_cut_everything(tmp_path: Path) -> None:
    """A queue whose only message was a torn tail: recovery truncates its consume queue to zero units, but the queue
    still exists (max 0) → NO_MESSAGE_IN_QUEUE, next 0. This is the only way this store reaches that status (a queue
    is otherwise created by its first dispatched message)."""
    root = tmp_path / "s"
    cfg = small_config(root)
    store = MessageStore.open(cfg)
    await put(store, T, 0, b"keep")
    await put(store, T, 1, b"torn")  # the last record; queue 1 has only this one
    phys = store.get_commit_log_max_offset()
    await store.close()
    # garble the last record's body (CRC mismatch) and pretend a crash (abort marker present)
    path = root / "commitlog" / f"{0:020d}"
    with open(path, "r+b") as f:
        f.seek(phys - 20)
        f.write(b"\xff" * 4)
    (root / "abort").write_bytes(b"")
    store = MessageStore.open(cfg)
    try:
        assert not store.last_exit_ok
        assert ("TopicTest", 1) in {(t, q) for t, qs in store.topics_and_queues().items() for q in qs}
        r = store.get_message_sync(GetRequest("g", T, 1, 0, 32))
        assert (r.status, r.next_begin_offset, r.min_offset, r.max_offset) == (S.NO_MESSAGE_IN_QUEUE, 0, 0, 0)
        r = store.get_message_sync(GetRequest("g", T, 1, 7, 32))
        assert (r.status, r.next_begin_offset) == (S.NO_MESSAGE_IN_QUEUE, 0)
        assert [m.body for m in get_all(store, T, 0)] == [b"keep"]
        # the queue continues from 0
        res = await put(store, T, 1, b"again")
        assert res.queue_offset == 0
        assert [m.body for m in get_all(store, T, 1)] == [b"again"]
    finally:
        await store.close()


async def test_offset_found_null(tmp_path: Path) -> None:
    """OFFSET_FOUND_NULL: offset inside [min, max) but no consume-queue file holds it. Reachable only when a
    consume-queue file vanished under the store (RocketMQ: a file being deleted); simulated by dropping the first
    consume-queue file while min is still in it. next_begin_offset = start of the next consume-queue file."""
    store = MessageStore.open(small_config(tmp_path / "s"))
    try:
        for i in range(250):
            await put(store, T, 0, b"%d" % i)
        store.dispatcher.drain()  # reach into the consume queue the dispatcher builds
        cq = store._queues[(T, 0)]
        assert len(cq.queue.files) == 3
        cq.queue.files[0].destroy()
        cq.queue.files = cq.queue.files[1:]
        r = store.get_message_sync(GetRequest("g", T, 0, 42, 32))
        assert (r.status, r.next_begin_offset) == (S.OFFSET_FOUND_NULL, 100)
        r = store.get_message_sync(GetRequest("g", T, 0, 100, 32))
        assert r.status is S.FOUND and r.queue_offsets[0] == 100
    finally:
        store.close_sync()


# -- batch limits ----------------------------------------------------------------------------------------------------


async def test_max_msgs_and_max_bytes(tmp_path: Path) -> None:
    store = MessageStore.open(small_config(tmp_path / "s", max_transfer_count_on_message_in_memory=32))
    try:
        sizes = []
        for i in range(100):
            sizes.append((await put(store, T, 0, b"b" * 100 + b"%03d" % i)).size)
        size = sizes[0]
        assert len(set(sizes)) == 1
        r = store.get_message_sync(GetRequest("g", T, 0, 0, 5))
        assert (r.status, r.message_count, r.next_begin_offset) == (S.FOUND, 5, 5)
        # max_msgs is capped by maxTransferCountOnMessageInMemory
        r = store.get_message_sync(GetRequest("g", T, 0, 0, 1000))
        assert (r.message_count, r.next_begin_offset) == (32, 32)
        # max_bytes: as many whole records as fit
        r = store.get_message_sync(GetRequest("g", T, 0, 10, 32, max_bytes=3 * size + size // 2))
        assert (r.message_count, r.next_begin_offset, len(r.buffer)) == (3, 13, 3 * size)
        # at least one message even when it alone exceeds max_bytes
        r = store.get_message_sync(GetRequest("g", T, 0, 10, 32, max_bytes=1))
        assert (r.message_count, r.next_begin_offset) == (1, 11)
        # max_msgs <= 0 behaves as 1
        r = store.get_message_sync(GetRequest("g", T, 0, 99, 0))
        assert (r.message_count, r.next_begin_offset) == (1, 100)
        # the buffer is the records back to back
        r = store.get_message_sync(GetRequest("g", T, 0, 20, 4))
        assert [m.body for m in r.messages()] == [b"b" * 100 + b"%03d" % i for i in range(20, 24)]
    finally:
        await store.close()


async def test_get_stops_at_consume_queue_file_end(tmp_path: Path) -> None:
    """A read never crosses a consume-queue file: next_begin_offset is the file boundary, the next read continues."""
    store = MessageStore.open(small_config(tmp_path / "s"))
    try:
        for i in range(150):
            await put(store, T, 0, b"%d" % i)
        r = store.get_message_sync(GetRequest("g", T, 0, 90, 32))
        assert (r.status, r.message_count, r.next_begin_offset) == (S.FOUND, 10, 100)
        r = store.get_message_sync(GetRequest("g", T, 0, 100, 32))
        assert (r.message_count, r.next_begin_offset) == (32, 132)
    finally:
        await store.close()


# -- tag filtering ---------------------------------------------------------------------------------------------------


async def test_tag_prefilter_and_exact_filter(tmp_path: Path) -> None:
    """The hash pre-filter works on consume-queue tags codes; the exact filter rejects hash collisions
    ("Aa" and "BB" share Java hashCode 2112)."""
    assert tag_hash("Aa") == tag_hash("BB")
    store = MessageStore.open(small_config(tmp_path / "s"))
    try:
        tags = ["Aa", "BB", "TagC", None, "Aa", "BB", "BB", "TagC"]
        for i, t in enumerate(tags):
            await put(store, T, 0, b"%d" % i, {"TAGS": t} if t else {})
        code = tag_hash("Aa")
        seen_codes: list[int] = []

        def pre(c: int) -> bool:
            seen_codes.append(c)
            return c == code

        r = store.get_message_sync(GetRequest("g", T, 0, 0, 32, filter=MessageFilter(pre)))
        assert r.queue_offsets == [0, 1, 4, 5, 6]  # hash matches include the BB collisions
        assert seen_codes == [tag_hash(t) for t in tags]  # None → 0
        r = store.get_message_sync(GetRequest("g", T, 0, 0, 32, filter=MessageFilter(pre, lambda t: t == "Aa")))
        assert r.queue_offsets == [0, 4]
        assert [m.tags for m in r.messages()] == ["Aa", "Aa"]
        assert r.next_begin_offset == 8
        # max_msgs counts matched messages, next_begin_offset the units scanned
        r = store.get_message_sync(GetRequest("g", T, 0, 0, 1, filter=MessageFilter(pre, lambda t: t == "BB")))
        assert (r.queue_offsets, r.next_begin_offset) == ([1], 2)
        r = store.get_message_sync(GetRequest("g", T, 0, 2, 1, filter=MessageFilter(pre, lambda t: t == "BB")))
        assert (r.queue_offsets, r.next_begin_offset) == ([5], 6)
        # untagged messages have tags code 0 and tags None
        r = store.get_message_sync(
            GetRequest("g", T, 0, 0, 32, filter=MessageFilter(lambda c: c == 0, lambda t: t is None))
        )
        assert r.queue_offsets == [3]
    finally:
        await store.close()


async def test_filter_scans_past_max_msgs_units(tmp_path: Path) -> None:
    """With a filter the scan covers more units than max_msgs (RocketMQ: up to 16000 bytes of units)."""
    store = MessageStore.open(small_config(tmp_path / "s", mapped_file_size_consume_queue=1000 * 20))
    try:
        for i in range(600):
            await put(store, T, 0, b"%d" % i, {"TAGS": "hit" if i in (450, 599) else "miss"})
        code = tag_hash("hit")
        r = store.get_message_sync(GetRequest("g", T, 0, 0, 1, filter=MessageFilter(lambda c: c == code)))
        assert (r.status, r.queue_offsets, r.next_begin_offset) == (S.FOUND, [450], 451)
        r = store.get_message_sync(GetRequest("g", T, 0, 0, 32, filter=MessageFilter(lambda c: c == code)))
        assert (r.queue_offsets, r.next_begin_offset) == ([450, 599], 600)
        r = store.get_message_sync(GetRequest("g", T, 0, 0, 32, filter=MessageFilter(lambda c: False)))
        assert (r.status, r.next_begin_offset) == (S.NO_MATCHED_MESSAGE, 600)
    finally:
        await store.close()


async def test_transactional_prepared_not_served(tmp_path: Path) -> None:
    """Prepared and rollback messages are stored but not dispatched; commit and normal ones are."""
    store = MessageStore.open(small_config(tmp_path / "s"))
    try:
        a = await put(store, T, 0, b"normal")
        p = await put(store, T, 0, b"prepared", sys_flag=0x4)
        rb = await put(store, T, 0, b"rollback", sys_flag=0xC)
        c = await put(store, T, 0, b"commit", sys_flag=0x8)
        assert (a.queue_offset, c.queue_offset) == (0, 1)
        assert store.look_message_by_offset(p.wrote_offset).body == b"prepared"
        assert store.look_message_by_offset(rb.wrote_offset).body == b"rollback"
        assert [m.body for m in get_all(store, T, 0)] == [b"normal", b"commit"]
    finally:
        await store.close()
