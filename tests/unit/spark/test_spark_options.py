"""Options of the rocketmq Spark source and sink: defaults, parsing, and errors that name the option (no Spark)."""

from __future__ import annotations

import pytest

from spark_connector.offsets import EARLIEST, LATEST, QueueKey
from spark_connector.options import (
    DEFAULT_MAX_TRIGGER_DELAY_MS,
    OptionError,
    parse_duration_ms,
    parse_sink_options,
    parse_source_options,
)

NS = {"namesrvAddr": "127.0.0.1:9876"}


def src(streaming: bool = True, **kw: str) -> dict[str, str]:
    # Spark lower-cases option keys before a data source sees them.
    return {k.lower(): v for k, v in {**NS, **kw}.items()}


def test_defaults_streaming_and_batch() -> None:
    o = parse_source_options(src(subscribe="a, b,a"), streaming=True)
    assert o.subscribe == ("a", "b")
    assert o.start.kind == "latest"
    assert o.end.kind == "latest"
    assert o.fail_on_data_loss and o.include_properties
    assert o.pull_batch_size == 256 and o.poll_timeout_ms == 10_000 and o.pulls_in_flight == 4
    assert o.trigger_delay_ms == DEFAULT_MAX_TRIGGER_DELAY_MS
    assert parse_source_options(src(subscribe="a"), streaming=False).start.kind == "earliest"


def test_full_option_set() -> None:
    o = parse_source_options(
        src(
            subscribePattern="orders-.*",
            startingOffsets='{"orders-1": {"broker-a": {"0": 5, "1": -2, "2": -1}}}',
            maxOffsetsPerTrigger="100",
            minOffsetsPerTrigger="10",
            maxTriggerDelay="30s",
            failOnDataLoss="false",
            includeProperties="False",
            consumerGroup="spark-lag",
            pullBatchSize="64",
            pollTimeoutMs="2000",
            minPartitions="4",
            maxRecordsPerPartition="1000",
        ),
        streaming=True,
    )
    assert o.matches("orders-1") and not o.matches("orders") and not o.matches("xorders-1")
    assert o.start.kind == "offsets"
    assert o.start.offsets == {
        QueueKey("orders-1", "broker-a", 0): 5,
        QueueKey("orders-1", "broker-a", 1): EARLIEST,
        QueueKey("orders-1", "broker-a", 2): LATEST,
    }
    assert (o.max_offsets_per_trigger, o.min_offsets_per_trigger, o.trigger_delay_ms) == (100, 10, 30_000)
    assert not o.fail_on_data_loss and not o.include_properties
    assert o.consumer_group == "spark-lag"
    assert (o.pull_batch_size, o.poll_timeout_ms, o.min_partitions, o.max_records_per_partition) == (64, 2000, 4, 1000)


def test_timestamps() -> None:
    o = parse_source_options(src(subscribe="t", startingTimestamp="1700000000000"), streaming=True)
    assert (o.start.kind, o.start.timestamp) == ("timestamp", 1_700_000_000_000)
    o = parse_source_options(
        src(subscribe="t", startingOffsetsByTimestamp='{"t": {"b": {"3": 1700000000000}}}'), streaming=True
    )
    assert o.start.kind == "timestamp" and o.start.offsets == {QueueKey("t", "b", 3): 1_700_000_000_000}


def test_batch_ending_offsets() -> None:
    o = parse_source_options(src(subscribe="t", endingOffsets='{"t": {"b": {"0": 7, "1": -1}}}'), streaming=False)
    assert o.end.kind == "offsets" and o.end.offsets == {QueueKey("t", "b", 0): 7, QueueKey("t", "b", 1): LATEST}


@pytest.mark.parametrize(
    ("opts", "streaming", "named"),
    [
        ({"subscribe": "t"}, True, "namesrvAddr"),  # missing
        ({"namesrvAddr": "localhost", "subscribe": "t"}, True, "namesrvAddr"),
        ({**NS}, True, "subscribe"),
        ({**NS, "subscribe": "t", "subscribePattern": "t.*"}, True, "subscribePattern"),
        ({**NS, "subscribePattern": "(unclosed"}, True, "subscribePattern"),
        ({**NS, "subscribe": "bad topic!"}, True, "subscribe"),
        ({**NS, "subscribe": "t", "maxOffsetsPerTrigger": "0"}, True, "maxOffsetsPerTrigger"),
        ({**NS, "subscribe": "t", "maxOffsetsPerTrigger": "ten"}, True, "maxOffsetsPerTrigger"),
        ({**NS, "subscribe": "t", "maxOffsetPerTrigger": "10"}, True, "maxOffsetPerTrigger"),  # typo → unknown
        ({**NS, "subscribe": "t", "topic": "t"}, True, "topic"),  # a sink option on the source
        ({**NS, "subscribe": "t", "failOnDataLoss": "maybe"}, True, "failOnDataLoss"),
        ({**NS, "subscribe": "t", "startingOffsets": "newest"}, True, "startingOffsets"),
        ({**NS, "subscribe": "t", "startingOffsets": '{"other": {"b": {"0": 1}}}'}, True, "startingOffsets"),
        ({**NS, "subscribe": "t", "startingOffsets": '{"t": {"b": {"0": -3}}}'}, True, "startingOffsets"),
        ({**NS, "subscribe": "t", "startingOffsets": "earliest", "startingTimestamp": "5"}, True, "startingTimestamp"),
        ({**NS, "subscribe": "t", "startingTimestamp": "-5"}, True, "startingTimestamp"),
        ({**NS, "subscribe": "t", "startingOffsets": "latest"}, False, "startingOffsets"),
        ({**NS, "subscribe": "t", "endingOffsets": "latest"}, True, "endingOffsets"),
        ({**NS, "subscribe": "t", "endingOffsets": "earliest"}, False, "endingOffsets"),
        ({**NS, "subscribe": "t", "endingOffsets": '{"t": {"b": {"0": -2}}}'}, False, "endingOffsets"),
        ({**NS, "subscribe": "t", "maxOffsetsPerTrigger": "5"}, False, "maxOffsetsPerTrigger"),
        ({**NS, "subscribe": "t", "maxTriggerDelay": "5m"}, True, "maxTriggerDelay"),
        ({**NS, "subscribe": "t", "minOffsetsPerTrigger": "5", "maxTriggerDelay": "soon"}, True, "maxTriggerDelay"),
        ({**NS, "subscribe": "t", "minOffsetsPerTrigger": "50", "maxOffsetsPerTrigger": "5"}, True, "minOffsetsPer"),
        ({**NS, "subscribe": "t", "consumerGroup": "a group"}, True, "consumerGroup"),
        ({**NS, "subscribe": "t", "pullBatchSize": "0"}, True, "pullBatchSize"),
    ],
)
def test_bad_options_name_the_option(opts: dict[str, str], streaming: bool, named: str) -> None:
    with pytest.raises(OptionError) as info:
        parse_source_options({k.lower(): v for k, v in opts.items()}, streaming=streaming)
    assert named.lower() in str(info.value).lower()
    assert str(info.value).startswith("rocketmq source: ")


def test_unknown_option_suggests_the_spelling() -> None:
    with pytest.raises(OptionError, match="did you mean 'maxOffsetsPerTrigger'"):
        parse_source_options(src(subscribe="t", maxOffsetPerTrigger="1"), streaming=True)


def test_spark_injected_keys_are_ignored() -> None:
    parse_source_options(src(subscribe="t", path="/x", checkpointLocation="/c"), streaming=True)
    parse_sink_options({"namesrvaddr": "h:1", "checkpointlocation": "/c", "path": "/p"})


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("500ms", 500),
        ("30s", 30_000),
        ("15m", 900_000),
        ("1h", 3_600_000),
        ("2d", 172_800_000),
        ("250", 250),
        (" 3 min ", 180_000),
    ],
)
def test_durations(text: str, ms: int) -> None:
    assert parse_duration_ms(text) == ms


def test_sink_options() -> None:
    o = parse_sink_options({"namesrvaddr": "a:1;b:2", "topic": "out", "sendtimeoutms": "500"})
    assert (o.namesrv_addrs, o.topic, o.send_timeout_ms, o.producer_group) == (
        ["a:1", "b:2"],
        "out",
        500,
        "spark-rocketmq-sink",
    )
    for bad, named in [
        ({"topic": "x"}, "namesrvAddr"),
        ({"namesrvaddr": "a:1", "subscribe": "t"}, "subscribe"),
        ({"namesrvaddr": "a:1", "bogus": "1"}, "bogus"),
        ({"namesrvaddr": "a:1", "sendtimeoutms": "-1"}, "sendTimeoutMs"),
    ]:
        with pytest.raises(OptionError, match=named):
            parse_sink_options(bad)


def test_assign() -> None:
    o = parse_source_options(src(assign='{"t": {"broker-a": [1, 0]}, "u": [2]}'), streaming=True)
    assert o.assigned == (("t", "broker-a", 0), ("t", "broker-a", 1), ("u", None, 2))
    assert o.matches("t") and o.matches("u") and not o.matches("v")
    assert o.is_assigned("t", "broker-a", 1) and not o.is_assigned("t", "broker-b", 1)
    assert o.is_assigned("u", "any-broker", 2) and not o.is_assigned("u", "any-broker", 1)
    for bad in ('{"t": []}', '{"t": {"b": [-1]}}', "[1]", '{"t": "0"}', "not json"):
        with pytest.raises(OptionError, match="'assign'"):
            parse_source_options(src(assign=bad), streaming=True)
    with pytest.raises(OptionError, match="exactly one of"):
        parse_source_options(src(assign='{"t": [0]}', subscribe="t"), streaming=True)


def test_sub_expression() -> None:
    assert parse_source_options(src(subscribe="t"), streaming=True).sub_expression == "*"
    o = parse_source_options(src(subscribe="t", subExpression="a||b "), streaming=True)
    assert o.sub_expression == "a || b"
    with pytest.raises(OptionError, match="subExpression"):
        parse_source_options(src(subscribe="t", subExpression="a || || b"), streaming=True)


def test_ending_and_unlisted_options() -> None:
    o = parse_source_options(src(subscribe="t", endingTimestamp="1000"), streaming=False)
    assert o.end.kind == "timestamp" and o.end.timestamp == 1000
    o = parse_source_options(src(subscribe="t", endingOffsetsByTimestamp='{"t": {"b": {"0": 5}}}'), streaming=False)
    assert o.end.kind == "timestamp" and o.end.offsets == {QueueKey("t", "b", 0): 5}
    with pytest.raises(OptionError, match="contradict"):
        parse_source_options(src(subscribe="t", endingTimestamp="1", endingOffsets="latest"), streaming=False)
    with pytest.raises(OptionError, match="'endingTimestamp' is for batch queries"):
        parse_source_options(src(subscribe="t", endingTimestamp="1"), streaming=True)
    o = parse_source_options(
        src(subscribe="t", startingOffsets='{"t": {"b": {"0": 5}}}', startingOffsetsForUnlistedQueues="latest"),
        streaming=True,
    )
    assert o.start.unlisted == "latest"
    with pytest.raises(OptionError, match="startingOffsetsForUnlistedQueues"):
        parse_source_options(src(subscribe="t", startingOffsetsForUnlistedQueues="middle"), streaming=True)


def test_fetch_retry_backoff_doubles_up_to_ten_seconds() -> None:
    o = parse_source_options(src(subscribe="t", fetchRetries="7", fetchRetryBackoffMs="1000"), streaming=True)
    assert o.fetch_backoff_s == [1, 2, 4, 8, 10, 10, 10]
    assert parse_source_options(src(subscribe="t", fetchRetries="0"), streaming=True).fetch_backoff_s == []
