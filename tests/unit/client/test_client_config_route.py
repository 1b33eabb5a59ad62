"""Client configuration, client ids, topic routes and the broker→client body parsers."""

from __future__ import annotations

import os

import pytest

from client import ClientInstance, Producer, PushConsumer
from client.config import ClientConfig, PushConsumerConfig, parse_namesrv, split_options
from client.message import MessageQueue
from client.route import TopicRoute
from protocol.bodies import decode_reset_offset_body, encode_reset_offset_body


def test_namesrv_list() -> None:
    assert parse_namesrv("a:9876;b:9876") == ["a:9876", "b:9876"]
    assert parse_namesrv(" a:1 , b:2 ;") == ["a:1", "b:2"]
    assert ClientConfig(namesrv_addr="a:1;b:2").namesrv_addrs == ["a:1", "b:2"]
    with pytest.raises(ValueError):
        ClientConfig(namesrv_addr=" ; ")


def test_options_are_validated_and_split() -> None:
    client, push = split_options(
        {"namesrv_addr": "h:1", "instance_name": "x", "consume_from_where": "CONSUME_FROM_FIRST_OFFSET"},
        PushConsumerConfig,
    )
    assert client.instance_name == "x" and push.consume_from_where == "FIRST_OFFSET"
    with pytest.raises(ValueError, match="pull_treshold"):
        split_options({"pull_treshold": 3}, PushConsumerConfig)
    with pytest.raises(ValueError):
        PushConsumerConfig(message_model="BOTH")
    with pytest.raises(ValueError):
        PushConsumerConfig(pull_batch_size=64, pull_threshold_for_queue=10)
    assert PushConsumerConfig().effective_max_reconsume_times == 16
    assert PushConsumerConfig().threshold_bytes == 100 * 1024 * 1024


def test_client_ids_are_ip_at_pid_and_unique_in_the_process() -> None:
    a = ClientInstance("h:1", client_ip="10.1.1.1")
    b = ClientInstance("h:1", client_ip="10.1.1.1")
    assert a.client_id == f"10.1.1.1@{os.getpid()}"
    assert b.client_id == f"10.1.1.1@{os.getpid()}#2"
    named = ClientInstance("h:1", client_ip="10.1.1.1", instance_name="orders")
    assert named.client_id == "10.1.1.1@orders"
    del a, b, named


def test_broadcasting_consumers_default_to_instance_default() -> None:
    c = PushConsumer("g", namesrv_addr="h:1", message_model="BROADCASTING", client_ip="10.2.2.2")
    assert c.instance.client_id.startswith("10.2.2.2@DEFAULT")
    p = Producer("g", namesrv_addr="h:1", client_ip="10.2.2.2")
    assert p.instance.client_id.startswith(f"10.2.2.2@{os.getpid()}")


ROUTE = (
    b'{"orderTopicConf":null,"queueDatas":[{"brokerName":"broker-b","readQueueNums":2,"writeQueueNums":3,"perm":6,'
    b'"topicSysFlag":0},{"brokerName":"broker-a","readQueueNums":4,"writeQueueNums":4,"perm":4},'
    b'{"brokerName":"broker-c","readQueueNums":1,"writeQueueNums":1,"perm":6}],'
    b'"brokerDatas":[{"cluster":"C","brokerName":"broker-a","brokerAddrs":{0:"10.0.0.1:10911",1:"10.0.0.2:10911"}},'
    b'{"cluster":"C","brokerName":"broker-b","brokerAddrs":{"0":"10.0.0.3:10911"}},'
    b'{"cluster":"C","brokerName":"broker-c","brokerAddrs":{"1":"10.0.0.4:10911"}}],"filterServerTable":{}}'
)


def test_route_parsing_and_queue_lists() -> None:
    route = TopicRoute.parse("T", ROUTE)  # fastjson's unquoted numeric keys too
    pub = route.publish_queues()
    # broker-a is read-only, broker-c has no master
    assert pub == [MessageQueue("T", "broker-b", i) for i in range(3)]
    sub = route.subscribe_queues()
    assert [(q.broker_name, q.queue_id) for q in sub] == [
        ("broker-a", 0),
        ("broker-a", 1),
        ("broker-a", 2),
        ("broker-a", 3),
        ("broker-b", 0),
        ("broker-b", 1),
        ("broker-c", 0),
    ]
    assert route.master_addr("broker-a") == "10.0.0.1:10911"
    assert route.master_addr("broker-c") is None
    assert route.read_addr("broker-c") == "10.0.0.4:10911"
    assert TopicRoute.parse("T", ROUTE) == route


def test_reset_offset_bodies_both_forms() -> None:
    table = {("T", "broker-a", 0): 100, ("T", "broker-a", 1): 7}
    for cpp in (True, False):
        assert decode_reset_offset_body(encode_reset_offset_body(table, cpp=cpp)) == table
