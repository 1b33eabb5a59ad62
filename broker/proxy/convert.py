"""Conversions between apache.rocketmq.v2 messages and the broker's stored messages (RocketMQ 5 proxy
``GrpcConverter`` / ``SendMessageActivity`` behaviour), and the SendMessage validations. Pure: no IO, no asyncio.

A 5.x message is stored as a remoting message with these properties (RocketMQ's names, so 4.x consumers read it):

================================== ============================== ===============================================
v2 field                           stored property / flag          note
================================== ============================== ===============================================
system_properties.message_id       UNIQ_KEY                        the client's id, echoed in the send receipt
system_properties.tag              TAGS
system_properties.keys             KEYS                            joined with a space
system_properties.message_group    __SHARDINGKEY                   FIFO; also picks the queue (hash)
system_properties.delivery_timestamp TIMER_DELIVER_MS                the timer (``TimerService``), exact
message_type TRANSACTION           TRAN_MSG=true, PGROUP=topic     sysFlag TRANSACTION_PREPARED, via transactions
orphaned_transaction_recovery_dur. CHECK_IMMUNITY_TIME_IN_SECONDS
system_properties.born_host        __BORNHOST
system_properties.trace_context    TRACE_CONTEXT
body_encoding GZIP                 sysFlag COMPRESSED
user_properties                    as given                        reserved names refused
================================== ============================== ===============================================

On delivery: ``message_type`` from TRAN_MSG / TIMER_DELIVER_MS or DELAY / __SHARDINGKEY, ``body_digest`` MD5 in
UPPERCASE hex (the Python client compares case-sensitively), ``dead_letter_queue`` from DLQ_ORIGIN_TOPIC /
DLQ_ORIGIN_MESSAGE_ID, and user properties = every property not in ``RESERVED_KEYS`` except __SHARDINGKEY and
TRANSACTION_CHECK_TIMES (as J's proxy delivers them).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Final

from google.protobuf.timestamp_pb2 import Timestamp

from broker.proxy.pb import definition_pb2 as pb
from broker.services.send import NEXT_QUEUE, SendRequest
from protocol.codes import ResponseCode
from protocol.message_ext import MessageExt
from protocol.message_properties import PropertyKey, encode_properties
from protocol.record import SYSFLAG_COMPRESSED

SHARDING_KEY: Final = "__SHARDINGKEY"
TIMER_DELIVER_MS: Final = "TIMER_DELIVER_MS"
BORN_HOST: Final = "__BORNHOST"
TRACE_CONTEXT: Final = "TRACE_CONTEXT"
DLQ_ORIGIN_TOPIC: Final = "DLQ_ORIGIN_TOPIC"
DLQ_ORIGIN_MESSAGE_ID: Final = "DLQ_ORIGIN_MESSAGE_ID"

# RocketMQ MessageConst.STRING_HASH_SET (5.3): user properties may not use these names.
RESERVED_KEYS: Final = frozenset(
    {v for k, v in vars(PropertyKey).items() if k.isupper() and isinstance(v, str) and v != PropertyKey.TRANSACTION_ID}
    | {
        SHARDING_KEY,
        TIMER_DELIVER_MS,
        BORN_HOST,
        TRACE_CONTEXT,
        DLQ_ORIGIN_TOPIC,
        DLQ_ORIGIN_MESSAGE_ID,
        "TIMER_DELAY_SEC",
        "TIMER_DELAY_MS",
        "TIMER_OUT_MS",
        "TIMER_ENQUEUE_MS",
        "TIMER_DEQUEUE_MS",
        "TIMER_ROLL_TIMES",
        "TIMER_DEL_UNIQKEY",
        "__STARTDELIVERTIME",
        "POP_CK",
        "POP_CK_OFFSET",
        "1ST_POP_TIME",
        "BORN_TIMESTAMP",
        "INNER_NUM",
        "INNER_BASE",
        "TRAN_PREPARED_QUEUE_OFFSET",
        "WAIT",
        "DELAY",
        "REAL_TOPIC",
        "REAL_QID",
    }
)
# Delivered as user properties all the same: Apache RocketMQ 5.5.0's proxy hides only MessageConst.STRING_HASH_SET,
# which lacks __SHARDINGKEY and TRANSACTION_CHECK_TIMES, so its 5.x clients see a FIFO message's group and a checked
# transaction's check count there (and __transactionId__, never reserved) (tests/reference).
DELIVERY_HIDDEN: Final = RESERVED_KEYS - {SHARDING_KEY, PropertyKey.TRANSACTION_CHECK_TIMES}
_BAD_TAG = re.compile(r"[|\x00-\x1f\x7f]")


class InvalidMessage(ValueError):
    """A message the endpoint refuses; ``code`` is the v2 Code the client gets."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class Limits:
    max_body: int
    max_props_num: int
    max_props_size: int
    max_group_size: int
    max_delay_ms: int


@dataclass(slots=True)
class Outgoing:
    """A v2 message ready for ``MessageStore.put_message`` (or ``TransactionService.put_half``)."""

    topic: str
    body: bytes
    sys_flag: int
    born_timestamp: int
    properties: dict[str, str]
    message_id: str
    message_group: str
    delivery_ms: int  # 0 = no delay
    transactional: bool

    def request(self, born_host: str) -> SendRequest:
        """The send service's request for this message from ``born_host`` (the gRPC peer): the queue picked in
        turn (or by the message group's hash), every system topic refused (5.x clients send to none)."""
        return SendRequest(
            self.topic, NEXT_QUEUE, 0, self.sys_flag, self.born_timestamp, born_host, self.body,
            encode_properties(self.properties),
            prepared=self.transactional, message_group=self.message_group, client_topics_only=True,
        )  # fmt: skip


def from_v2(m: pb.Message, limits: Limits, now_ms: int) -> Outgoing:
    """Validate a SendMessage entry and build its stored form; raises InvalidMessage."""
    sp = m.system_properties
    if not sp.message_id:
        raise InvalidMessage(pb.Code.ILLEGAL_MESSAGE_ID, "message id is required")
    if not m.body:
        raise InvalidMessage(pb.Code.MESSAGE_BODY_EMPTY, "message body cannot be empty")
    if len(m.body) > limits.max_body:
        raise InvalidMessage(
            pb.Code.MESSAGE_BODY_TOO_LARGE, f"message body cannot exceed the max {limits.max_body} bytes"
        )
    user = dict(m.user_properties)
    if len(user) > limits.max_props_num:
        raise InvalidMessage(
            pb.Code.MESSAGE_PROPERTIES_TOO_LARGE, f"too many user properties, max is {limits.max_props_num}"
        )
    size = 0
    for k, v in user.items():
        if k in RESERVED_KEYS:
            raise InvalidMessage(pb.Code.ILLEGAL_MESSAGE_PROPERTY_KEY, f"property key {k} is reserved")
        if not k or "\x01" in k or "\x02" in k or "\x01" in v or "\x02" in v:
            raise InvalidMessage(pb.Code.ILLEGAL_MESSAGE_PROPERTY_KEY, f"property {k!r} has illegal characters")
        size += len(k.encode()) + len(v.encode())
    if size > limits.max_props_size:
        raise InvalidMessage(
            pb.Code.MESSAGE_PROPERTIES_TOO_LARGE, f"user properties exceed the max {limits.max_props_size} bytes"
        )
    props = dict(user)
    props[PropertyKey.UNIQ_KEY] = sp.message_id
    if sp.HasField("tag"):
        if not sp.tag.strip() or _BAD_TAG.search(sp.tag):
            raise InvalidMessage(pb.Code.ILLEGAL_MESSAGE_TAG, f"tag {sp.tag!r} is illegal")
        props[PropertyKey.TAGS] = sp.tag
    keys = [k for k in sp.keys if k]
    for k in keys:
        if not k.strip() or _BAD_TAG.search(k):
            raise InvalidMessage(pb.Code.ILLEGAL_MESSAGE_KEY, f"key {k!r} is illegal")
    if keys:
        props[PropertyKey.KEYS] = " ".join(keys)
    group = sp.message_group if sp.HasField("message_group") else ""
    if group:
        if len(group.encode()) >= limits.max_group_size or _BAD_TAG.search(group):
            raise InvalidMessage(pb.Code.ILLEGAL_MESSAGE_GROUP, f"message group {group!r} is illegal")
        props[SHARDING_KEY] = group
    delivery_ms = 0
    if sp.HasField("delivery_timestamp"):
        delivery_ms = sp.delivery_timestamp.ToMilliseconds()
        if delivery_ms - now_ms > limits.max_delay_ms:
            raise InvalidMessage(
                pb.Code.ILLEGAL_DELIVERY_TIME, f"delivery time exceeds the max delay of {limits.max_delay_ms} ms"
            )
        if delivery_ms > now_ms:
            props[TIMER_DELIVER_MS] = str(delivery_ms)
        else:
            delivery_ms = 0
    transactional = sp.message_type == pb.MessageType.TRANSACTION
    if transactional:
        props[PropertyKey.TRAN_MSG] = "true"
        props[PropertyKey.PGROUP] = m.topic.name
        if sp.HasField("orphaned_transaction_recovery_duration"):
            secs = sp.orphaned_transaction_recovery_duration.seconds
            if secs > 0:
                props[PropertyKey.CHECK_IMMUNITY_TIME_IN_SECONDS] = str(secs)
    if sp.born_host:
        props[BORN_HOST] = sp.born_host
    if sp.HasField("trace_context") and sp.trace_context:
        props[TRACE_CONTEXT] = sp.trace_context
    sys_flag = SYSFLAG_COMPRESSED if sp.body_encoding == pb.Encoding.GZIP else 0
    born = sp.born_timestamp.ToMilliseconds() if sp.HasField("born_timestamp") else now_ms
    return Outgoing(
        m.topic.name, bytes(m.body), sys_flag, born, props, sp.message_id, group, delivery_ms, transactional
    )


def _ts(ms: int) -> Timestamp:
    t = Timestamp()
    t.FromMilliseconds(ms)
    return t


def message_type(props: dict[str, str]) -> int:
    if props.get(PropertyKey.TRAN_MSG) == "true":
        return pb.MessageType.TRANSACTION
    if TIMER_DELIVER_MS in props or props.get(PropertyKey.DELAY, "0") not in ("", "0"):
        return pb.MessageType.DELAY
    if props.get(SHARDING_KEY):
        return pb.MessageType.FIFO
    return pb.MessageType.NORMAL


def to_v2(
    m: MessageExt,
    *,
    receipt_handle: str | None = None,
    attempt: int | None = None,
    topic: str | None = None,
    queue_id: int | None = None,
    queue_offset: int | None = None,
) -> pb.Message:
    """A stored message as the v2 Message a consumer (or a transaction checker) gets."""
    props = m.properties
    out = pb.Message()
    out.topic.name = topic if topic is not None else m.topic
    out.body = m.body
    for k, v in props.items():
        if k not in DELIVERY_HIDDEN:
            out.user_properties[k] = v
    sp = out.system_properties
    if m.tags is not None:
        sp.tag = m.tags
    sp.keys.extend(m.keys)
    sp.message_id = m.msg_id
    sp.body_digest.type = pb.DigestType.MD5
    sp.body_digest.checksum = hashlib.md5(m.body).hexdigest().upper()
    sp.body_encoding = pb.Encoding.GZIP if m.sys_flag & SYSFLAG_COMPRESSED else pb.Encoding.IDENTITY
    sp.message_type = message_type(props)  # type: ignore[assignment]
    sp.born_timestamp.CopyFrom(_ts(m.born_timestamp))
    sp.born_host = props.get(BORN_HOST) or m.born_host[0]
    sp.store_timestamp.CopyFrom(_ts(m.store_timestamp))
    sp.store_host = f"{m.store_host[0]}:{m.store_host[1]}"
    if TIMER_DELIVER_MS in props and props[TIMER_DELIVER_MS].isdigit():
        sp.delivery_timestamp.CopyFrom(_ts(int(props[TIMER_DELIVER_MS])))
    if receipt_handle is not None:
        sp.receipt_handle = receipt_handle
    sp.queue_id = m.queue_id if queue_id is None else queue_id
    sp.queue_offset = m.queue_offset if queue_offset is None else queue_offset
    sp.delivery_attempt = attempt if attempt is not None else m.reconsume_times + 1
    if props.get(SHARDING_KEY):
        sp.message_group = props[SHARDING_KEY]
    if props.get(TRACE_CONTEXT):
        sp.trace_context = props[TRACE_CONTEXT]
    if props.get(DLQ_ORIGIN_TOPIC):
        sp.dead_letter_queue.topic = props[DLQ_ORIGIN_TOPIC]
        sp.dead_letter_queue.message_id = props.get(DLQ_ORIGIN_MESSAGE_ID, "")
    return out


def expression_type(fe: pb.FilterExpression) -> str:
    """J ``GrpcConverter.buildExpressionType``: SQL → ``SQL92``, anything else ``TAG``."""
    return "SQL92" if fe.type == pb.FilterType.SQL else "TAG"


def timer_refusal_code(response_code: int) -> int:
    """The gRPC code of a timer message the broker refuses: a bad delivery time, or the timer switched off."""
    return (
        pb.Code.ILLEGAL_DELIVERY_TIME
        if response_code == ResponseCode.MESSAGE_ILLEGAL
        else pb.Code.INTERNAL_SERVER_ERROR
    )
