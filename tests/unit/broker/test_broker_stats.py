"""BrokerStats and its windows with a controlled clock: rates over J's windows from once-a-second samples, a new
item's window starting when it first counted, the message-size buckets, and pruning of deleted topics/groups."""

from __future__ import annotations

from broker.services.broker_stats import (
    BROKER_PUT_NUMS,
    GROUP_GET_NUMS,
    IN_BUCKETS,
    IN_SUM,
    TOPIC_PUT_NUMS,
    BrokerStats,
    message_type,
)


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_rates_follow_the_windows() -> None:
    clock = Clock()
    st = BrokerStats(clock)
    # 10 messages per second for 120 s, then 60 s of nothing
    for _ in range(120):
        clock.t += 1
        st.on_put("T", "normal", 10, 1000)
        st.sample()
    assert st.rate(TOPIC_PUT_NUMS, "T", 60) == 10.0
    assert st.rate(BROKER_PUT_NUMS, "", 10) == 10.0
    for _ in range(30):
        clock.t += 1
        st.sample()
    assert st.rate(TOPIC_PUT_NUMS, "T", 60) == 5.0  # half of the last minute was idle
    assert st.rate(BROKER_PUT_NUMS, "", 10) == 0.0
    series = st.series(TOPIC_PUT_NUMS, "T")
    assert series is not None and series.increase(86400) == 1200
    assert st.tps_windows(BROKER_PUT_NUMS) == "0.00 5.00 8.00"


def test_a_new_item_starts_when_it_first_counted() -> None:
    clock = Clock()
    st = BrokerStats(clock)
    st.sample()
    clock.t += 0.9
    st.on_get("G", "T", 0, 30, 3000, 30)  # first pull 0.1 s before the next tick
    clock.t += 0.1
    st.sample()
    for _ in range(3):
        clock.t += 1
        st.on_get("G", "T", 0, 30, 3000, 60)
        st.sample()
    # 120 messages over the 3.1 s since the row appeared (not over 4 s, not over the first tick's 0.1 s)
    assert round(st.group_get_tps("G", "T"), 1) == round(120 / 3.1, 1)
    assert st.pull_offsets[("G", "T", 0)] == 60


def test_message_size_buckets_and_types() -> None:
    st = BrokerStats(Clock())
    st.on_put("T", "normal", 1, 1024)  # le=1024
    st.on_put("T", "normal", 2, 2 * 5000)  # average 5000: le=524288
    row = st.topic_in[("T", "normal")]
    assert row[IN_BUCKETS] == 1 and row[IN_BUCKETS + 2] == 1 and row[IN_SUM] == 1024 + 5000
    assert message_type("") == "normal"
    assert message_type("DELAY\x013\x02") == "delay"
    assert message_type("TRAN_MSG\x01true\x02") == "transaction"
    assert message_type("__SHARDINGKEY\x01k\x02") == "fifo"


def test_prune_drops_deleted_topics_and_groups() -> None:
    clock = Clock()
    st = BrokerStats(clock)
    st.on_put("Keep", "normal", 1, 100)
    st.on_put("Gone", "normal", 1, 100)
    st.on_get("G1", "Keep", 0, 1, 100, 1)
    st.on_get("G2", "Keep", 0, 1, 100, 1)
    st.on_dlq("G2", "Keep")
    st.sample()
    assert st.prune(lambda t: t == "Keep", lambda g: g == "G1") == 4
    assert set(st.topic_in) == {("Keep", "normal")}
    assert set(st.group_out) == {("Keep", "G1")} and not st.dlq
    clock.t += 1
    st.sample()
    assert st.series(TOPIC_PUT_NUMS, "Gone") is None and st.series(GROUP_GET_NUMS, "Keep@G2") is None
