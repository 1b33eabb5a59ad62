"""The gRPC endpoint's ACL mapping (``broker.proxy.acl``): every request type → its resources and permissions, and
``GrpcAcl.check`` over real ``AclRules`` — signature of ``x-mq-date-time``, whitelists, SUB-only accounts, reloads."""

from __future__ import annotations

import time
from typing import Any

import pytest

from broker.proxy import auth
from broker.proxy.acl import GrpcAcl, required_resources
from broker.proxy.pb import definition_pb2 as pb
from broker.proxy.pb import service_pb2 as spb
from runtime.acl.rules import ANY, PUB, SUB, Account, AclError, AclRules, parse_address_pattern


def _res(msg: Any, field: str, name: str) -> None:
    getattr(msg, field).name = name


def _send(*topics: str) -> spb.SendMessageRequest:
    req = spb.SendMessageRequest()
    for t in topics:
        req.messages.add().topic.name = t
    return req


def _group_topic(cls: Any) -> Any:
    req = cls()
    req.group.name, req.topic.name = "G1", "T1"
    return req


def _settings(pub: tuple[str, ...] = (), group: str = "", subs: tuple[str, ...] = ()) -> spb.TelemetryCommand:
    s = pb.Settings()
    if pub:
        for t in pub:
            s.publishing.topics.add().name = t
    if group:
        s.subscription.group.name = group
        for t in subs:
            s.subscription.subscriptions.add().topic.name = t
    return spb.TelemetryCommand(settings=s)


def _receive() -> spb.ReceiveMessageRequest:
    req = spb.ReceiveMessageRequest()
    req.group.name, req.message_queue.topic.name = "G1", "T1"
    return req


def _end() -> spb.EndTransactionRequest:
    req = spb.EndTransactionRequest()
    req.topic.name = "T1"
    return req


def _route() -> spb.QueryRouteRequest:
    req = spb.QueryRouteRequest()
    req.topic.name = "T1"
    return req


def _heartbeat(kind: int) -> spb.HeartbeatRequest:
    req = spb.HeartbeatRequest(client_type=kind)  # type: ignore[arg-type]
    req.group.name = "G1"
    return req


def _term(group: str) -> spb.NotifyClientTerminationRequest:
    req = spb.NotifyClientTerminationRequest()
    req.group.name = group
    return req


@pytest.mark.parametrize(
    ("request_", "needs"),
    [
        (_route(), {"T1": ANY}),
        (_send("T1", "T1"), {"T1": PUB}),
        (_end(), {"T1": PUB}),
        (_receive(), {"%RETRY%G1": SUB, "T1": SUB}),
        (_group_topic(spb.AckMessageRequest), {"%RETRY%G1": SUB, "T1": SUB}),
        (_group_topic(spb.ChangeInvisibleDurationRequest), {"%RETRY%G1": SUB, "T1": SUB}),
        (_group_topic(spb.ForwardMessageToDeadLetterQueueRequest), {"%RETRY%G1": SUB, "T1": SUB}),
        (_group_topic(spb.QueryAssignmentRequest), {"%RETRY%G1": SUB, "T1": SUB}),
        (_heartbeat(pb.ClientType.SIMPLE_CONSUMER), {"%RETRY%G1": SUB}),
        (_heartbeat(pb.ClientType.PUSH_CONSUMER), {"%RETRY%G1": SUB}),
        (_heartbeat(pb.ClientType.PRODUCER), {}),
        (_term("G1"), {"%RETRY%G1": SUB}),
        (_term(""), {}),
        (_settings(pub=("T1", "T2")), {"T1": PUB, "T2": PUB}),
        (_settings(group="G1", subs=("T1", "T2")), {"%RETRY%G1": SUB, "T1": SUB, "T2": SUB}),
        (spb.TelemetryCommand(), {}),
    ],
    ids=lambda v: type(v).__name__ if not isinstance(v, dict) else "",
)
def test_each_request_maps_to_its_resources(request_: Any, needs: dict[str, int]) -> None:
    got = required_resources(request_)
    assert got == needs
    assert list(got) == list(needs)  # group before topic, as the proxy adds them (the first refusal is reported)


def test_requests_that_cannot_be_authorised() -> None:
    with pytest.raises(AclError, match="not consistent"):
        required_resources(_send("T1", "T2"))
    with pytest.raises(AclError, match="pub or sub"):
        required_resources(spb.TelemetryCommand(settings=pb.Settings(client_type=pb.ClientType.PRODUCER)))


RULES = AclRules(
    {
        "pubSubKey": Account.build("pubSubKey", "pubSubSecret", topic_perms=["T1=PUB|SUB"], group_perms=["G1=SUB"]),
        "subOnlyKey": Account.build("subOnlyKey", "subSecret", default_topic_perm="SUB", default_group_perm="SUB"),
        "whiteKey": Account.build("whiteKey", "whiteSecret", white_remote_address="10.0.0.*"),
    }
)


def _md(ak: str, sk: str, *, date: str | None = None, upper: bool = False) -> dict[str, str]:
    # signed at call time (a date taken at import goes stale in a long run: older than 15 min is refused as a replay)
    date = date or time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    sig = auth.sign(sk, date)
    sig = sig.upper() if upper else sig
    return {
        "x-mq-date-time": date,
        "authorization": f"MQv2-HMAC-SHA1 Credential={ak}, SignedHeaders=x-mq-date-time, Signature={sig}",
    }


def test_signed_requests_are_authorised_per_account() -> None:
    acl = GrpcAcl(lambda: RULES)
    good = _md("pubSubKey", "pubSubSecret")
    for req in (_route(), _send("T1"), _receive(), _settings(pub=("T1",)), None):
        acl.check(good, "127.0.0.1:5000", req)
    acl.check(_md("pubSubKey", "pubSubSecret", upper=True), "127.0.0.1:5000", _send("T1"))  # Node: uppercase hex
    sub_only = _md("subOnlyKey", "subSecret")
    acl.check(sub_only, "127.0.0.1:5000", _route())  # ANY: SUB is enough to read a route
    acl.check(sub_only, "127.0.0.1:5000", _receive())
    with pytest.raises(AclError, match="No default permission for topic:T1"):
        acl.check(sub_only, "127.0.0.1:5000", _send("T1"))
    with pytest.raises(AclError, match="No default permission for topic:T1"):
        acl.check(sub_only, "127.0.0.1:5000", _settings(pub=("T1",)))
    with pytest.raises(AclError, match="No default permission for topic:T2"):
        acl.check(good, "127.0.0.1:5000", _send("T2"))
    assert acl.denied == 3


@pytest.mark.parametrize(
    ("md", "reason"),
    [
        ({}, "No accessKey is configured"),
        ({"authorization": "MQv2-HMAC-SHA1 Credential=, SignedHeaders=x-mq-date-time, Signature="}, "No accessKey"),
        (_md("nobodyKey", "pubSubSecret"), "No acl config for nobodyKey"),
        (_md("pubSubKey", "wrongSecret"), "Check signature failed for accessKey=pubSubKey"),
        ({**_md("pubSubKey", "pubSubSecret"), "x-mq-date-time": "20261123T203001Z"}, "Check signature failed"),
        ({"authorization": _md("pubSubKey", "pubSubSecret")["authorization"]}, "Check signature failed"),
        (
            {
                **_md("pubSubKey", "pubSubSecret"),
                "authorization": _md("pubSubKey", "pubSubSecret")["authorization"].replace(
                    "MQv2-HMAC-SHA1", "MQv2-HMAC-SHA256"
                ),
            },
            "Check signature failed",
        ),
    ],
    ids=["none", "empty-credentials", "unknown-key", "wrong-secret", "other-date", "no-date", "other-method"],
)
def test_unauthenticated_requests_are_refused(md: dict[str, str], reason: str) -> None:
    with pytest.raises(AclError, match=reason):
        GrpcAcl(lambda: RULES).check(md, "127.0.0.1:5000", _route())


def test_whitelists_skip_the_checks_as_remoting_does() -> None:
    acl = GrpcAcl(lambda: RULES)
    # the account's whiteRemoteAddress skips signature and permissions
    acl.check(_md("whiteKey", "wrongSecret"), "10.0.0.7:5000", _send("anything"))
    with pytest.raises(AclError, match="Check signature failed"):
        acl.check(_md("whiteKey", "wrongSecret"), "10.0.1.7:5000", _send("anything"))
    # the global whitelist needs no credentials at all (IPv6 peers as grpc reports them)
    open_rules = AclRules(RULES.accounts, (parse_address_pattern("::1"),))
    GrpcAcl(lambda: open_rules).check({}, "[::1]:5000", _send("anything"))
    with pytest.raises(AclError, match="No accessKey"):
        GrpcAcl(lambda: open_rules).check({}, "127.0.0.1:5000", _send("anything"))


def test_the_current_rules_are_read_per_request() -> None:
    current = [RULES]
    acl = GrpcAcl(lambda: current[0])
    md = _md("subOnlyKey", "subSecret")
    with pytest.raises(AclError):
        acl.check(md, "127.0.0.1:5000", _send("T1"))
    current[0] = AclRules({"subOnlyKey": Account.build("subOnlyKey", "subSecret", default_topic_perm="PUB")})
    acl.check(md, "127.0.0.1:5000", _send("T1"))
