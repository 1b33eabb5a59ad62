"""Body codecs of the name server (namesrv.wire): plain and compressed RegisterBrokerBody, routes, bad input."""

from __future__ import annotations

import json
import struct
import zlib

import pytest

from namesrv.route_table import BrokerData, DataVersion, QueueData, TopicConfig, TopicRoute
from namesrv.wire import (
    BodyError,
    decode_data_version,
    decode_register_body,
    encode_register_body,
    encode_route,
)

TOPICS = {"T1": TopicConfig("T1", 4, 4, 6), "%RETRY%g": TopicConfig("%RETRY%g", 1, 1, 6)}


@pytest.mark.parametrize("compressed", [False, True])
def test_register_body_round_trip(compressed: bool) -> None:
    body = encode_register_body(TOPICS, DataVersion(1700000000000, 3), ["fs:1"], compressed=compressed)
    reg = decode_register_body(body, compressed)
    assert reg.data_version == DataVersion(1700000000000, 3)
    assert reg.topic_configs == TOPICS
    assert reg.filter_servers == ["fs:1"]


def test_register_body_j_sample_with_extra_keys() -> None:
    body = (
        b'{"topicConfigSerializeWrapper":{"topicConfigTable":{"TopicTest":{"topicName":"TopicTest","readQueueNums":4,'
        b'"writeQueueNums":4,"perm":6,"topicFilterType":"SINGLE_TAG","topicSysFlag":0,"order":false,"attributes":{}}},'
        b'"dataVersion":{"timestamp":1700000000000,"counter":3,"stateVersion":0}},"filterServerList":[]}'
    )
    reg = decode_register_body(body, False)
    assert reg.topic_configs["TopicTest"].write_queue_nums == 4
    assert reg.data_version == DataVersion(1700000000000, 3)


def test_empty_register_body_is_an_empty_registration() -> None:
    reg = decode_register_body(b"", False)
    assert reg.data_version is None and reg.topic_configs == {}


@pytest.mark.parametrize(
    ("body", "compressed", "needle"),
    [
        (b"{not json", False, "RegisterBrokerBody is not valid"),
        (b'{"topicConfigSerializeWrapper":{"topicConfigTable":{"T":{"readQueueNums":"x"}}}}', False, "readQueueNums"),
        (b"plainly not zlib", True, "not a zlib stream"),
        (zlib.compress(struct.pack(">i", 1000) + b"{}"), True, "out of range"),
        (
            zlib.compress(struct.pack(">i", 2) + b"{}" + struct.pack(">i", 1) + struct.pack(">i", 3) + b"a b"),
            True,
            "does not have 5 fields",
        ),
    ],
)
def test_bad_register_bodies_say_what_is_wrong(body: bytes, compressed: bool, needle: str) -> None:
    with pytest.raises(BodyError, match=needle):
        decode_register_body(body, compressed)


def test_zip_bomb_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("namesrv.wire.MAX_INFLATED", 1024)
    with pytest.raises(BodyError, match="inflates to more than"):
        decode_register_body(zlib.compress(b"\0" * 10_000), True)


def test_route_json_has_quoted_broker_ids_and_client_shape() -> None:
    route = TopicRoute(
        [QueueData("broker-a", 4, 4, 6, 0)],
        [BrokerData("DefaultCluster", "broker-a", {0: "127.0.0.1:10911", 1: "127.0.0.1:10921"})],
        {},
    )
    raw = encode_route(route, None)
    assert b'"brokerAddrs":{"0":"127.0.0.1:10911","1":"127.0.0.1:10921"}' in raw
    assert json.loads(raw) == {
        "orderTopicConf": None,
        "queueDatas": [
            {"brokerName": "broker-a", "readQueueNums": 4, "writeQueueNums": 4, "perm": 6, "topicSysFlag": 0}
        ],
        "brokerDatas": [
            {
                "cluster": "DefaultCluster",
                "brokerName": "broker-a",
                "brokerAddrs": {"0": "127.0.0.1:10911", "1": "127.0.0.1:10921"},
            }
        ],
        "filterServerTable": {},
    }


def test_data_version_decoding() -> None:
    assert decode_data_version(b'{"counter":2,"timestamp":9}') == DataVersion(9, 2)
    with pytest.raises(BodyError):
        decode_data_version(b"")
    with pytest.raises(BodyError):
        decode_data_version(b"[1]")
