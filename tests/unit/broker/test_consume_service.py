"""ConsumeService (broker/services/consume.py), the checks a consumer's read passes on both front ends: which check
refuses (its ``ConsumeRefusal``, what the gRPC endpoint maps to its codes), J's order (group before topic), the
lighter checks of a request that does not read (ack, change of invisibility), the subscription cache, and the read
``ConsumeRequest.read`` builds from a subscription's filter; a pull's whole check (``pull_read``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from broker import topics as T
from broker.filter import build_subscription
from broker.services.client_registry import ClientChannel
from broker.services.consume import ConsumeRefusal, ConsumeRefused, ConsumeRequest, ConsumeService
from broker.services.subscription_groups import SubscriptionGroupConfig
from protocol.bodies import TopicConfig
from protocol.codes import LanguageCode, ResponseCode
from protocol.message_properties import tag_hash
from tests.unit.broker.handler_support import FakeChannel, WiredBroker, wired_broker


def _tables(b: WiredBroker) -> None:
    b.topics.put(TopicConfig.with_queues("TopicA", 4, T.PERM_RW))
    b.topics.put(TopicConfig.with_queues("WriteOnly", 4, T.PERM_WRITE))
    b.groups.put(SubscriptionGroupConfig("Off", consume_enable=False))


@pytest.mark.parametrize(
    ("config", "req", "reason", "code"),
    [
        (
            {"brokerPermission": "2"},
            ConsumeRequest("G", "TopicA", 0),
            ConsumeRefusal.BROKER_UNREADABLE,
            ResponseCode.NO_PERMISSION,
        ),
        (
            {"autoCreateSubscriptionGroup": "false"},
            ConsumeRequest("Nobody", "TopicA", 0),
            ConsumeRefusal.NO_GROUP,
            ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST,
        ),
        ({}, ConsumeRequest("Off", "TopicA", 0), ConsumeRefusal.GROUP_DISABLED, ResponseCode.NO_PERMISSION),
        ({}, ConsumeRequest("Off", "Unknown", 0), ConsumeRefusal.GROUP_DISABLED, ResponseCode.NO_PERMISSION),
        ({}, ConsumeRequest("G", "Unknown", 0), ConsumeRefusal.NO_TOPIC, ResponseCode.TOPIC_NOT_EXIST),
        ({}, ConsumeRequest("G", "WriteOnly", 0), ConsumeRefusal.TOPIC_UNREADABLE, ResponseCode.NO_PERMISSION),
        ({}, ConsumeRequest("G", "TopicA", 4), ConsumeRefusal.QUEUE_ID, ResponseCode.SYSTEM_ERROR),
        ({}, ConsumeRequest("G", "TopicA", -1), ConsumeRefusal.QUEUE_ID, ResponseCode.SYSTEM_ERROR),
    ],
)
async def test_each_check_refuses_with_its_reason_and_code(
    tmp_path: Path, config: dict[str, str], req: ConsumeRequest, reason: ConsumeRefusal, code: int
) -> None:
    async with wired_broker(tmp_path, **config) as b:
        _tables(b)
        with pytest.raises(ConsumeRefused) as caught:
            b.wiring.consume.check(req)
        assert (caught.value.reason, caught.value.code) == (reason, code), caught.value.remark
        assert caught.value.remark


async def test_a_request_that_does_not_read_passes_an_unreadable_broker_and_topic(tmp_path: Path) -> None:
    async with wired_broker(tmp_path, brokerPermission="2") as b:
        _tables(b)
        svc: ConsumeService = b.wiring.consume
        ok = svc.check(ConsumeRequest("G", "WriteOnly", reading=False))
        assert (ok.topic.topic_name, ok.group.group_name) == ("WriteOnly", "G")
        with pytest.raises(ConsumeRefused) as caught:
            svc.check(ConsumeRequest("G", "Unknown", reading=False))
        assert caught.value.reason is ConsumeRefusal.NO_TOPIC
        svc.set_broker_permission(T.PERM_RW)  # what UPDATE_BROKER_CONFIG calls
        assert svc.check(ConsumeRequest("G", "TopicA")).topic.topic_name == "TopicA"


async def test_a_subscription_is_parsed_once_and_a_bad_one_is_refused(tmp_path: Path) -> None:
    async with wired_broker(tmp_path) as b:
        svc = b.wiring.consume
        first = svc.subscription("TopicA", "a || b", None)
        assert first.tags == {"a", "b"} and svc.subscription("TopicA", "a || b", "TAG") is first
        assert svc.subscription("TopicA", None, None).matches_all
        with pytest.raises(ConsumeRefused) as caught:
            svc.subscription("TopicA", "a >", "SQL92")
        refused = caught.value
        assert (refused.reason, refused.code) == (
            ConsumeRefusal.BAD_SUBSCRIPTION,
            ResponseCode.SUBSCRIPTION_PARSE_FAILED,
        )
        assert refused.remark == "parse the consumer's subscription failed" and refused.detail != refused.remark


def test_read_carries_the_filter_stages() -> None:
    every = ConsumeRequest("G", "T", 1, True, 5, 32).read(None, None)
    assert (every.group, every.topic, every.queue_id, every.offset, every.max_msgs) == ("G", "T", 1, 5, 32)
    assert every.filter is None
    f = build_subscription("T", "a").filter
    assert f is not None and f.match_code is not None and f.match_tags is not None
    tagged = ConsumeRequest("G", "T", 1, True, 5, 32).read(1024, f)
    assert tagged.max_bytes == 1024 and tagged.filter is f
    assert f.match_code(tag_hash("a")) and not f.match_code(tag_hash("b"))


def test_every_refusal_has_a_grpc_code() -> None:
    pytest.importorskip("grpc")
    from broker.proxy.pb import definition_pb2 as pb
    from broker.proxy.service import consume_code

    expected: dict[ConsumeRefusal, Any] = {
        ConsumeRefusal.BROKER_UNREADABLE: pb.Code.FORBIDDEN,
        ConsumeRefusal.NO_GROUP: pb.Code.CONSUMER_GROUP_NOT_FOUND,
        ConsumeRefusal.GROUP_DISABLED: pb.Code.FORBIDDEN,
        ConsumeRefusal.NO_TOPIC: pb.Code.TOPIC_NOT_FOUND,
        ConsumeRefusal.TOPIC_UNREADABLE: pb.Code.FORBIDDEN,
        ConsumeRefusal.BAD_SUBSCRIPTION: pb.Code.ILLEGAL_FILTER_EXPRESSION,
        ConsumeRefusal.NO_PROPERTY_FILTER: pb.Code.UNSUPPORTED,
    }
    for reason in ConsumeRefusal:  # a new refusal gets its own v2 code, never INTERNAL_SERVER_ERROR
        assert consume_code(ConsumeRefused(reason, 0, "r")) != pb.Code.INTERNAL_SERVER_ERROR
    for reason, code in expected.items():
        assert consume_code(ConsumeRefused(reason, 0, "r")) == code


async def test_a_named_subscription_is_compiled_as_the_last_check(tmp_path: Path) -> None:
    async with wired_broker(tmp_path) as b:
        _tables(b)
        svc: ConsumeService = b.wiring.consume
        assert svc.check(ConsumeRequest("G", "TopicA", 0)).subscription is None  # names none
        named = svc.check(ConsumeRequest("G", "TopicA", 0, expression="a || b", expression_type="TAG")).subscription
        assert named is svc.subscription("TopicA", "a || b", "TAG")
        with pytest.raises(ConsumeRefused) as caught:  # the queue check comes first
            svc.check(ConsumeRequest("G", "TopicA", 9, expression="a >", expression_type="SQL92"))
        assert caught.value.reason is ConsumeRefusal.QUEUE_ID
        with pytest.raises(ConsumeRefused) as caught:
            svc.check(ConsumeRequest("G", "TopicA", 0, expression="a >", expression_type="SQL92"))
        assert caught.value.reason is ConsumeRefusal.BAD_SUBSCRIPTION


async def test_a_pull_that_names_no_subscription_reads_through_its_groups(tmp_path: Path) -> None:
    async with wired_broker(tmp_path) as b:
        _tables(b)
        svc: ConsumeService = b.wiring.consume
        pull = ConsumeRequest("G", "TopicA", 1, offset=5, max_msgs=3, sub_version=7)
        with pytest.raises(ConsumeRefused) as caught:  # no heartbeat from the group yet
            svc.pull_read(pull, 1024)
        assert caught.value.reason is ConsumeRefusal.NO_CONSUMER
        assert caught.value.code == ResponseCode.SUBSCRIPTION_NOT_EXIST
        sub = build_subscription("TopicA", "a || b", 7, "TAG")
        info = ClientChannel(FakeChannel(), "c1", LanguageCode.JAVA, 1)  # type: ignore[arg-type]
        model = "CLUSTERING"
        b.clients.register_consumer("G", info, "CONSUME_PASSIVELY", model, "LAST", [sub], notify=False)
        get = svc.pull_read(pull, 1024)
        assert (get.group, get.topic, get.queue_id, get.offset, get.max_msgs, get.max_bytes) == (
            "G", "TopicA", 1, 5, 3, 1024,
        )  # fmt: skip
        assert get.filter is sub.filter
        with pytest.raises(ConsumeRefused) as caught:  # the consumer has a newer subscription than registered
            svc.pull_read(ConsumeRequest("G", "TopicA", 1, sub_version=8), None)
        assert caught.value.reason is ConsumeRefusal.STALE_SUBSCRIPTION
        with pytest.raises(ConsumeRefused) as caught:
            svc.pull_read(ConsumeRequest("G", "WriteOnly", 1), None)
        assert caught.value.reason is ConsumeRefusal.TOPIC_UNREADABLE  # the common checks come first
        with pytest.raises(ConsumeRefused) as caught:  # SQL92 while enablePropertyFilter is off (the default)
            svc.pull_read(ConsumeRequest("G", "TopicA", 1, expression="a > 1", expression_type="SQL92"), None)
        assert caught.value.reason is ConsumeRefusal.NO_PROPERTY_FILTER
        assert caught.value.remark == "The broker does not support consumer to filter message by SQL92"
