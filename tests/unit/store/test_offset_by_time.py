"""SEARCH_OFFSET_BY_TIMESTAMP's answer (``get_offset_in_queue_by_time``) is J 4.9's ``getOffsetInQueueByTime``: a
message stored at exactly the time, else the nearer neighbour (the earlier on a tie); before every message the min
offset, after every message the LAST message's offset (max offset - 1), which resetOffsetByTime and
consume-from-timestamp then start from."""

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


async def test_boundaries_exact_and_nearest(tmp_path: Path) -> None:
    clock = Clock()
    store = MessageStore.open(small_config(tmp_path / "s"), clock=clock)
    try:
        for i in range(11):  # message i stored at T0 + 100 * i
            clock.ms = T0 + 100 * i
            await put(store, T, 0, b"m%d" % i)
        assert store.get_max_offset_in_queue(T, 0) == 11
        assert [store.get_message_store_timestamp(T, 0, i) for i in (0, 10)] == [T0, T0 + 1000]
        by_time = store.get_offset_in_queue_by_time_sync
        assert by_time(T, 0, T0 + 10**9) == 10  # after every message: the last one, not the max offset (11)
        assert by_time(T, 0, T0 + 1001) == 10
        assert by_time(T, 0, T0 - 10**6) == 0  # before every message: the first
        assert [by_time(T, 0, T0 + 100 * i) for i in range(11)] == list(range(11))  # exact store times
        assert by_time(T, 0, T0 + 349) == 3  # nearer to message 3 (T0+300) than to 4 (T0+400)
        assert by_time(T, 0, T0 + 351) == 4
        assert by_time(T, 0, T0 + 350) == 3  # a tie: the earlier
        assert by_time(T, 1, T0) == 0  # no such queue
    finally:
        await store.close()
