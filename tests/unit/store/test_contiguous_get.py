"""The unfiltered get's one-slice fast path (``broker.store.contiguous_read``) returns exactly what the general
record-by-record loop returns: the same bytes, count, offsets and next offset, for any interleaving of queues, any
file boundaries and any ``max_msgs`` / ``max_bytes`` cut."""

from __future__ import annotations

import asyncio
import struct
import tempfile
from pathlib import Path

from _store_util import BORN, small_config
from hypothesis import given, settings
from hypothesis import strategies as st

from broker.store import GetMessageStatus, MessageStore
from broker.store.contiguous_read import Span, contiguous_span
from broker.store.request import GetRequest, MessageFilter, PutRequest

T = "TopicSpan"
FILE = 4096


def _units(pairs: list[tuple[int, int]]) -> bytes:
    return b"".join(struct.pack(">qiq", phys, size, 7) for phys, size in pairs)


def _loop(pairs: list[tuple[int, int]], max_msgs: int, max_bytes: int) -> Span | None:
    """The general loop's cut, written out: what the fast path must agree with."""
    taken: list[tuple[int, int]] = []
    total = 0
    for phys, size in pairs:
        if taken and (len(taken) >= max_msgs or total + size > max_bytes):
            break
        taken.append((phys, size))
        total += size
    if not taken or any(s <= 0 for _, s in taken):
        return None
    if any(a + s != b for (a, s), (b, _) in zip(taken, taken[1:], strict=False)):
        return None
    return Span(taken[0][0], total, len(taken))


@settings(max_examples=300, deadline=None)
@given(
    start=st.integers(0, 1 << 40),
    sizes=st.lists(st.integers(-2, 300), min_size=1, max_size=40),
    gaps=st.lists(st.integers(0, 40), max_size=40),
    max_msgs=st.integers(1, 50),
    max_bytes=st.integers(0, 5000),
)
def test_span_agrees_with_the_loop(start: int, sizes: list[int], gaps: list[int], max_msgs: int, max_bytes: int) -> None:
    pairs, phys = [], start
    for i, size in enumerate(sizes):
        pairs.append((phys, size))
        phys += size + (gaps[i] if i < len(gaps) and gaps[i] > 30 else 0)  # mostly contiguous, sometimes a gap
    want = _loop(pairs, max_msgs, max_bytes)
    got = contiguous_span(_units(pairs), len(pairs), max_msgs, max_bytes)
    assert got is None or got == want  # None: the general loop runs, always right
    if all(size > 0 for _, size in pairs[:max_msgs]):  # a span it can see, it sees
        assert got == want


def test_span_of_back_to_back_records() -> None:
    pairs = [(100, 10), (110, 20), (130, 30)]
    assert contiguous_span(_units(pairs), 3, 32, 1 << 20) == Span(100, 60, 3)
    assert contiguous_span(_units(pairs), 3, 2, 1 << 20) == Span(100, 30, 2)
    assert contiguous_span(_units(pairs), 3, 32, 35) == Span(100, 30, 2)
    assert contiguous_span(_units(pairs), 3, 32, 5) == Span(100, 10, 1)  # the first is always taken
    assert contiguous_span(_units([(100, 10), (111, 20)]), 2, 32, 1 << 20) is None


ALL = MessageFilter(lambda code: True)  # passes everything, and keeps the get on the general loop


def _same_gets(store: MessageStore, qid: int, max_msgs: int, max_bytes: int | None) -> int:
    """Every get of queue ``qid`` from every offset, fast vs general; returns how many found messages."""
    found = 0
    off = 0
    while True:
        fast = store.get_message_sync(GetRequest("g", T, qid, off, max_msgs, max_bytes))
        slow = store.get_message_sync(GetRequest("g", T, qid, off, max_msgs, max_bytes, ALL))
        assert fast == slow
        if fast.status is not GetMessageStatus.FOUND:
            return found
        found += fast.message_count
        off += 1


@settings(max_examples=25, deadline=None)
@given(
    queues=st.lists(st.sampled_from([0, 0, 0, 1]), min_size=1, max_size=50),
    sizes=st.lists(st.integers(1, 700), min_size=1, max_size=50),
    max_msgs=st.integers(1, 40),
    max_bytes=st.one_of(st.none(), st.integers(1, 6000)),
    reopen=st.booleans(),
)
def test_get_is_the_same_with_and_without_the_fast_path(
    queues: list[int], sizes: list[int], max_msgs: int, max_bytes: int | None, reopen: bool
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "s"

        async def fill() -> MessageStore:
            store = MessageStore.open(small_config(root, mapped_file_size_commit_log=FILE))
            for i, qid in enumerate(queues):
                body = bytes([97 + i % 26]) * sizes[i % len(sizes)]
                res = await store.put_message(PutRequest(T, qid, 0, 0, 1, BORN, body, {"TAGS": "t"}))
                assert res.ok
            if reopen:  # recovered records: below the trusted line until checked, so the fast path must defer
                await store.close()
                (root / "abort").write_bytes(b"")
                return MessageStore.open(small_config(root, mapped_file_size_commit_log=FILE))
            return store

        store = asyncio.run(fill())
        try:
            for qid in (0, 1):
                assert _same_gets(store, qid, max_msgs, max_bytes) >= queues.count(qid)
        finally:
            store.close_sync()


def test_one_queue_written_alone_is_served_as_one_slice(tmp_path: Path) -> None:
    """Back-to-back records of one queue in one file: the fast path answers (the property above then shows it
    answers what the loop would)."""

    async def fill() -> MessageStore:
        store = MessageStore.open(small_config(tmp_path / "s"))
        for i in range(10):
            assert (await store.put_message(PutRequest(T, 0, 0, 0, 1, BORN, b"m%d" % i, {}))).ok
        return store

    store = asyncio.run(fill())
    try:
        cq = store._queue(T, 0)
        assert cq is not None
        units, count = cq.read(0, 10) or (memoryview(b""), 0)
        got = store._contiguous_get(cq, units, count, 0, 32, 1 << 20)
        assert got is not None and got[1] == 10
        assert [m.body for m in store.get_message_sync(GetRequest("g", T, 0, 0, 32)).messages()] == [
            b"m%d" % i for i in range(10)
        ]
    finally:
        store.close_sync()
