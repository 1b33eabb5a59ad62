"""ACL on the gRPC endpoint in-process (``run_broker(..., aclEnable=True, enableProxy=True)``) with raw v2 calls: the
broker's ``plain_acl.yml`` accounts authenticate and authorise gRPC requests, refusals are UNAUTHORIZED and store
nothing, and a changed file applies to gRPC through the remoting watcher."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any, overload

import pytest

from broker.app import BrokerApp
from broker.proxy import auth
from broker.proxy.pb import definition_pb2 as pb
from broker.proxy.pb import service_pb2 as spb
from tests.harness import run_broker
from tests.integration.acl_support import ACCOUNTS, write_acl

MD = (("x-mq-client-id", "acl@1@0@x"), ("x-mq-language", "PYTHON"), ("x-mq-client-version", "5.1.2"))


def creds(ak: str, sk: str) -> tuple[tuple[str, str], ...]:
    # signed at call time: a date older than 15 minutes is refused as a replay
    date = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    sig = auth.sign(sk, date)
    return (
        *MD,
        ("x-mq-date-time", date),
        ("authorization", f"MQv2-HMAC-SHA1 Credential={ak}, SignedHeaders=x-mq-date-time, Signature={sig}"),
    )


class Signed(Sequence[tuple[str, str]]):
    """gRPC metadata signed when it is read, not when the module is imported (an old date is refused as a replay)."""

    def __init__(self, ak: str, sk: str) -> None:
        self.ak, self.sk = ak, sk

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(creds(self.ak, self.sk))

    def __len__(self) -> int:
        return len(creds(self.ak, self.sk))

    @overload
    def __getitem__(self, i: int) -> tuple[str, str]: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[tuple[str, str]]: ...
    def __getitem__(self, i: int | slice) -> tuple[str, str] | Sequence[tuple[str, str]]:
        return creds(self.ak, self.sk)[i]


GOOD = Signed("RocketMQ", "12345678")
SUB_ONLY = Signed("subOnlyKey", "12345678")
BAD_SECRET = Signed("RocketMQ", "wrongsecret")


@pytest.fixture()
async def broker(tmp_path: Path) -> AsyncIterator[BrokerApp]:
    home = tmp_path / "home"
    write_acl(home)
    async with run_broker(None, tmp_path, aclEnable=True, rocketmqHome=home, enableProxy=True, grpcServerPort=0) as b:
        b.topics.create_if_absent("topicA", 2, 6)
        yield b


def send_req(topic: str, body: bytes) -> spb.SendMessageRequest:
    m = pb.Message(body=body)
    m.topic.name = topic
    m.system_properties.message_id = "01" + body.hex().upper()
    m.system_properties.message_type = pb.MessageType.NORMAL
    return spb.SendMessageRequest(messages=[m])


def receive_req(group: str) -> spb.ReceiveMessageRequest:
    req = spb.ReceiveMessageRequest(batch_size=8)
    req.group.name = group
    req.message_queue.topic.name = "topicA"
    req.message_queue.id = -1
    req.filter_expression.type, req.filter_expression.expression = pb.FilterType.TAG, "*"
    req.invisible_duration.FromSeconds(30)
    req.long_polling_timeout.FromSeconds(5)
    return req


async def telemetry(stub: Any, md: Any, settings: pb.Settings) -> spb.TelemetryCommand:
    call = stub.Telemetry(metadata=md)
    await call.write(spb.TelemetryCommand(settings=settings))
    reply = await call.read()
    await call.done_writing()
    return reply  # type: ignore[no-any-return]


def stored(broker: BrokerApp, topic: str) -> int:
    assert broker.store is not None
    return sum(broker.store.get_max_offset_in_queue(topic, q) for q in range(2))


async def test_accounts_authorise_grpc_requests(broker: BrokerApp, stub: Any) -> None:
    route = spb.QueryRouteRequest()
    route.topic.name = "topicA"
    assert (await stub.QueryRoute(route, metadata=GOOD)).status.code == pb.Code.OK
    assert (await stub.QueryRoute(route, metadata=SUB_ONLY)).status.code == pb.Code.OK  # ANY
    for md in (MD, BAD_SECRET):
        resp = await stub.QueryRoute(route, metadata=md)
        assert resp.status.code == pb.Code.UNAUTHORIZED
    # refused sends store nothing: no credentials, a wrong secret, a SUB-only account, a DENY topic
    for md, reason in (
        (MD, "No accessKey is configured"),
        (BAD_SECRET, "Check signature failed for accessKey=RocketMQ"),
        (SUB_ONLY, "No default permission for topic:topicA"),
    ):
        resp = await stub.SendMessage(send_req("topicA", b"no"), metadata=md)
        assert (resp.status.code, resp.status.message) == (pb.Code.UNAUTHORIZED, reason)
    broker.topics.create_if_absent("topicD", 2, 6)
    resp = await stub.SendMessage(send_req("topicD", b"no"), metadata=GOOD)
    assert resp.status.code == pb.Code.UNAUTHORIZED and stored(broker, "topicD") == 0
    assert stored(broker, "topicA") == 0
    # the PUB|SUB account subscribes (settings on the Telemetry stream), sends and receives
    sub = pb.Settings(client_type=pb.ClientType.SIMPLE_CONSUMER)
    sub.subscription.group.name = "groupA"
    entry = sub.subscription.subscriptions.add()
    entry.topic.name = "topicA"
    entry.expression.type, entry.expression.expression = pb.FilterType.TAG, "*"
    assert (await telemetry(stub, GOOD, sub)).status.code == pb.Code.OK
    resp = await stub.SendMessage(send_req("topicA", b"yes"), metadata=GOOD)
    assert resp.status.code == pb.Code.OK
    assert stored(broker, "topicA") == 1
    got = [r async for r in stub.ReceiveMessage(receive_req("groupA"), metadata=GOOD, timeout=10)]
    assert [r.message.body for r in got if r.HasField("message")] == [b"yes"]
    # a DENY group may not receive; nor may an unsigned client
    for md, group in ((GOOD, "groupD"), (MD, "groupA")):
        got = [r async for r in stub.ReceiveMessage(receive_req(group), metadata=md, timeout=10)]
        assert [r.status.code for r in got] == [pb.Code.UNAUTHORIZED]
    # settings on the Telemetry stream: a SUB-only producer is refused its publishing topic
    settings = pb.Settings(client_type=pb.ClientType.PRODUCER)
    settings.publishing.topics.add().name = "topicA"
    reply = await telemetry(stub, SUB_ONLY, settings)
    assert reply.status.code == pb.Code.UNAUTHORIZED and not reply.HasField("settings")
    assert "topicA" not in broker.clients.producer_groups()


async def test_a_changed_acl_file_applies_to_grpc(tmp_path: Path, broker: BrokerApp, stub: Any) -> None:
    assert (await stub.SendMessage(send_req("topicA", b"before"), metadata=SUB_ONLY)).status.code == (
        pb.Code.UNAUTHORIZED
    )
    accounts = [dict(a) for a in ACCOUNTS]
    accounts[2]["defaultTopicPerm"] = "PUB|SUB"  # the SUB-only account may now publish
    write_acl(tmp_path / "home", accounts)
    assert broker.acl is not None and broker.acl.check_now()
    assert (await stub.SendMessage(send_req("topicA", b"after"), metadata=SUB_ONLY)).status.code == pb.Code.OK
    del accounts[1]  # and the normal account is gone
    write_acl(tmp_path / "home", accounts)
    assert broker.acl.check_now()
    resp = await stub.SendMessage(send_req("topicA", b"gone"), metadata=GOOD)
    assert (resp.status.code, resp.status.message) == (pb.Code.UNAUTHORIZED, "No acl config for RocketMQ")
    assert stored(broker, "topicA") == 1
