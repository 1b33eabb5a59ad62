"""Allocation strategies: every queue goes to exactly one consumer, the split does not depend on the order each
consumer learned the lists in, and the averaging strategies give sizes that differ by at most one."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from client.consumer.allocate import (
    allocate_averagely,
    allocate_averagely_by_circle,
    make_by_machine_room,
    make_consistent_hash,
)
from client.message import MessageQueue

STRATEGIES = {
    "averagely": allocate_averagely,
    "by_circle": allocate_averagely_by_circle,
    "consistent_hash": make_consistent_hash(),
    "consistent_hash_3": make_consistent_hash(3),
}

queues_st = st.lists(
    st.builds(
        MessageQueue,
        st.sampled_from(["TopicA", "TopicB"]),
        st.sampled_from(["broker-a", "broker-b", "broker-c"]),
        st.integers(0, 15),
    ),
    min_size=1,
    max_size=48,
    unique=True,
)
cids_st = st.lists(
    st.from_regex(r"10\.0\.0\.[0-9]{1,3}@[0-9]{1,5}", fullmatch=True), min_size=1, max_size=9, unique=True
)


def _split(strategy, mqs, cids):  # type: ignore[no-untyped-def]
    return {c: strategy("G", c, mqs, cids) for c in cids}


@pytest.mark.parametrize("name", sorted(STRATEGIES))
@settings(max_examples=150, deadline=None)
@given(mqs=queues_st, cids=cids_st, seed=st.integers(0, 2**32))
def test_every_queue_to_exactly_one_consumer_in_any_order(name: str, mqs, cids, seed: int) -> None:  # type: ignore[no-untyped-def]
    strategy = STRATEGIES[name]
    split = _split(strategy, mqs, cids)
    assigned = [q for qs in split.values() for q in qs]
    assert sorted(assigned) == sorted(mqs), "each queue exactly once across the group"
    # each consumer sees the two lists in its own order (and maybe with repeats): same answer
    rng = random.Random(seed)
    for c in cids:
        mqs2 = list(mqs) + rng.sample(mqs, k=min(2, len(mqs)))
        cids2 = list(cids)
        rng.shuffle(mqs2)
        rng.shuffle(cids2)
        assert sorted(strategy("G", c, mqs2, cids2)) == sorted(split[c])


@pytest.mark.parametrize("strategy", [allocate_averagely, allocate_averagely_by_circle])
@settings(max_examples=150, deadline=None)
@given(mqs=queues_st, cids=cids_st)
def test_averaging_sizes_differ_by_at_most_one(strategy, mqs, cids) -> None:  # type: ignore[no-untyped-def]
    sizes = [len(qs) for qs in _split(strategy, mqs, cids).values()]
    assert max(sizes) - min(sizes) <= 1
    assert sum(sizes) == len(mqs)


def test_averagely_contiguous_blocks_like_java() -> None:
    mqs = [MessageQueue("T", "b", i) for i in range(8)]
    cids = ["c1", "c2", "c3"]
    split = _split(allocate_averagely, mqs, cids)
    assert [[q.queue_id for q in split[c]] for c in cids] == [[0, 1, 2], [3, 4, 5], [6, 7]]
    circle = _split(allocate_averagely_by_circle, mqs, cids)
    assert [[q.queue_id for q in circle[c]] for c in cids] == [[0, 3, 6], [1, 4, 7], [2, 5]]


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_consumer_not_in_list_or_empty_inputs_get_nothing(name: str) -> None:
    strategy = STRATEGIES[name]
    mqs = [MessageQueue("T", "b", i) for i in range(4)]
    assert strategy("G", "stranger", mqs, ["c1", "c2"]) == []
    assert strategy("G", "c1", [], ["c1"]) == []
    assert strategy("G", "c1", mqs, []) == []


@settings(max_examples=100, deadline=None)
@given(mqs=queues_st, cids=cids_st)
def test_machine_room_covers_only_the_rooms_queues_once(mqs, cids) -> None:  # type: ignore[no-untyped-def]
    renamed = [
        MessageQueue(q.topic, f"{'room1' if q.broker_name != 'broker-c' else 'room2'}@{q.broker_name}", q.queue_id)
        for q in mqs
    ]
    strategy = make_by_machine_room({"room1"})
    assigned = [q for qs in _split(strategy, renamed, cids).values() for q in qs]
    assert sorted(assigned) == sorted(q for q in renamed if q.broker_name.startswith("room1@"))


def test_consistent_hash_moves_few_queues_when_one_joins() -> None:
    mqs = [MessageQueue("T", f"b{b}", i) for b in range(4) for i in range(16)]
    cids = [f"c{i}" for i in range(5)]
    strategy = make_consistent_hash()
    before = {q: c for c, qs in _split(strategy, mqs, cids).items() for q in qs}
    after = {q: c for c, qs in _split(strategy, mqs, [*cids, "c5"]).items() for q in qs}
    moved = [q for q in mqs if before[q] != after[q]]
    assert all(after[q] == "c5" for q in moved), "only queues taken by the newcomer move"
