"""ACL 2.0 (RocketMQ 5.3+) on a real broker: users and ACL policies created with the auth admin codes 3001–3010,
then enforced by the same engine as ACL 1.0 on remoting and gRPC — resource patterns, Allow/Deny, specificity,
Super users, disabled users; a normal user cannot grant itself anything."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from broker.app import BrokerApp
from broker.proxy import auth
from broker.proxy.pb import definition_pb2 as pb
from broker.proxy.pb import service_pb2_grpc
from protocol.acl.signature import SessionCredentials
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.remoting import RemotingClient
from tests.harness import run_broker
from tests.integration.acl_support import ADMIN, refused, signed, write_acl
from tests.integration.broker_wire import pull_cmd, send_cmd, simple_cmd
from tests.integration.test_acl_sdk import mqadmin
from tests.integration.test_grpc_acl import MD, send_req

ALICE = SessionCredentials("alice", "alice-password")
BOB = SessionCredentials("bob", "bob-password")

ALICE_ACL = {
    "policies": [
        {
            "policyType": "Custom",
            "entries": [
                {"resource": "Topic:top*", "actions": ["Pub", "Sub"], "decision": "Allow"},
                {"resource": "Topic:topicB", "actions": ["Pub"], "decision": "Deny"},
                {"resource": "Group:groupA", "actions": ["Sub"], "decision": "Allow"},
            ],
        }
    ]
}


def _cmd(code: int, body: Any = None, **ext: str) -> RemotingCommand:
    return RemotingCommand.request(code, dict(ext), json.dumps(body).encode() if body is not None else b"")


@pytest.fixture
async def broker(tmp_path: Path) -> AsyncIterator[BrokerApp]:
    home = tmp_path / "home"
    write_acl(home, [{"accessKey": "rocketmq2", "secretKey": "12345678", "admin": True}])
    async with run_broker(None, tmp_path, aclEnable=True, rocketmqHome=home, enableProxy=True, grpcServerPort=0) as b:
        for t in ("topicA", "topicB", "topicC", "other"):
            b.topics.create_if_absent(t, 1, 6)
        yield b


async def test_users_and_policies_decide_remoting_and_grpc_requests(broker: BrokerApp) -> None:
    client = RemotingClient()
    addr = broker.addr

    async def call(cmd: RemotingCommand, creds: SessionCredentials | None) -> RemotingCommand:
        return await client.invoke(addr, signed(cmd, creds), 5.0)

    try:
        user = {"password": "alice-password", "userType": "Normal"}
        assert (await call(_cmd(RequestCode.AUTH_CREATE_USER, user, username="alice"), ADMIN)).code == 0
        again = await call(_cmd(RequestCode.AUTH_CREATE_USER, user, username="alice"), ADMIN)
        assert again.code == ResponseCode.NO_PERMISSION and again.remark == "The user is existed"
        r = await call(_cmd(RequestCode.AUTH_CREATE_ACL, ALICE_ACL, subject="User:alice"), ADMIN)
        assert r.code == ResponseCode.SUCCESS, r.remark
        # the prefix allows topicA and topicC; the literal Deny on topicB wins over the prefix; "other" matches nothing
        for topic, ok in (("topicA", True), ("topicC", True), ("topicB", False), ("other", False)):
            r = await call(send_cmd(topic, b"x", v2=True), ALICE)
            assert (r.code == ResponseCode.SUCCESS) is ok, (topic, r.code, r.remark)
            if not ok:  # RocketMQ 5.3's answer: NO_PERMISSION with the bare reason
                assert r.code == ResponseCode.NO_PERMISSION, r.remark
                assert (r.remark or "").startswith(
                    f"User:alice has no permission to access Topic:{topic} from 127.0.0.1, "
                )
        r = await call(send_cmd("topicB", b"x", v2=True), ALICE)
        assert r.remark == "User:alice has no permission to access Topic:topicB from 127.0.0.1, the decision is deny."
        r = await call(pull_cmd("groupA", "topicA", 0, 0, suspend_ms=0), ALICE)
        assert r.code != ResponseCode.NO_PERMISSION and not refused(r), r.remark
        r = await call(pull_cmd("groupB", "topicA", 0, 0, suspend_ms=0), ALICE)
        assert r.code == ResponseCode.NO_PERMISSION and "Group:groupB" in (r.remark or "")
        # a wrong password is a failed signature
        r = await call(send_cmd("topicA", b"x"), SessionCredentials("alice", "not-her-password"))
        assert (r.code, r.remark) == (ResponseCode.NO_PERMISSION, "check signature failed.")
        # attack: the normal user grants itself more, creates a super user, or changes topics — all admin-only
        grab = {"policies": [{"entries": [{"resource": "*", "actions": ["All"], "decision": "Allow"}]}]}
        for cmd in (
            _cmd(RequestCode.AUTH_UPDATE_ACL, grab, subject="User:alice"),
            _cmd(RequestCode.AUTH_CREATE_USER, {"password": "x" * 8, "userType": "Super"}, username="mallory"),
            _cmd(RequestCode.AUTH_LIST_USER),
            simple_cmd(RequestCode.DELETE_TOPIC_IN_BROKER, topic="topicA"),
        ):
            r = await call(cmd, ALICE)
            assert r.code == ResponseCode.NO_PERMISSION and "Need admin permission" in (r.remark or ""), r.remark
        # reads: no password ever leaves the broker
        r = await call(_cmd(RequestCode.AUTH_LIST_USER, filter="ali"), ADMIN)
        assert json.loads(r.body) == [{"username": "alice", "userType": "Normal", "userStatus": "enable"}]
        r = await call(_cmd(RequestCode.AUTH_GET_ACL, subject="User:alice"), ADMIN)
        assert json.loads(r.body)["subject"] == "User:alice"
        r = await call(_cmd(RequestCode.AUTH_LIST_ACL, resourceFilter="topicB"), ADMIN)
        assert [a["subject"] for a in json.loads(r.body)] == ["User:alice"]
        # gRPC: the same user, the same decision
        assert broker.proxy is not None
        now = time.strftime(auth.DATE_FORMAT, time.gmtime())
        header = f"MQv2-HMAC-SHA1 Credential=alice, SignedHeaders=x-mq-date-time, Signature={auth.sign('alice-password', now)}"
        md = (*MD, ("x-mq-date-time", now), ("authorization", header))
        async with grpc.aio.insecure_channel(f"127.0.0.1:{broker.proxy.port}") as ch:
            stub: Any = service_pb2_grpc.MessagingServiceStub(ch)
            assert (await stub.SendMessage(send_req("topicC", b"g"), metadata=md)).status.code == pb.Code.OK
            resp = await stub.SendMessage(send_req("topicB", b"g"), metadata=md)
            assert resp.status.code == pb.Code.FORBIDDEN and "User:alice" in resp.status.message
        # deleting the prefix entry takes topicC away at once
        r = await call(_cmd(RequestCode.AUTH_DELETE_ACL, subject="User:alice", resource="Topic:top*"), ADMIN)
        assert r.code == ResponseCode.SUCCESS
        assert (await call(send_cmd("topicC", b"x", v2=True), ALICE)).code == ResponseCode.NO_PERMISSION
        # a Super user may do what admins do; a disabled user cannot sign in
        bob = {"password": "bob-password", "userType": "Super"}
        assert (await call(_cmd(RequestCode.AUTH_CREATE_USER, bob, username="bob"), ADMIN)).code == 0
        r = await call(simple_cmd(RequestCode.DELETE_TOPIC_IN_BROKER, topic="other"), BOB)
        assert r.code == ResponseCode.SUCCESS, r.remark
        off = {"userStatus": "disable"}
        assert (await call(_cmd(RequestCode.AUTH_UPDATE_USER, off, username="alice"), ADMIN)).code == 0
        r = await call(send_cmd("topicA", b"x", v2=True), ALICE)
        assert (r.code, r.remark) == (ResponseCode.NO_PERMISSION, "User:alice is disabled.")
        assert (await call(_cmd(RequestCode.AUTH_DELETE_USER, username="alice"), ADMIN)).code == 0
        assert json.loads((await call(_cmd(RequestCode.AUTH_LIST_ACL), ADMIN)).body or b"[]") == []
    finally:
        await client.close()


async def test_mqadmin_user_and_acl_commands(broker: BrokerApp) -> None:
    creds = ("--accessKey", "rocketmq2", "--secretKey", "12345678")
    b = ("-b", broker.addr)
    steps: list[tuple[tuple[str, ...], str]] = [
        (("createUser", *b, "-u", "carol", "-p", "carol-pass", "-t", "Normal"), "create user to"),
        (("createAcl", *b, "-s", "User:carol", "-r", "Topic:topicA,Group:groupA", "-a", "Pub,Sub", "-d", "Allow"), "create acl to"),
        (("listUser", *b, "-f", "car"), '"username": "carol"'),
        (("listAcl", *b, "-r", "topicA"), '"resource": "Topic:topicA"'),
        (("getAcl", *b, "-s", "User:carol"), '"decision": "Allow"'),
    ]  # fmt: skip
    for args, want in steps:
        rc, out, err = await mqadmin(*args, *creds)
        assert rc == 0 and want in out, (args, out, err)
    assert "carol-pass" not in (await mqadmin("listUser", *b, *creds))[1]
    carol = SessionCredentials("carol", "carol-pass")
    client = RemotingClient()
    try:
        r = await client.invoke(broker.addr, signed(send_cmd("topicA", b"c", v2=True), carol), 5.0)
        assert r.code == ResponseCode.SUCCESS, r.remark
        rc, out, err = await mqadmin("deleteUser", *b, "-u", "carol", *creds)
        assert rc == 0, err
        r = await client.invoke(broker.addr, signed(send_cmd("topicA", b"c", v2=True), carol), 5.0)
        assert refused(r) and "No acl config for carol" in (r.remark or "")  # gone: an unknown key
    finally:
        await client.close()
    # the normal user's own mqadmin gets the refusal
    rc, out, err = await mqadmin("listUser", *b, "--accessKey", "carol", "--secretKey", "carol-pass")
    assert rc != 0
