"""SEARCH_OFFSET_BY_TIMESTAMP's answer (``get_offset_in_queue_by_time``) as Apache RocketMQ 5.5.0 gives it (checked
against it by tests/reference/test_apache_offset_by_time.py): LOWER (the default, and resetOffsetByTime's) is the
first message stored at or after the time, the max offset after every message; UPPER is the last message stored at
or before it, max offset - 1 after every message, 0 before every message."""

from __future__ import annotations

from pathlib import Path

from _store_util import put, small_config

from broker.store import MessageStore

T = "TopicByTime"
T0 = 1_800_000_000_000  # ms


class Clock:
    def __init__(self) -> None:
        self.ms = T0

    def __call__(self) -> float:
        return self.ms / 1000


async def test_lower_and_upper_boundaries(tmp_path: Path) -> None:
    clock = Clock()
    store = MessageStore.open(small_config(tmp_path / "s"), clock=clock)
    try:
        # offsets 0-2 at T0, 100, 200; offsets 3-5 all at T0+300 (one store time, like a batch); 6-8 at 400, 500, 600
        times = [0, 100, 200, 300, 300, 300, 400, 500, 600]
        for i, t in enumerate(times):
            clock.ms = T0 + t
            await put(store, T, 0, b"m%d" % i)
        assert store.get_max_offset_in_queue(T, 0) == 9
        assert [store.get_message_store_timestamp(T, 0, i) for i in (0, 8)] == [T0, T0 + 600]

        def lower(t: int) -> int:
            return store.get_offset_in_queue_by_time_sync(T, 0, T0 + t)

        def upper(t: int) -> int:
            return store.get_offset_in_queue_by_time_sync(T, 0, T0 + t, upper=True)

        # before every message
        assert (lower(-(10**6)), upper(-(10**6)), lower(-1), upper(-1)) == (0, 0, 0, 0)
        # after every message: LOWER the max offset (the end of the range), UPPER the last message
        assert (lower(10**9), upper(10**9), lower(601), upper(601)) == (9, 8, 9, 8)
        # at a store time: LOWER the first message stored then, UPPER the last
        assert [lower(t) for t in (0, 100, 200, 300, 400, 500, 600)] == [0, 1, 2, 3, 6, 7, 8]
        assert [upper(t) for t in (0, 100, 200, 300, 400, 500, 600)] == [0, 1, 2, 5, 6, 7, 8]
        # between store times: LOWER the next message, UPPER the previous one, however near either is
        assert [lower(t) for t in (1, 99, 250, 299, 301, 399)] == [1, 1, 3, 3, 6, 6]
        assert [upper(t) for t in (1, 99, 250, 299, 301, 399)] == [0, 0, 2, 2, 5, 5]
        # no such queue, no such topic
        assert store.get_offset_in_queue_by_time_sync(T, 1, T0) == 0
        assert store.get_offset_in_queue_by_time_sync("NoSuchTopic", 0, T0, upper=True) == 0
        assert await store.get_offset_in_queue_by_time(T, 0, T0 + 300, upper=True) == 5
    finally:
        await store.close()
