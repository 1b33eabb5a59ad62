"""Micro-batch planning of the rocketmq Spark source: rate limits, the min-rows gate, data loss, task ranges."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spark_connector.offsets import QueueKey
from spark_connector.planning import (
    QueueBounds,
    QueueRange,
    TriggerGate,
    backlog,
    cap_at,
    find_data_loss,
    next_end,
    plan_ranges,
)

Q = [QueueKey("t", "broker-a", i) for i in range(8)]

starts_and_latest = st.lists(st.tuples(st.integers(0, 1000), st.integers(0, 1000)), min_size=1, max_size=8).map(
    lambda pairs: ({Q[i]: s for i, (s, _) in enumerate(pairs)}, {Q[i]: s + d for i, (s, d) in enumerate(pairs)})
)


@given(starts_and_latest, st.integers(1, 3000))
def test_max_rows_is_exact_and_never_past_latest(
    sl: tuple[dict[QueueKey, int], dict[QueueKey, int]], limit: int
) -> None:
    start, latest = sl
    end = next_end(start, latest, limit)
    assert set(end) == set(latest)
    for q in latest:
        assert start[q] <= end[q] <= latest[q]
    assert backlog(start, end) == min(limit, backlog(start, latest))


def test_proportional_split_with_remainder() -> None:
    start = {Q[0]: 0, Q[1]: 0, Q[2]: 0}
    latest = {Q[0]: 90, Q[1]: 9, Q[2]: 1}
    end = next_end(start, latest, 10)
    assert end == {Q[0]: 9, Q[1]: 1, Q[2]: 0}
    # Repeated batches drain every queue: no starvation.
    seen = dict(start)
    for _ in range(10):
        seen = next_end(seen, latest, 10)
    assert seen == latest


def test_no_limit_reads_all_and_new_queues_start_at_zero() -> None:
    assert next_end({Q[0]: 5}, {Q[0]: 9, Q[1]: 3}) == {Q[0]: 9, Q[1]: 3}


def test_vanished_and_regressed_queues_keep_their_start() -> None:
    end = next_end({Q[0]: 5, Q[1]: 7}, {Q[1]: 2, Q[2]: 4})
    assert end == {Q[0]: 5, Q[1]: 7, Q[2]: 4}


def test_cap_at_available_now_target() -> None:
    assert cap_at({Q[0]: 10, Q[1]: 10, Q[2]: 3}, {Q[0]: 6, Q[1]: 12}) == {Q[0]: 6, Q[1]: 10}


def test_trigger_gate() -> None:
    gate = TriggerGate(min_rows=10, max_delay_ms=1000)
    assert not gate.admit(5, now_ms=0)  # first look starts the clock
    assert not gate.admit(9, now_ms=500)
    assert gate.admit(10, now_ms=600)  # enough rows
    assert not gate.admit(3, now_ms=1500)
    assert gate.admit(3, now_ms=1600)  # delay passed since the last batch
    assert not gate.admit(0, now_ms=99_999)  # nothing waiting is never a batch


def test_find_data_loss() -> None:
    bounds = {Q[0]: QueueBounds(10, 20), Q[1]: QueueBounds(0, 5), Q[2]: QueueBounds(3, 9), Q[3]: QueueBounds(0, 0)}
    losses = find_data_loss({Q[0]: 4, Q[1]: 8, Q[3]: 0}, bounds)
    assert [(d.queue, d.start, d.end) for d in losses] == [(Q[0], 4, 10), (Q[1], 5, 8), (Q[2], 0, 3)]
    assert "expired" in str(losses[0]) and "t/broker-a/0" in str(losses[0])
    assert "beyond" in str(losses[1])


def test_plan_ranges_one_per_non_empty_queue() -> None:
    ranges = plan_ranges({Q[0]: 0, Q[1]: 5, Q[2]: 9}, {Q[0]: 4, Q[1]: 5, Q[2]: 3, Q[3]: 2})
    assert ranges == [QueueRange("t", "broker-a", 0, 0, 4), QueueRange("t", "broker-a", 3, 0, 2)]


@pytest.mark.parametrize(("max_records", "min_partitions", "count"), [(10, None, 13), (None, 6, 6), (50, 20, 20)])
def test_plan_ranges_split(max_records: int | None, min_partitions: int | None, count: int) -> None:
    start = {Q[0]: 100, Q[1]: 0}
    end = {Q[0]: 200, Q[1]: 25}
    ranges = plan_ranges(start, end, max_records=max_records, min_partitions=min_partitions)
    assert len(ranges) == count
    if max_records:
        assert all(r.size <= max_records for r in ranges)
    # Pieces tile each queue's range exactly.
    for q in (Q[0], Q[1]):
        pieces = [r for r in ranges if r.key == q]
        assert pieces[0].start == start[q] and pieces[-1].end == end[q]
        assert all(a.end == b.start for a, b in itertools.pairwise(pieces))


def test_split_never_makes_empty_ranges() -> None:
    ranges = plan_ranges({Q[0]: 0}, {Q[0]: 3}, min_partitions=10)
    assert [r.size for r in ranges] == [1, 1, 1]
