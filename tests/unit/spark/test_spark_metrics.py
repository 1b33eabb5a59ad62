"""offsets_behind: Kafka's lag figures from a query progress of the rocketmq source."""

from __future__ import annotations

import json

from spark_connector.metrics import offsets_behind


def test_lag_per_queue_and_summary() -> None:
    end = {"t": {"b": {"0": 10, "1": 4}}}
    latest = {"t": {"b": {"0": 10, "1": 9, "2": 3}}}
    progress = {"sources": [{"endOffset": json.dumps(end), "latestOffset": json.dumps(latest)}, {"endOffset": "x"}]}
    lag = offsets_behind(progress)
    assert lag["perQueue"] == {"t/b/0": 0, "t/b/1": 5, "t/b/2": 3}
    assert (lag["minOffsetsBehindLatest"], lag["maxOffsetsBehindLatest"]) == (0, 5)
    assert lag["avgOffsetsBehindLatest"] == 8 / 3
    assert offsets_behind({"endOffset": end, "latestOffset": latest})["perQueue"]["t/b/1"] == 5


def test_no_offsets_yet() -> None:
    assert offsets_behind({"sources": [{"endOffset": None, "latestOffset": None}]}) == {
        "minOffsetsBehindLatest": 0,
        "maxOffsetsBehindLatest": 0,
        "avgOffsetsBehindLatest": 0.0,
        "perQueue": {},
    }
