"""The dispatcher runs behind the put path; a producer that never yields to the loop must not grow its backlog
without bound (the heap would grow with stored volume), and reads still see every completed put."""

from __future__ import annotations

from pathlib import Path

from _store_util import get_all, small_config

from broker.store import MessageStore
from broker.store.dispatcher import MAX_PENDING
from broker.store.request import PutRequest


async def test_backlog_stays_bounded_when_puts_never_yield(tmp_path: Path) -> None:
    store = MessageStore.open(small_config(tmp_path / "s", mapped_file_size_commit_log=1024 * 1024))
    await store.start()
    try:
        n = 3 * MAX_PENDING + 17
        most = 0
        for i in range(n):  # async-flush puts complete without suspending: the dispatcher task never runs here
            res = await store.put_message(PutRequest("B", i % 2, 0, 0, 0, ("127.0.0.1", 1), b"%d" % i, {"TAGS": "t"}))
            assert res.ok, res
            most = max(most, store.dispatcher.stats()["dispatchPending"])
        assert 0 < most < MAX_PENDING, most
        assert [m.body for m in get_all(store, "B", 0)] == [b"%d" % i for i in range(0, n, 2)]
        assert len(get_all(store, "B", 1)) == n // 2
    finally:
        await store.close()


async def test_a_put_to_a_queue_with_waiters_dispatches_before_it_returns(tmp_path: Path) -> None:
    """A listener's ``waiting`` probe says who waits on which queue: a put to such a queue calls the listener (and
    dispatches what was pending before it, in order) before it returns; a put to any other queue leaves its
    dispatch to the scheduled drain."""
    store = MessageStore.open(small_config(tmp_path / "s", mapped_file_size_commit_log=1024 * 1024))
    await store.start()
    arrived: list[tuple[str, int, int]] = []
    store.add_arrival_listener(
        lambda a: arrived.append((a.topic, a.queue_id, a.next_offset)),
        lambda topic, qid: 1 if (topic, qid) == ("W", 1) else 0,
    )

    async def put(topic: str, qid: int) -> None:
        res = await store.put_message(PutRequest(topic, qid, 0, 0, 0, ("127.0.0.1", 1), b"x", {"TAGS": "t"}))
        assert res.ok, res

    try:
        await put("W", 0)  # nobody waits on queue 0: dispatched later, by the scheduled drain
        assert arrived == []
        assert store.dispatcher.pending
        await put("W", 1)  # queue 1 has a waiter: everything pending is dispatched now, in commit-log order
        assert arrived == [("W", 0, 1), ("W", 1, 1)]
        assert not store.dispatcher.pending
        await put("W", 1)
        assert arrived[-1] == ("W", 1, 2)
    finally:
        await store.close()


async def test_a_topic_listener_hears_its_topic_only_and_after_the_others(tmp_path: Path) -> None:
    """A listener added with ``topic`` is called for that topic's messages only (single puts and batches), after
    every listener of all topics, whatever order they were added in; the others hear every topic."""
    store = MessageStore.open(small_config(tmp_path / "s", mapped_file_size_commit_log=1024 * 1024))
    await store.start()
    heard: list[tuple[str, str, int]] = []
    store.add_arrival_listener(lambda a: heard.append(("own", a.topic, a.next_offset)), topic="Mine")
    store.add_arrival_listener(lambda a: heard.append(("all", a.topic, a.next_offset)))
    try:
        for topic in ("Other", "Mine", "Other"):
            res = await store.put_message(PutRequest(topic, 0, 0, 0, 0, ("127.0.0.1", 1), b"x", {"TAGS": "t"}))
            assert res.ok, res
        store.dispatcher.drain()
        assert heard == [("all", "Other", 1), ("all", "Mine", 1), ("own", "Mine", 1), ("all", "Other", 2)]
    finally:
        await store.close()
