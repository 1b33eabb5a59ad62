"""JSON bodies of the remoting protocol (cold paths: heartbeats, routes, admin), modelled with pydantic.

Readers are lenient where the official clients differ (``protocol.md`` §d):

* enums arrive as J/ali-ons names (``"CLUSTERING"``) or C++ ordinals (``1``); both map to the name;
* ``subVersion`` arrives as a number (J, ali-ons) or a string (C++);
* fastjson writes maps with numeric keys unquoted (``{0:"addr"}``): ``loads_lenient`` quotes them first;
* unknown keys are ignored.

Writers produce standard JSON with quoted keys, which all three official clients parse. Bodies that J writes with
object keys (ResetOffsetBody for J clients) are hand-written by ``encode_reset_offset_body``.

| body                 | shape                                                                                          |
|----------------------|------------------------------------------------------------------------------------------------|
| HeartbeatData        | {clientID, producerDataSet:[{groupName}], consumerDataSet:[{groupName, consumeType,           |
|                      |  messageModel, consumeFromWhere, subscriptionDataSet:[{topic, subString, tagsSet, codeSet,      |
|                      |  subVersion, expressionType}], unitMode}]}                                                      |
| LockBatchRequestBody | {consumerGroup, clientId, mqSet:[{topic, brokerName, queueId}]}                                |
| LockBatchResponse    | {lockOKMQSet:[{topic, brokerName, queueId}]}                                                   |
| ResetOffsetBody (J)  | {"offsetTable":{{"brokerName":b,"queueId":q,"topic":t}:offset}}   (object keys, not JSON)       |
| ResetOffsetBody (C)  | {"offsetTable":[{"brokerName":b,"offset":o,"queueId":q,"topic":t}]}                            |
| TopicConfig          | {topicName, readQueueNums, writeQueueNums, perm, topicFilterType, topicSysFlag, order}         |
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

CONSUME_TYPES: Final = ("CONSUME_ACTIVELY", "CONSUME_PASSIVELY")
MESSAGE_MODELS: Final = ("BROADCASTING", "CLUSTERING")
CONSUME_FROM_WHERE: Final = (
    "CONSUME_FROM_LAST_OFFSET",
    "CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST",
    "CONSUME_FROM_MIN_OFFSET",
    "CONSUME_FROM_MAX_OFFSET",
    "CONSUME_FROM_FIRST_OFFSET",
    "CONSUME_FROM_TIMESTAMP",
)
PERM_READ: Final = 4
PERM_WRITE: Final = 2
PERM_INHERIT: Final = 1

_UNQUOTED_KEY = re.compile(r"([{,])\s*(-?\d+)\s*:")


def loads_lenient(data: bytes | str) -> Any:
    """``json.loads`` that also takes fastjson's unquoted numeric keys."""
    text = data.decode("utf-8") if isinstance(data, bytes | bytearray) else data
    try:
        return json.loads(text)
    except ValueError:
        return json.loads(_UNQUOTED_KEY.sub(r'\1"\2":', text))


def dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _enum(value: Any, names: tuple[str, ...], field: str) -> str:
    if isinstance(value, bool):
        raise ValueError(f"{field}: boolean is not an enum value")
    if isinstance(value, int) or (isinstance(value, str) and value.isdigit()):
        i = int(value)
        if 0 <= i < len(names):
            return names[i]
        raise ValueError(f"{field}: ordinal {i} out of range")
    if isinstance(value, str) and value in names:
        return value
    raise ValueError(f"{field}: unknown value {value!r}")


class _Model(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="ignore", frozen=True)


class SubscriptionData(_Model):
    topic: str
    sub_string: str = Field("*", alias="subString")
    tags_set: list[str] = Field(default_factory=list, alias="tagsSet")
    code_set: list[int] = Field(default_factory=list, alias="codeSet")
    sub_version: int = Field(0, alias="subVersion")
    expression_type: str = Field("TAG", alias="expressionType")
    class_filter_mode: bool = Field(False, alias="classFilterMode")

    @field_validator("sub_version", mode="before")
    @classmethod
    def _version(cls, v: Any) -> int:
        return int(v) if v not in (None, "") else 0

    @field_validator("expression_type", mode="before")
    @classmethod
    def _etype(cls, v: Any) -> str:
        return v or "TAG"

    @field_validator("sub_string", mode="before")
    @classmethod
    def _sub(cls, v: Any) -> str:
        return "*" if v is None else str(v)


class ConsumerData(_Model):
    group_name: str = Field(alias="groupName")
    consume_type: str = Field("CONSUME_PASSIVELY", alias="consumeType")
    message_model: str = Field("CLUSTERING", alias="messageModel")
    consume_from_where: str = Field("CONSUME_FROM_LAST_OFFSET", alias="consumeFromWhere")
    subscription_data_set: list[SubscriptionData] = Field(default_factory=list, alias="subscriptionDataSet")
    unit_mode: bool = Field(False, alias="unitMode")

    @field_validator("consume_type", mode="before")
    @classmethod
    def _ct(cls, v: Any) -> str:
        return _enum(v, CONSUME_TYPES, "consumeType")

    @field_validator("message_model", mode="before")
    @classmethod
    def _mm(cls, v: Any) -> str:
        return _enum(v, MESSAGE_MODELS, "messageModel")

    @field_validator("consume_from_where", mode="before")
    @classmethod
    def _cfw(cls, v: Any) -> str:
        return _enum(v, CONSUME_FROM_WHERE, "consumeFromWhere")


class ProducerData(_Model):
    group_name: str = Field(alias="groupName")


class HeartbeatData(_Model):
    client_id: str = Field(alias="clientID")
    producer_data_set: list[ProducerData] = Field(default_factory=list, alias="producerDataSet")
    consumer_data_set: list[ConsumerData] = Field(default_factory=list, alias="consumerDataSet")

    @field_validator("producer_data_set", "consumer_data_set", mode="before")
    @classmethod
    def _none_is_empty(cls, v: Any) -> Any:
        return [] if v is None else v

    @classmethod
    def decode(cls, body: bytes) -> HeartbeatData:
        """Parse a HEART_BEAT body; ValueError (with the reason) for anything unusable."""
        if not body:
            raise ValueError("empty heartbeat body")
        try:
            raw = loads_lenient(body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ValueError(f"not JSON: {exc}") from None
        try:
            return cls.model_validate(raw)
        except ValidationError as exc:
            raise ValueError(str(exc.errors(include_url=False)[:3])) from None

    def encode(self) -> bytes:
        return dumps(self.model_dump(by_alias=True))


class MessageQueueData(_Model):
    topic: str
    broker_name: str = Field(alias="brokerName")
    queue_id: int = Field(alias="queueId")

    def key(self) -> tuple[str, str, int]:
        return self.topic, self.broker_name, self.queue_id


class LockBatchRequestBody(_Model):
    consumer_group: str = Field(alias="consumerGroup")
    client_id: str = Field(alias="clientId")
    mq_set: list[MessageQueueData] = Field(default_factory=list, alias="mqSet")

    @classmethod
    def decode(cls, body: bytes) -> LockBatchRequestBody:
        try:
            return cls.model_validate(loads_lenient(body))
        except (ValidationError, ValueError, UnicodeDecodeError) as exc:
            raise ValueError(f"bad LockBatchRequestBody: {exc}") from None

    def encode(self) -> bytes:
        return dumps(self.model_dump(by_alias=True))


def encode_lock_response(mqs: list[tuple[str, str, int]]) -> bytes:
    return dumps({"lockOKMQSet": [{"topic": t, "brokerName": b, "queueId": q} for t, b, q in mqs]})


def encode_reset_offset_body(offsets: dict[tuple[str, str, int], int], *, cpp: bool) -> bytes:
    """ResetOffsetBody: the list form for C++ clients, J's object-key form otherwise."""
    if cpp:
        return dumps(
            {
                "offsetTable": [
                    {"brokerName": b, "offset": o, "queueId": q, "topic": t} for (t, b, q), o in sorted(offsets.items())
                ]
            }
        )
    parts = [
        dumps({"brokerName": b, "queueId": q, "topic": t}).decode() + ":" + str(o)
        for (t, b, q), o in sorted(offsets.items())
    ]
    return ('{"offsetTable":{' + ",".join(parts) + "}}").encode()


def decode_reset_offset_body(body: bytes) -> dict[tuple[str, str, int], int]:
    """Both ResetOffsetBody forms."""
    text = body.decode("utf-8")
    out: dict[tuple[str, str, int], int] = {}
    try:
        raw = json.loads(text)
    except ValueError:
        raw = None
    if isinstance(raw, dict) and isinstance(raw.get("offsetTable"), list):
        for e in raw["offsetTable"]:
            out[(str(e["topic"]), str(e["brokerName"]), int(e["queueId"]))] = int(e["offset"])
        return out
    for m in re.finditer(r"(\{[^{}]*\})\s*:\s*(-?\d+)", text):
        d = json.loads(m.group(1))
        out[(str(d["topic"]), str(d["brokerName"]), int(d["queueId"]))] = int(m.group(2))
    return out


class TopicConfigData(_Model):
    topic_name: str = Field(alias="topicName")
    read_queue_nums: int = Field(16, alias="readQueueNums")
    write_queue_nums: int = Field(16, alias="writeQueueNums")
    perm: int = PERM_READ | PERM_WRITE
    topic_filter_type: str = Field("SINGLE_TAG", alias="topicFilterType")
    topic_sys_flag: int = Field(0, alias="topicSysFlag")
    order: bool = False

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True)


def encode_consumer_list(ids: list[str]) -> bytes:
    return dumps({"consumerIdList": ids})


def encode_topic_list(topics: list[str]) -> bytes:
    return dumps({"topicList": sorted(topics)})


def encode_kv_table(table: dict[str, str]) -> bytes:
    return dumps({"table": table})
