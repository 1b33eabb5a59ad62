"""The broker's request-code rule table: per remoting request code, whether only an admin account may send it and
which resources (topics, groups) it touches with which permission. Pure: a command in, resource → needed permission
out; the one lookup that needs the store (the topic of a record at a commit-log offset) is a callable the broker
passes in.

This goes beyond J497's ``PlainAccessValidator.parse`` (docs/reference/acl.md §4.1), which checks ten codes and
lets any signed account send every other one, the ACL admin codes 50–54 included. Here every code the broker serves
has a row; a code without a row is **admin-only** (fail closed), so a handler added later without a rule is not
open to every signed account. Groups are resources as ``%RETRY%<group>`` (J's convention).

Needs (``Need.kind``):

=============== =====================================================================================================
kind            resource
=============== =====================================================================================================
topic           the first of ``fields`` present in the ext fields, with ``perm``
group           ``%RETRY%<value>`` of each of ``fields`` present, SUB
send            the topic field ``fields[0]``: PUB; a ``%RETRY%<g>`` topic → SUB on that retry topic itself (the
                group ``g``, 5.3.2's rule, whether or not the header names a group) and, when the group field
                ``fields[1]`` is sent, SUB on that group as well (J's rule); a plain topic: PUB only. Four fields (SEND_BATCH_MESSAGE): the first
                pair when either is present, else the second — the header naming the handler decodes
record          the topic of the stored record at the commit-log offset in ``fields[0]`` (a transaction half
                message: its ``REAL_TOPIC``), with ``perm``; no record there → nothing (the handler answers "not found")
heartbeat       body ``HeartbeatData``: per consumer, SUB on its group and on every subscribed topic
lock            body ``LockBatchRequestBody``: SUB on ``consumerGroup`` and on every queue's topic
=============== =====================================================================================================

A batch (SEND_BATCH_MESSAGE, or a send with ``batch=true``) is stored entirely under the header's topic: the batch
body's messages carry no topic of their own (J ``MessageDecoder.encodeMessages`` writes none, and
``broker.handlers.send`` puts every item into the header topic), so the header topic is every message's topic.

Rows (codes the broker registers; ``admin`` = admin account required, nothing else checked):

=========================================== ==========================================================================
code                                        rule
=========================================== ==========================================================================
SEND_MESSAGE 10 / _V2 310 / BATCH 320        send (10: ``topic``/``group``; 310: ``b``/``a``; 320: either)
PULL_MESSAGE 11                              topic SUB + group ``consumerGroup``
QUERY_MESSAGE 12                             topic SUB
QUERY_CONSUMER_OFFSET 14                     topic SUB + group ``consumerGroup``
UPDATE_CONSUMER_OFFSET 15                    topic SUB + group ``consumerGroup``
29 30 31 32 (offset / time reads)            topic ANY
VIEW_MESSAGE_BY_ID 33                        record ``offset`` SUB
HEART_BEAT 34                                heartbeat
UNREGISTER_CLIENT 35, GET_CONSUMER_LIST 38   group ``consumerGroup``
CONSUMER_SEND_MSG_BACK 36                    group ``group`` + record ``offset`` SUB (the message copied back)
END_TRANSACTION 37                           record ``commitLogOffset`` PUB (the half message's real topic)
LOCK_BATCH_MQ 41 / UNLOCK_BATCH_MQ 42        lock
GET_TOPIC_STATS_INFO 202, 300, 351           topic ANY
203, 307                                     group ``consumerGroup``
GET_CONSUME_STATS 208                        group ``consumerGroup`` + topic SUB (when named)
INVOKE_BROKER_TO_RESET_OFFSET 222            group ``group`` + topic SUB
INVOKE_BROKER_TO_GET_CONSUMER_STATUS 223     group ``group`` + topic SUB
QUERY_CONSUME_TIME_SPAN 303                  group ``group`` + topic SUB
CLONE_GROUP_OFFSET 314                       groups ``srcGroup`` and ``destGroup`` + topic SUB (when named)
QUERY_CONSUME_QUEUE 321                      topic SUB + group ``consumerGroup`` (when named)
signature only                               broker-wide reads without message data: 21 28 43 45 46 201 204 305
                                             315 317 328 907 1007 60001, and the controller reads 1004 1005
                                             1006 1012 (``_SIGNATURE_ONLY``)
admin                                        17 18 25 26 27 50–54 200 205 207 212 215 225 306 309 316 323 327 329
                                             3001–3010, controller writes 904 1001–1003 1008–1011 1013,
                                             and every code without a row
=========================================== ==========================================================================
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from protocol.codes import RequestCode
from protocol.command import RemotingCommand

DENY: Final = 1
ANY: Final = 2
PUB: Final = 4
SUB: Final = 8
RETRY_PREFIX: Final = "%RETRY%"

RecordTopic = Callable[[int], "str | None"]
"""commit-log offset → the topic of the record stored there (None: no record)."""


class RuleError(Exception):
    """A request whose resources cannot be read (a body that does not decode, a resolver missing)."""


@dataclass(frozen=True, slots=True)
class Need:
    kind: str  # topic | group | send | record | heartbeat | lock
    fields: tuple[str, ...] = ()
    perm: int = SUB


@dataclass(frozen=True, slots=True)
class CodeRule:
    admin: bool = False
    needs: tuple[Need, ...] = ()


_ADMIN: Final = CodeRule(admin=True)
_OPEN: Final = CodeRule()


def _topic(*fields: str, perm: int = SUB) -> Need:
    return Need("topic", fields, perm)


def _group(*fields: str) -> Need:
    return Need("group", fields)


def _record(field_name: str, perm: int) -> Need:
    return Need("record", (field_name,), perm)


_SEND_V1: Final = CodeRule(needs=(Need("send", ("topic", "group"), PUB),))
_SEND_V2: Final = CodeRule(needs=(Need("send", ("b", "a"), PUB),))
# SEND_BATCH_MESSAGE: the handler reads the one-letter header when ``b`` or ``a`` is present, else the long one
_SEND_EITHER: Final = CodeRule(needs=(Need("send", ("b", "a", "topic", "group"), PUB),))

_ADMIN_CODES: Final = (
    RequestCode.UPDATE_AND_CREATE_TOPIC,
    RequestCode.UPDATE_BROKER_CONFIG,
    RequestCode.GET_BROKER_CONFIG,  # the config may hold the HA secret and paths
    RequestCode.TRIGGER_DELETE_FILES,
    RequestCode.UPDATE_AND_CREATE_ACL_CONFIG,
    RequestCode.DELETE_ACL_CONFIG,
    RequestCode.GET_BROKER_CLUSTER_ACL_INFO,
    RequestCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG,
    RequestCode.GET_BROKER_CLUSTER_ACL_CONFIG,
    RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP,
    RequestCode.WIPE_WRITE_PERM_OF_BROKER,
    RequestCode.DELETE_SUBSCRIPTIONGROUP,
    RequestCode.DELETE_TOPIC_IN_BROKER,
    RequestCode.CLEAN_EXPIRED_CONSUMEQUEUE,
    RequestCode.CONSUME_MESSAGE_DIRECTLY,
    RequestCode.CLEAN_UNUSED_TOPIC,
    RequestCode.ADD_WRITE_PERM_OF_BROKER,
    RequestCode.DELETE_EXPIRED_COMMITLOG,
    RequestCode.RESET_CONSUMER_OFFSET_IN_BROKER,
    RequestCode.UPDATE_AND_CREATE_TOPIC_LIST,
    RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST,
    RequestCode.RESUME_CHECK_HALF_MESSAGE,  # puts a half message back to be checked again
    *(c for c in RequestCode if 3001 <= c <= 3010),  # ACL 2.0 users and ACLs (J: Cluster Update/Get)
    # controller mode: what changes a broker group's master or replicas, the controller's config, and the
    # controller's role push to a broker
    RequestCode.BROKER_HEARTBEAT,
    RequestCode.CONTROLLER_ALTER_SYNC_STATE_SET,
    RequestCode.CONTROLLER_ELECT_MASTER,
    RequestCode.CONTROLLER_REGISTER_BROKER,
    RequestCode.CONTROLLER_APPLY_BROKER_ID,
    RequestCode.NOTIFY_BROKER_ROLE_CHANGED,
    RequestCode.UPDATE_CONTROLLER_CONFIG,
    RequestCode.GET_CONTROLLER_CONFIG,
    RequestCode.CLEAN_BROKER_DATA,
)

# broker-wide reads that return no message data: any signed account (as J)
_SIGNATURE_ONLY: Final = (
    RequestCode.GET_ALL_TOPIC_CONFIG,
    RequestCode.GET_BROKER_RUNTIME_INFO,
    RequestCode.GET_ALL_CONSUMER_OFFSET,
    RequestCode.GET_ALL_DELAY_OFFSET,
    RequestCode.CHECK_CLIENT_CONFIG,
    RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG,
    RequestCode.GET_PRODUCER_CONNECTION_LIST,
    RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_BROKER,
    RequestCode.VIEW_BROKER_STATS_DATA,
    RequestCode.GET_BROKER_CONSUME_STATS,
    RequestCode.GET_ALL_PRODUCER_INFO,
    RequestCode.GET_BROKER_HA_STATUS,
    RequestCode.CHECK_STORE,
    RequestCode.GET_BROKER_EPOCH_CACHE,  # mqadmin getBrokerEpoch: the broker's <epoch, startOffset> entries
    # controller reads (served by the controller, not the broker; listed so the table covers every code)
    RequestCode.CONTROLLER_GET_REPLICA_INFO,
    RequestCode.CONTROLLER_GET_METADATA_INFO,
    RequestCode.CONTROLLER_GET_SYNC_STATE_DATA,
    RequestCode.CONTROLLER_GET_NEXT_BROKER_ID,
)

CODE_RULES: Final[dict[int, CodeRule]] = {
    **{int(c): _ADMIN for c in _ADMIN_CODES},
    **{int(c): _OPEN for c in _SIGNATURE_ONLY},
    RequestCode.SEND_MESSAGE: _SEND_V1,
    RequestCode.SEND_MESSAGE_V2: _SEND_V2,
    RequestCode.SEND_BATCH_MESSAGE: _SEND_EITHER,
    RequestCode.SEND_REPLY_MESSAGE: _SEND_V1,
    RequestCode.SEND_REPLY_MESSAGE_V2: _SEND_V2,
    RequestCode.PULL_MESSAGE: CodeRule(needs=(_topic("topic"), _group("consumerGroup"))),
    RequestCode.QUERY_MESSAGE: CodeRule(needs=(_topic("topic"),)),
    RequestCode.QUERY_CONSUMER_OFFSET: CodeRule(needs=(_topic("topic"), _group("consumerGroup"))),
    RequestCode.UPDATE_CONSUMER_OFFSET: CodeRule(needs=(_topic("topic"), _group("consumerGroup"))),
    RequestCode.SEARCH_OFFSET_BY_TIMESTAMP: CodeRule(needs=(_topic("topic", perm=ANY),)),
    RequestCode.GET_MAX_OFFSET: CodeRule(needs=(_topic("topic", perm=ANY),)),
    RequestCode.GET_MIN_OFFSET: CodeRule(needs=(_topic("topic", perm=ANY),)),
    RequestCode.GET_EARLIEST_MSG_STORETIME: CodeRule(needs=(_topic("topic", perm=ANY),)),
    RequestCode.VIEW_MESSAGE_BY_ID: CodeRule(needs=(_record("offset", SUB),)),
    RequestCode.HEART_BEAT: CodeRule(needs=(Need("heartbeat"),)),
    RequestCode.UNREGISTER_CLIENT: CodeRule(needs=(_group("consumerGroup"),)),
    RequestCode.GET_CONSUMER_LIST_BY_GROUP: CodeRule(needs=(_group("consumerGroup"),)),
    RequestCode.CONSUMER_SEND_MSG_BACK: CodeRule(needs=(_group("group"), _record("offset", SUB))),
    RequestCode.END_TRANSACTION: CodeRule(needs=(_record("commitLogOffset", PUB),)),
    RequestCode.LOCK_BATCH_MQ: CodeRule(needs=(Need("lock"),)),
    RequestCode.UNLOCK_BATCH_MQ: CodeRule(needs=(Need("lock"),)),
    RequestCode.GET_TOPIC_STATS_INFO: CodeRule(needs=(_topic("topic", perm=ANY),)),
    RequestCode.GET_TOPIC_CONFIG: CodeRule(needs=(_topic("topic", perm=ANY),)),
    RequestCode.QUERY_TOPIC_CONSUME_BY_WHO: CodeRule(needs=(_topic("topic", perm=ANY),)),
    RequestCode.GET_CONSUMER_CONNECTION_LIST: CodeRule(needs=(_group("consumerGroup"),)),
    RequestCode.GET_CONSUMER_RUNNING_INFO: CodeRule(needs=(_group("consumerGroup"),)),
    RequestCode.GET_CONSUME_STATS: CodeRule(needs=(_group("consumerGroup"), _topic("topic"))),
    RequestCode.INVOKE_BROKER_TO_RESET_OFFSET: CodeRule(needs=(_group("group"), _topic("topic"))),
    RequestCode.INVOKE_BROKER_TO_GET_CONSUMER_STATUS: CodeRule(needs=(_group("group"), _topic("topic"))),
    RequestCode.QUERY_CONSUME_TIME_SPAN: CodeRule(needs=(_group("group"), _topic("topic"))),
    RequestCode.CLONE_GROUP_OFFSET: CodeRule(needs=(_group("srcGroup", "destGroup"), _topic("topic"))),
    RequestCode.QUERY_CONSUME_QUEUE: CodeRule(needs=(_topic("topic"), _group("consumerGroup"))),
}

ADMIN_CODES: Final = frozenset(code for code, rule in CODE_RULES.items() if rule.admin)


def rule_for(code: int) -> CodeRule:
    """The row of ``code``; a code without one is admin-only."""
    return CODE_RULES.get(code, _ADMIN)


def _add(out: dict[str, int], resource: str | None, perm: int) -> None:
    if resource and out.get(resource, ANY) == ANY:  # the first specific requirement for a resource stands
        out[resource] = perm


def _send(out: dict[str, int], ext: dict[str, str], fields: tuple[str, ...]) -> None:
    if len(fields) == 4 and fields[0] not in ext and fields[1] not in ext:
        fields = fields[2:]
    topic = ext.get(fields[0])
    if topic is not None and topic.startswith(RETRY_PREFIX):
        _add(out, topic, SUB)
        group = ext.get(fields[1])  # the producer group field (J reads it as the consumer group here)
        if group:
            _add(out, RETRY_PREFIX + group, SUB)
    else:
        _add(out, topic, PUB)


def _heartbeat(out: dict[str, int], body: bytes) -> None:
    from protocol.bodies import HeartbeatData  # cold: one heartbeat per client every 30 s

    try:
        hb = HeartbeatData.decode(body)
    except Exception as exc:
        raise RuleError(f"heartbeat body cannot be read: {type(exc).__name__}") from None
    for cd in hb.consumer_data_set:
        _add(out, RETRY_PREFIX + cd.group_name, SUB)
        for sub in cd.subscription_data_set:
            _add(out, sub.topic, SUB)


def _lock(out: dict[str, int], body: bytes) -> None:
    from protocol.bodies import LockBatchRequestBody  # cold: rebalance of orderly consumers

    try:
        req = LockBatchRequestBody.decode(body)
    except Exception as exc:
        raise RuleError(f"lock body cannot be read: {type(exc).__name__}") from None
    _add(out, RETRY_PREFIX + req.consumer_group, SUB)
    for mq in req.mq_set:
        _add(out, mq.topic, SUB)


def _record_need(out: dict[str, int], ext: dict[str, str], need: Need, record_topic: RecordTopic | None) -> None:
    raw = ext.get(need.fields[0])
    if raw is None:
        return
    try:
        offset = int(raw)
    except ValueError:
        return  # the handler refuses the header
    if offset < 0:
        return
    if record_topic is None:
        raise RuleError(f"no record lookup for {need.fields[0]}")
    _add(out, record_topic(offset), need.perm)


def required_resources(cmd: RemotingCommand, record_topic: RecordTopic | None = None) -> dict[str, int] | None:
    """Resource → needed permission for one request; None when the code is admin-only. RuleError when a body that
    names the resources cannot be read."""
    rule = CODE_RULES.get(cmd.code, _ADMIN)
    if rule.admin:
        return None
    ext = cmd.ext_fields
    out: dict[str, int] = {}
    for need in rule.needs:
        kind = need.kind
        if kind == "send":
            _send(out, ext, need.fields)
        elif kind == "topic":
            for name in need.fields:
                if name in ext:
                    _add(out, ext[name], need.perm)
                    break
        elif kind == "group":
            for name in need.fields:
                value = ext.get(name)
                if value is not None:
                    _add(out, RETRY_PREFIX + value, SUB)
        elif kind == "record":
            _record_need(out, ext, need, record_topic)
        elif kind == "heartbeat":
            _heartbeat(out, cmd.body)
        elif kind == "lock":
            _lock(out, cmd.body)
    return out
