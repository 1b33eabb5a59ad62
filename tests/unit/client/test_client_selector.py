"""Producer queue selection: round robin, avoiding the broker that just failed, latency fault avoidance, keys."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from client.message import MessageQueue
from client.producer.selector import LatencyFaultTolerance, QueueSelector, _java_hash, select_by_key

QUEUES = [MessageQueue("T", b, i) for b in ("broker-a", "broker-b") for i in range(4)]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_round_robin_covers_every_queue() -> None:
    sel = QueueSelector()
    picked = [sel.select(QUEUES) for _ in range(len(QUEUES))]
    assert sorted(picked) == sorted(QUEUES)


def test_retry_avoids_the_last_broker_when_another_exists() -> None:
    sel = QueueSelector()
    for _ in range(20):
        assert sel.select(QUEUES, last_broker="broker-a").broker_name == "broker-b"
    only_a = [q for q in QUEUES if q.broker_name == "broker-a"]
    assert sel.select(only_a, last_broker="broker-a").broker_name == "broker-a"  # no other choice


def test_latency_fault_avoidance_with_an_injected_clock() -> None:
    clock = Clock()
    fault = LatencyFaultTolerance(clock)
    sel = QueueSelector(fault)
    fault.update("broker-a", 600)  # >= 550 ms: unavailable for 30 s
    assert not fault.available("broker-a")
    assert all(sel.select(QUEUES).broker_name == "broker-b" for _ in range(10))
    clock.now += 29.9
    assert not fault.available("broker-a")
    clock.now += 0.2
    assert fault.available("broker-a")
    fault.update("broker-b", 40)  # fast: stays available
    assert fault.available("broker-b")
    fault.update("broker-a", 0, isolation=True)  # a failed send isolates the broker
    fault.update("broker-b", 0, isolation=True)
    assert not fault.available("broker-a") and not fault.available("broker-b")
    assert sel.select(QUEUES) in QUEUES  # every broker marked: still pick one


def test_slow_then_fast_clears_the_mark() -> None:
    fault = LatencyFaultTolerance(Clock())
    fault.update("b", 3000)
    assert not fault.available("b")
    fault.update("b", 10)
    assert fault.available("b")


@given(st.text(min_size=0, max_size=30))
def test_sharding_key_is_stable(key: str) -> None:
    q1 = select_by_key(QUEUES, key)
    assert q1 == select_by_key(list(QUEUES), key)
    assert q1 in QUEUES


def test_java_string_hash() -> None:
    assert _java_hash("") == 0
    assert _java_hash("hello") == 99162322
    assert _java_hash("polygenelubricants") == -2147483648  # Java's famous Integer.MIN_VALUE hash
    assert select_by_key(QUEUES, 5) == QUEUES[5]
    assert select_by_key(QUEUES, "polygenelubricants") in QUEUES  # abs(MIN_VALUE) does not break it
