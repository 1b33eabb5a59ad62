"""ProcessQueue: commit offset = smallest in flight, flow-control thresholds, consume-timeout detection."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from client.consumer.process_queue import ProcessQueue
from protocol.message_ext import MessageExt


def msgs(*offsets: int, size: int = 10) -> list[MessageExt]:
    return [MessageExt(topic="T", body=b"x" * size, queue_offset=o) for o in offsets]


def test_commit_offset_is_smallest_in_flight() -> None:
    pq = ProcessQueue()
    assert pq.commit_offset() == -1
    batch = msgs(101, 102, 103, 104, 105)
    pq.put(batch)
    assert pq.remove([batch[2]]) == 101  # 103 done, 101 still in flight
    assert pq.remove([batch[0]]) == 102
    assert pq.remove([batch[1], batch[3], batch[4]]) == 106  # all done: one past the largest taken
    assert len(pq) == 0 and pq.bytes == 0


def test_put_ignores_duplicates_and_counts_bytes() -> None:
    pq = ProcessQueue()
    assert pq.put(msgs(1, 2, size=100)) == 2
    assert pq.put(msgs(2, 3, size=100)) == 1
    assert len(pq) == 3 and pq.bytes == 300
    pq.remove(msgs(9))  # unknown: no effect
    assert len(pq) == 3


@given(st.sets(st.integers(0, 10_000), min_size=1, max_size=200), st.data())
def test_commit_never_passes_an_unconsumed_message(offsets, data) -> None:
    pq = ProcessQueue()
    all_msgs = msgs(*sorted(offsets))
    pq.put(all_msgs)
    done = data.draw(st.lists(st.sampled_from(all_msgs), unique_by=lambda m: m.queue_offset))
    commit = pq.remove(done)
    left = {m.queue_offset for m in all_msgs} - {m.queue_offset for m in done}
    assert commit == (min(left) if left else max(offsets) + 1)


def test_flow_control_thresholds() -> None:
    pq = ProcessQueue()
    pq.put(msgs(*range(10), size=1000))
    assert pq.must_pause(10, 1 << 20) == "count"
    assert pq.must_pause(11, 10_000) == "size"
    assert pq.must_pause(11, 1 << 20) is None
    pq.put(msgs(3000))
    assert pq.must_pause(100, 1 << 30, max_span=2000) == "span"
    assert pq.must_pause(100, 1 << 30) is None
    pq.remove(pq.take_in_order(11))
    assert pq.must_pause(10, 1 << 20, 2000) is None


def test_expired_messages() -> None:
    pq = ProcessQueue()
    batch = msgs(*range(20))
    pq.put(batch)
    pq.mark_started(batch[:18], now=100.0)
    pq.mark_started(batch[18:], now=1000.0)
    assert pq.expired(now=500.0, timeout=900.0) == []
    old = pq.expired(now=1000.0, timeout=900.0)
    assert [m.queue_offset for m in old] == list(range(16))  # J looks at the first 16 only
    pq.remove(old)
    assert [m.queue_offset for m in pq.expired(now=1000.0, timeout=900.0)] == [16, 17]


def test_take_in_order() -> None:
    pq = ProcessQueue()
    pq.put(msgs(5, 3, 9, 1))
    assert [m.queue_offset for m in pq.take_in_order(3)] == [1, 3, 5]
    assert len(pq) == 4  # still in flight until removed
    pq.mark_started([], now=95.0)
    info = pq.info(wall_ms=1_000_000, mono=100.0)
    assert info["cachedMsgCount"] == 4 and info["commitOffset"] == 1
    assert info["lastConsumeTimestamp"] == 995_000  # monotonic 95.0 is 5 s before wall 1_000_000 ms
    assert info["transactionMsgCount"] == 0 and info["droped"] is False


@given(st.lists(st.integers(0, 500), min_size=1, max_size=100), st.data())
def test_fast_paths_agree_with_min_and_max(offsets, data) -> None:
    """Offsets normally arrive in order (O(1) commit offset); any order must still give the true minimum."""
    pq = ProcessQueue()
    for chunk_start in range(0, len(offsets), 7):
        pq.put(msgs(*offsets[chunk_start : chunk_start + 7]))
    held = sorted(set(offsets))
    assert pq.commit_offset() == held[0] and pq.span() == held[-1] - held[0]
    done = data.draw(st.lists(st.sampled_from(held), unique=True))
    left = sorted(set(held) - set(done))
    assert pq.remove(msgs(*done)) == (left[0] if left else max(held) + 1)
    assert pq.span() == (left[-1] - left[0] if left else 0)
