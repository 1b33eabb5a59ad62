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
from broker.store.contiguous_read import Runs, record_runs
from broker.store.request import GetRequest, MessageFilter, PutRequest

T = "TopicSpan"
FILE = 4096


def _units(pairs: list[tuple[int, int]]) -> bytes:
    return b"".join(struct.pack(">qiq", phys, size, 7) for phys, size in pairs)


def _loop(pairs: list[tuple[int, int]], max_msgs: int, max_bytes: int) -> Runs | None:
    """The general loop's cut, written out, and its records grouped into back-to-back runs one at a time."""
    taken: list[tuple[int, int]] = []
    total = 0
    for phys, size in pairs:
        if taken and (len(taken) >= max_msgs or total + size > max_bytes):
            break
        taken.append((phys, size))
        total += size
    if not taken or any(s <= 0 for _, s in taken):
        return None
    runs: list[tuple[int, int]] = []
    for phys, size in taken:
        if runs and sum(runs[-1]) == phys:
            runs[-1] = (runs[-1][0], runs[-1][1] + size)
        else:
            runs.append((phys, size))
    return Runs(runs, total, len(taken), min(p for p, _ in taken))


@settings(max_examples=300, deadline=None)
@given(
    start=st.integers(0, 1 << 40),
    sizes=st.lists(st.integers(-2, 300), min_size=1, max_size=40),
    jumps=st.lists(st.integers(-5000, 5000), max_size=40),
    max_msgs=st.integers(1, 50),
    max_bytes=st.integers(0, 5000),
)
def test_runs_agree_with_the_loop(
    start: int, sizes: list[int], jumps: list[int], max_msgs: int, max_bytes: int
) -> None:
    pairs, phys = [], start
    for i, size in enumerate(sizes):
        pairs.append((phys, size))
        jump = jumps[i] if i < len(jumps) and abs(jumps[i]) > 3000 else 0  # mostly back to back, sometimes not
        phys = max(0, phys + size + jump)
    want = _loop(pairs, max_msgs, max_bytes)
    got = record_runs(_units(pairs), len(pairs), max_msgs, max_bytes)
    assert got is None or got == want  # None: the general loop runs, always right
    if all(size > 0 for _, size in pairs[:max_msgs]):  # runs it can see, it sees
        assert got == want


def test_runs_of_back_to_back_records() -> None:
    pairs = [(100, 10), (110, 20), (130, 30)]
    assert record_runs(_units(pairs), 3, 32, 1 << 20) == Runs([(100, 60)], 60, 3, 100)
    assert record_runs(_units(pairs), 3, 2, 1 << 20) == Runs([(100, 30)], 30, 2, 100)
    assert record_runs(_units(pairs), 3, 32, 35) == Runs([(100, 30)], 30, 2, 100)
    assert record_runs(_units(pairs), 3, 32, 5) == Runs([(100, 10)], 10, 1, 100)  # the first is always taken
    two = [(500, 10), (510, 20), (100, 5), (105, 5)]
    assert record_runs(_units(two), 4, 32, 1 << 20) == Runs([(500, 30), (100, 10)], 40, 4, 100)
    assert record_runs(_units([(100, 10), (110, 0)]), 2, 32, 1 << 20) is None


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


def test_runs_of_one_queue_are_served_as_slices(tmp_path: Path) -> None:
    """Runs of back-to-back records of one queue in one file: the fast path answers (the property above shows it
    answers what the loop would)."""

    async def fill() -> MessageStore:
        store = MessageStore.open(small_config(tmp_path / "s"))
        for i in range(10):  # queue 1's record between 4 and 5: two runs
            assert (await store.put_message(PutRequest(T, 0, 0, 0, 1, BORN, b"m%d" % i, {}))).ok
            if i == 4:
                assert (await store.put_message(PutRequest(T, 1, 0, 0, 1, BORN, b"other", {}))).ok
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
