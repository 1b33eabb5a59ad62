"""SendService (broker/services/send.py), the one send path of both front ends: which check refuses a send (its
``Refusal``, what the gRPC endpoint maps to its codes), the system-topic check of 5.x clients surviving the topic
cache a remoting send filled, the transaction refusal after the topic checks, queue choice, and the gRPC code of
every refusal (broker/proxy/send_codes.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from broker import topics as T
from broker.services.send import NEXT_QUEUE, Refusal, SendOutcome, SendRefused, SendRequest, SendService
from broker.store.results import PutMessageStatus
from protocol.bodies import TopicConfig
from protocol.codes import ResponseCode
from tests.unit.broker.handler_support import wired_broker


def _req(topic: str, queue_id: int = 0, properties: str = "TAGS\x01a", **kw: Any) -> SendRequest:
    return SendRequest(topic, queue_id, 0, 0, 1, "127.0.0.1:5000", b"body", properties, **kw)


async def _refusal(svc: SendService, req: SendRequest) -> SendRefused:
    with pytest.raises(SendRefused) as caught:
        await svc.send(req)
    return caught.value


@pytest.mark.parametrize(
    ("config", "topic", "kw", "reason", "code"),
    [
        ({"brokerPermission": "4"}, "TopicA", {}, Refusal.BROKER_READ_ONLY, ResponseCode.NO_PERMISSION),
        ({}, "bad topic!", {}, Refusal.TOPIC_NAME, ResponseCode.SYSTEM_ERROR),
        ({}, T.SCHEDULE_TOPIC, {}, Refusal.TOPIC_FORBIDDEN, ResponseCode.NO_PERMISSION),
        ({}, "Unknown", {}, Refusal.NO_TOPIC, ResponseCode.TOPIC_NOT_EXIST),
        ({}, "ReadOnly", {}, Refusal.TOPIC_READ_ONLY, ResponseCode.NO_PERMISSION),
        ({}, "TopicA", {"queue_id": 9}, Refusal.QUEUE_ID, ResponseCode.SYSTEM_ERROR),
        ({}, "TopicA", {"batch": True}, Refusal.BAD_BATCH, ResponseCode.MESSAGE_ILLEGAL),
        ({"maxMessageSize": "2"}, "TopicA", {}, Refusal.TOO_LARGE, ResponseCode.MESSAGE_ILLEGAL),
    ],
)
async def test_each_check_refuses_with_its_reason_and_code(
    tmp_path: Path, config: dict[str, str], topic: str, kw: dict[str, Any], reason: Refusal, code: int
) -> None:
    async with wired_broker(tmp_path, **config) as b:
        b.topics.put(TopicConfig.with_queues("TopicA", 4, T.PERM_RW))
        b.topics.put(TopicConfig.with_queues("ReadOnly", 4, T.PERM_READ))
        refused = await _refusal(b.wiring.sends, _req(topic, **kw))
        assert (refused.reason, refused.code) == (reason, code), refused.remark
        assert refused.remark


async def test_a_client_topics_only_send_is_refused_a_system_topic_a_remoting_send_passed(tmp_path: Path) -> None:
    async with wired_broker(tmp_path) as b:
        svc = b.wiring.sends
        cluster = b.config.identity.broker_cluster_name  # a system topic remoting producers may send to
        stored = await svc.send(_req(cluster))
        assert isinstance(stored, SendOutcome) and stored.ok
        refused = await _refusal(svc, _req(cluster, client_topics_only=True))
        assert refused.reason is Refusal.SYSTEM_TOPIC


async def test_a_prepared_send_is_refused_after_the_topic_checks_when_transactions_are_rejected(
    tmp_path: Path,
) -> None:
    async with wired_broker(tmp_path, rejectTransactionMessage="true") as b:
        b.topics.put(TopicConfig.with_queues("TopicA", 4, T.PERM_RW))
        svc = b.wiring.sends
        assert (await _refusal(svc, _req("Unknown", prepared=True))).reason is Refusal.NO_TOPIC
        refused = await _refusal(svc, _req("TopicA", prepared=True))
        assert refused.reason is Refusal.TX_FORBIDDEN and "transaction message is forbidden" in refused.remark


async def test_a_prepared_send_is_stored_as_a_half_message_and_answers_the_queue_asked(tmp_path: Path) -> None:
    async with wired_broker(tmp_path) as b:
        b.topics.put(TopicConfig.with_queues("TopicA", 4, T.PERM_RW))
        out = await b.wiring.sends.send(_req("TopicA", queue_id=3, prepared=True))
        assert isinstance(out, SendOutcome) and out.ok and out.queue_id == 3
        assert b.store.get_max_offset_in_queue(T.TRANS_HALF_TOPIC, 0) == 1
        assert b.store.get_max_offset_in_queue("TopicA", 3) == 0


async def test_queue_choice_message_group_hash_and_round_robin(tmp_path: Path) -> None:
    async with wired_broker(tmp_path) as b:
        b.topics.put(TopicConfig.with_queues("TopicA", 4, T.PERM_RW))
        svc = b.wiring.sends
        grouped = set()
        for _ in range(4):
            out = await svc.send(_req("TopicA", queue_id=NEXT_QUEUE, message_group="order-7"))
            assert isinstance(out, SendOutcome)
            grouped.add(out.queue_id)
        assert len(grouped) == 1  # one group, one queue
        turns = []
        for _ in range(4):
            out = await svc.send(_req("TopicA", queue_id=NEXT_QUEUE))
            assert isinstance(out, SendOutcome)
            turns.append(out.queue_id)
        assert sorted(turns) == [0, 1, 2, 3]  # in turn: each queue once in four sends


def test_every_refusal_has_a_grpc_code() -> None:
    pytest.importorskip("grpc")
    from broker.proxy.pb import definition_pb2 as pb
    from broker.proxy.send_codes import refused_code

    expected = {
        Refusal.BROKER_READ_ONLY: pb.Code.FORBIDDEN,
        Refusal.TOPIC_NAME: pb.Code.ILLEGAL_TOPIC,
        Refusal.SYSTEM_TOPIC: pb.Code.ILLEGAL_TOPIC,
        Refusal.NO_TOPIC: pb.Code.TOPIC_NOT_FOUND,
        Refusal.TX_FORBIDDEN: pb.Code.FORBIDDEN,
        Refusal.TOO_LARGE: pb.Code.MESSAGE_BODY_TOO_LARGE,
    }
    for reason, code in expected.items():
        assert refused_code(SendRefused(reason, 0, "r")) == code
    timer = SendRefused(Refusal.TIMER, ResponseCode.MESSAGE_ILLEGAL, "bad time")
    assert refused_code(timer) == pb.Code.ILLEGAL_DELIVERY_TIME
    props = SendRefused(Refusal.PUT_FAILED, 0, "r", PutMessageStatus.PROPERTIES_SIZE_EXCEEDED)
    assert refused_code(props) == pb.Code.MESSAGE_PROPERTIES_TOO_LARGE
    for reason in Refusal:
        assert refused_code(SendRefused(reason, 0, "r")) in pb.Code.values()
