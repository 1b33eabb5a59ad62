"""The ACL rule table against a real broker: one attempt per registered request code per account class (admin,
normal limited to topicA/groupA, unsigned), generated from ``runtime.acl.code_rules``; then the insider attacks of
issue 34, each named, with the effect checked (nothing stored, no account changed, no offset moved)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from broker.app import BrokerApp
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.msg_id import decode_offset_msg_id
from protocol.remoting import RemotingClient
from runtime.acl.code_rules import CODE_RULES, Need, rule_for
from tests.harness import run_broker
from tests.integration.acl_support import ADMIN, NORMAL, create_topic_cmd, refused, signed, write_acl
from tests.integration.broker_wire import batch_body, heartbeat_cmd, send_cmd, simple_cmd

LIMITED: list[dict[str, Any]] = [
    {"accessKey": "rocketmq2", "secretKey": "12345678", "admin": True},
    {
        "accessKey": "RocketMQ",
        "secretKey": "12345678",
        "admin": False,
        "defaultTopicPerm": "DENY",
        "defaultGroupPerm": "DENY",
        "topicPerms": ["topicA=PUB|SUB"],
        "groupPerms": ["groupA=SUB"],
    },
]


@dataclass
class Site:
    broker: BrokerApp
    client: RemotingClient
    offsets: dict[str, int]  # topic → commit-log offset of one of its records

    async def call(self, cmd: RemotingCommand, creds: Any) -> RemotingCommand:
        return await self.client.invoke(self.broker.addr, signed(cmd, creds), 5.0)


@pytest.fixture
async def site(tmp_path: Path) -> AsyncIterator[Site]:
    home = tmp_path / "home"
    write_acl(home, LIMITED)
    async with run_broker(None, tmp_path, aclEnable=True, rocketmqHome=home) as broker:
        client = RemotingClient()
        try:
            offsets: dict[str, int] = {}
            for topic in ("topicA", "topicB"):
                r = await client.invoke(broker.addr, signed(create_topic_cmd(topic), ADMIN), 5.0)
                assert r.code == ResponseCode.SUCCESS, r.remark
                r = await client.invoke(
                    broker.addr, signed(send_cmd(topic, b"secret of " + topic.encode()), ADMIN), 5.0
                )
                assert r.code == ResponseCode.SUCCESS, r.remark
                offsets[topic] = decode_offset_msg_id(r.ext_fields["msgId"])[2]
            for group in ("groupA", "groupB"):
                body = json.dumps({"groupName": group}).encode()
                cmd = RemotingCommand.request(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, {}, body)
                r = await client.invoke(broker.addr, signed(cmd, ADMIN), 5.0)
                assert r.code == ResponseCode.SUCCESS, r.remark
            yield Site(broker, client, offsets)
        finally:
            await client.close()


def _lock_body(group: str, topic: str) -> bytes:
    mq = {"topic": topic, "brokerName": "broker-a", "queueId": 0}
    return json.dumps({"consumerGroup": group, "clientId": "c1", "mqSet": [mq]}).encode()


def build(code: int, side: str, offsets: dict[str, int]) -> RemotingCommand:
    """A request for ``code`` whose every resource from the rule table is the normal account's own (``side`` "A")
    or another tenant's ("B")."""
    topic, group = f"topic{side}", f"group{side}"
    ext: dict[str, str] = {}
    body = b""
    needs: tuple[Need, ...] = rule_for(code).needs
    for need in needs:
        if need.kind in ("topic", "send"):
            ext[need.fields[0]] = topic
        elif need.kind == "group":
            for name in need.fields:
                ext[name] = group
        elif need.kind == "record":
            ext[need.fields[0]] = str(offsets[topic])
        elif need.kind == "heartbeat":
            return heartbeat_cmd("c1", group, topic)
        elif need.kind == "lock":
            body = _lock_body(group, topic)
    if code == RequestCode.SEND_BATCH_MESSAGE:
        body = batch_body([(b"x", {})])
    return RemotingCommand.request(code, ext, body)


async def test_every_registered_code_has_a_rule_and_each_account_class_gets_its_outcome(site: Site) -> None:
    assert site.broker.wiring is not None
    registered = site.broker.wiring.registry.codes()
    missing = sorted(c for c in registered if c not in CODE_RULES)
    assert not missing, f"request codes without a row in runtime.acl.code_rules: {missing}"
    assert RequestCode.UPDATE_AND_CREATE_ACL_CONFIG in registered
    for code in sorted(registered):
        rule = rule_for(code)
        for side in ("A", "B"):
            # unsigned: refused whatever the code
            r = await site.call(build(code, side, site.offsets), None)
            assert refused(r) and "No accessKey" in (r.remark or ""), (code, side, r.remark)
            # the normal account
            r = await site.call(build(code, side, site.offsets), NORMAL)
            if rule.admin:
                assert refused(r) and f"Need admin permission for request code={code}" in (r.remark or ""), code
            elif side == "B" and rule.needs:
                assert refused(r) and "No default permission for" in (r.remark or ""), (code, r.remark)
            else:
                assert not refused(r), (code, side, r.remark)
        # admin: allowed (handlers may still refuse the made-up arguments, never the ACL)
        if code not in (RequestCode.DELETE_ACL_CONFIG, RequestCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG):
            r = await site.call(build(code, "B", site.offsets), ADMIN)
            assert not refused(r), (code, r.remark)
    # a code nobody registered: admin-only (fail closed), so an admin gets the handler's answer
    r = await site.call(RemotingCommand.request(9999, {}), NORMAL)
    assert refused(r) and "Need admin permission for request code=9999" in (r.remark or "")
    r = await site.call(RemotingCommand.request(9999, {}), ADMIN)
    assert r.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED


async def _max_offset(site: Site, topic: str) -> int:
    r = await site.call(simple_cmd(RequestCode.GET_MAX_OFFSET, topic=topic, queueId=0), ADMIN)
    assert r.code == ResponseCode.SUCCESS, r.remark
    return int(r.ext_fields["offset"])


async def test_attack_normal_account_makes_itself_admin_or_deletes_the_admin(site: Site) -> None:
    grab = simple_cmd(
        RequestCode.UPDATE_AND_CREATE_ACL_CONFIG, accessKey="RocketMQ", secretKey="12345678", admin="true"
    )
    r = await site.call(grab, NORMAL)
    assert refused(r) and "Need admin permission for request code=50" in (r.remark or "")
    r = await site.call(simple_cmd(RequestCode.DELETE_ACL_CONFIG, accessKey="rocketmq2"), NORMAL)
    assert refused(r)
    r = await site.call(simple_cmd(RequestCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG, globalWhiteAddrs="127.0.0.1"), NORMAL)
    assert refused(r)
    for code in (RequestCode.GET_BROKER_CLUSTER_ACL_INFO, RequestCode.GET_BROKER_CLUSTER_ACL_CONFIG):
        assert refused(await site.call(simple_cmd(code), NORMAL))
    # nothing changed: still not admin, the admin still works, unsigned deletes still refused
    assert refused(await site.call(simple_cmd(RequestCode.DELETE_TOPIC_IN_BROKER, topic="topicB"), NORMAL))
    assert refused(await site.call(simple_cmd(RequestCode.DELETE_TOPIC_IN_BROKER, topic="topicB"), None))
    r = await site.call(simple_cmd(RequestCode.GET_BROKER_CLUSTER_ACL_INFO), ADMIN)
    assert r.code == ResponseCode.SUCCESS
    assert site.broker.topics.get("topicB") is not None


async def test_attack_batch_send_into_another_tenants_topic(site: Site) -> None:
    before = await _max_offset(site, "topicB")
    for ext in ({"a": "pg", "b": "topicB", "c": "TBW102", "d": "4", "e": "0", "f": "0", "g": "0", "h": "0"},
                {"producerGroup": "pg", "topic": "topicB", "queueId": "0", "sysFlag": "0", "bornTimestamp": "0",
                 "flag": "0"}):  # fmt: skip
        cmd = RemotingCommand.request(RequestCode.SEND_BATCH_MESSAGE, ext, batch_body([(b"x", {}), (b"y", {})]))
        r = await site.call(cmd, NORMAL)
        assert refused(r) and "topic:topicB" in (r.remark or "")
    # SEND_MESSAGE with batch=true (the C++ client's batches) is checked the same way
    cmd = send_cmd("topicB", batch_body([(b"x", {})]))
    cmd.ext_fields["batch"] = "true"
    assert refused(await site.call(cmd, NORMAL))
    assert await _max_offset(site, "topicB") == before
    # the own topic still takes batches
    ok = send_cmd("topicA", batch_body([(b"x", {}), (b"y", {})]), v2=True)
    ok.code = RequestCode.SEND_BATCH_MESSAGE
    r = await site.call(ok, NORMAL)
    assert r.code == ResponseCode.SUCCESS, r.remark


async def test_attack_send_to_another_groups_retry_topic_without_a_group_field(site: Site) -> None:
    for v2 in (False, True):
        r = await site.call(send_cmd("%RETRY%groupB", b"poison", v2=v2), NORMAL)
        assert refused(r) and "group:groupB" in (r.remark or ""), r.remark
        # naming one's own group in the header does not help
        cmd = send_cmd("%RETRY%groupB", b"poison", v2=v2, group="groupA")
        assert refused(await site.call(cmd, NORMAL))
    assert site.broker.topics.get("%RETRY%groupB") is None or await _max_offset(site, "%RETRY%groupB") == 0
    r = await site.call(send_cmd("%RETRY%groupA", b"mine", v2=True, group="groupA"), NORMAL)
    assert not refused(r), r.remark


async def test_attack_view_message_by_id_at_another_topics_offset(site: Site) -> None:
    r = await site.call(simple_cmd(RequestCode.VIEW_MESSAGE_BY_ID, offset=site.offsets["topicB"]), NORMAL)
    assert refused(r) and "topic:topicB" in (r.remark or "") and b"secret" not in r.body
    r = await site.call(simple_cmd(RequestCode.VIEW_MESSAGE_BY_ID, offset=site.offsets["topicA"]), NORMAL)
    assert r.code == ResponseCode.SUCCESS and b"secret of topicA" in r.body
    # copying topicB's record into one's own retry topic with a send-back is the same read
    back = simple_cmd(RequestCode.CONSUMER_SEND_MSG_BACK, group="groupA", offset=site.offsets["topicB"], delayLevel=0)
    assert refused(await site.call(back, NORMAL))


async def test_attack_reset_clone_and_lock_another_groups_offsets(site: Site) -> None:
    commit = simple_cmd(
        RequestCode.UPDATE_CONSUMER_OFFSET, consumerGroup="groupB", topic="topicB", queueId=0, commitOffset=1
    )
    assert (await site.call(commit, ADMIN)).code == ResponseCode.SUCCESS
    attacks = [
        simple_cmd(RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, topic="topicB", group="groupB", timestamp=0),
        simple_cmd(RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, topic="topicA", group="groupB", timestamp=0),
        simple_cmd(RequestCode.CLONE_GROUP_OFFSET, srcGroup="groupA", destGroup="groupB", topic="topicA"),
        simple_cmd(RequestCode.CLONE_GROUP_OFFSET, srcGroup="groupB", destGroup="groupA", topic="topicA"),
        RemotingCommand.request(RequestCode.LOCK_BATCH_MQ, {}, _lock_body("groupB", "topicA")),
        RemotingCommand.request(RequestCode.UNLOCK_BATCH_MQ, {}, _lock_body("groupB", "topicA")),
        RemotingCommand.request(RequestCode.LOCK_BATCH_MQ, {}, _lock_body("groupA", "topicB")),
        simple_cmd(RequestCode.QUERY_CONSUMER_OFFSET, consumerGroup="groupB", topic="topicB", queueId=0),
    ]
    for cmd in attacks:
        r = await site.call(cmd, NORMAL)
        assert refused(r), (cmd.code, cmd.ext_fields, r.remark)
    q = simple_cmd(RequestCode.QUERY_CONSUMER_OFFSET, consumerGroup="groupB", topic="topicB", queueId=0)
    r = await site.call(q, ADMIN)
    assert r.ext_fields.get("offset") == "1"  # groupB was not moved
