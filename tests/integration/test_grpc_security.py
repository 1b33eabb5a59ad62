"""The gRPC endpoint under the remoting port's rules (issue 34): a read-only broker refuses gRPC sends as remoting
answers 16; ``tls.server.mode=enforcing`` serves the gRPC port with TLS and refuses plaintext; a correctly signed
request with a stale or future ``x-mq-date-time`` is refused as a replay."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import grpc
import pytest

from broker.proxy import auth
from broker.proxy.pb import definition_pb2 as pb
from broker.proxy.pb import service_pb2 as spb
from broker.proxy.pb import service_pb2_grpc
from protocol.codes import ResponseCode
from protocol.remoting import RemotingClient
from tests.harness import run_broker
from tests.integration.acl_support import write_acl
from tests.integration.broker_wire import send_cmd
from tests.integration.test_grpc_acl import MD, send_req
from tests.integration.tls_support import make_pki


def _signed(date: str, ak: str = "RocketMQ", sk: str = "12345678") -> tuple[tuple[str, str], ...]:
    header = f"MQv2-HMAC-SHA1 Credential={ak}, SignedHeaders=x-mq-date-time, Signature={auth.sign(sk, date)}"
    return (*MD, ("x-mq-date-time", date), ("authorization", header))


def _route(topic: str) -> spb.QueryRouteRequest:
    req = spb.QueryRouteRequest()
    req.topic.name = topic
    return req


async def test_attack_grpc_send_to_a_read_only_broker(tmp_path: Path) -> None:
    async with run_broker(None, tmp_path, brokerPermission=4, enableProxy=True, grpcServerPort=0) as broker:
        broker.topics.create_if_absent("topicA", 2, 6)
        assert broker.proxy is not None and broker.store is not None
        client = RemotingClient()
        try:
            r = await client.invoke(broker.addr, send_cmd("topicA", b"x"), 5.0)
            assert r.code == ResponseCode.NO_PERMISSION and "sending message is forbidden" in (r.remark or "")
        finally:
            await client.close()
        async with grpc.aio.insecure_channel(f"127.0.0.1:{broker.proxy.port}") as ch:
            stub: Any = service_pb2_grpc.MessagingServiceStub(ch)
            resp = await stub.SendMessage(send_req("topicA", b"x"), metadata=MD)
        assert resp.status.code == pb.Code.FORBIDDEN, resp.status
        assert "sending message is forbidden" in resp.entries[0].status.message
        assert sum(broker.store.get_max_offset_in_queue("topicA", q) for q in range(2)) == 0


async def test_attack_plaintext_grpc_against_an_enforcing_broker(tmp_path: Path) -> None:
    pki = make_pki(tmp_path)
    tls = {"tls.server.mode": "enforcing", "tls.server.certPath": pki["cert"], "tls.server.keyPath": pki["key"]}
    async with run_broker(None, tmp_path, enableProxy=True, grpcServerPort=0, **tls) as broker:
        broker.topics.create_if_absent("topicA", 2, 6)
        assert broker.proxy is not None
        target = f"127.0.0.1:{broker.proxy.port}"
        async with grpc.aio.insecure_channel(target) as ch:
            stub: Any = service_pb2_grpc.MessagingServiceStub(ch)
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await stub.QueryRoute(_route("topicA"), metadata=MD, timeout=5)
            assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
        creds = grpc.ssl_channel_credentials(root_certificates=Path(pki["ca"]).read_bytes())
        async with grpc.aio.secure_channel(target, creds) as ch:
            stub = service_pb2_grpc.MessagingServiceStub(ch)
            resp = await stub.QueryRoute(_route("topicA"), metadata=MD, timeout=5)
            assert resp.status.code == pb.Code.OK
            sent = await stub.SendMessage(send_req("topicA", b"over tls"), metadata=MD, timeout=5)
            assert sent.status.code == pb.Code.OK


async def test_grpc_mutual_tls_requires_a_client_certificate(tmp_path: Path) -> None:
    pki = make_pki(tmp_path)
    tls = {
        "tls.server.mode": "enforcing",
        "tls.server.certPath": pki["cert"],
        "tls.server.keyPath": pki["key"],
        "tls.server.need.client.auth": "require",
        "tls.server.trustCertPath": pki["ca"],
    }
    async with run_broker(None, tmp_path, enableProxy=True, grpcServerPort=0, **tls) as broker:
        assert broker.proxy is not None
        target = f"127.0.0.1:{broker.proxy.port}"
        ca = Path(pki["ca"]).read_bytes()
        async with grpc.aio.secure_channel(target, grpc.ssl_channel_credentials(root_certificates=ca)) as ch:
            with pytest.raises(grpc.aio.AioRpcError):
                await service_pb2_grpc.MessagingServiceStub(ch).QueryRoute(_route("TBW102"), metadata=MD, timeout=5)
        mine = grpc.ssl_channel_credentials(ca, Path(pki["ckey"]).read_bytes(), Path(pki["ccert"]).read_bytes())
        async with grpc.aio.secure_channel(target, mine) as ch:
            resp = await service_pb2_grpc.MessagingServiceStub(ch).QueryRoute(_route("TBW102"), metadata=MD, timeout=5)
            assert resp.status.code in (pb.Code.OK, pb.Code.ILLEGAL_TOPIC)


async def test_attack_replay_of_a_captured_signed_grpc_request(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_acl(home)
    async with run_broker(None, tmp_path, aclEnable=True, rocketmqHome=home, enableProxy=True, grpcServerPort=0) as b:
        b.topics.create_if_absent("topicA", 2, 6)
        assert b.proxy is not None and b.store is not None
        async with grpc.aio.insecure_channel(f"127.0.0.1:{b.proxy.port}") as ch:
            stub: Any = service_pb2_grpc.MessagingServiceStub(ch)
            now = time.time()
            for when, reason in (
                ("20230101T000000Z", "older than 15 minutes"),
                (time.strftime(auth.DATE_FORMAT, time.gmtime(now - 16 * 60)), "older than 15 minutes"),
                (time.strftime(auth.DATE_FORMAT, time.gmtime(now + 3600)), "in the future"),
            ):
                resp = await stub.SendMessage(send_req("topicA", b"replayed"), metadata=_signed(when))
                assert resp.status.code == pb.Code.UNAUTHORIZED and reason in resp.status.message, resp.status
            assert sum(b.store.get_max_offset_in_queue("topicA", q) for q in range(2)) == 0
            fresh = _signed(time.strftime(auth.DATE_FORMAT, time.gmtime()))
            resp = await stub.SendMessage(send_req("topicA", b"fresh"), metadata=fresh)
            assert resp.status.code == pb.Code.OK, resp.status
