"""Name-server lists, orderly-consumption locks, connections and admin inspection bodies.

| body (class)                           | command(s)                                   | shape                                             |
|----------------------------------------|----------------------------------------------|---------------------------------------------------|
| ClusterInfo                            | GET_BROKER_CLUSTER_INFO reply                | {brokerAddrTable:{name:BrokerData},               |
|                                        |                                              |  clusterAddrTable:{cluster:[brokerName]}}         |
| TopicList                              | GET_ALL_TOPIC_LIST…, GET_TOPICS_BY_CLUSTER   | {topicList:[...], brokerAddr}                     |
| KVTable                                | GET_KVLIST_BY_NAMESPACE, GET_BROKER_RUNTIME_ | {table:{k:v}}                                     |
|                                        | INFO, REGISTER_BROKER reply                  |                                                   |
| ConsumerListBody                       | GET_CONSUMER_LIST_BY_GROUP reply             | {consumerIdList:[clientId]}                       |
| LockBatchRequestBody (both)            | LOCK_BATCH_MQ / UNLOCK_BATCH_MQ              | {consumerGroup, clientId, mqSet:[MQ],             |
|                                        |                                              |  onlyThisBroker}                                  |
| LockBatchResponseBody                  | LOCK_BATCH_MQ reply                          | {lockOKMQSet:[MQ]}                                |
| ConsumerConnection                     | GET_CONSUMER_CONNECTION_LIST reply           | {connectionSet:[{clientId, clientAddr, language,  |
|                                        |                                              |  version}], subscriptionTable:{topic:SubData},    |
|                                        |                                              |  consumeType, messageModel, consumeFromWhere}     |
| ProducerConnection                     | GET_PRODUCER_CONNECTION_LIST reply           | {connectionSet:[Connection]}                      |
| GroupList                              | QUERY_TOPIC_CONSUME_BY_WHO reply             | {groupList:[group]}                               |
| QueryConsumeTimeSpanBody               | QUERY_CONSUME_TIME_SPAN reply                | {consumeTimeSpanSet:[{consumeTimeStamp,           |
|                                        |                                              |  delayTime, maxTimeStamp, messageQueue:MQ,        |
|                                        |                                              |  minTimeStamp}]}                                  |
| QueryConsumeQueueResponseBody          | QUERY_CONSUME_QUEUE reply                    | {filterData, maxQueueIndex, minQueueIndex,        |
|                                        |                                              |  queueData:[{bitMap, eval, extendDataJson, msg,   |
|                                        |                                              |  physicOffset, physicSize, tagsCode}],            |
|                                        |                                              |  subscriptionData:SubscriptionData|null}          |
| ConsumeMessageDirectlyResult           | CONSUME_MESSAGE_DIRECTLY reply (client)      | {autoCommit, consumeResult:CMResult, order,       |
|                                        |                                              |  remark, spentTimeMills}                          |
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

from pydantic import (
    Field,
    field_validator,
)

from protocol.bodies.base import (
    CONSUME_FROM_WHERE,
    CONSUME_TYPES,
    MESSAGE_MODELS,
    ConsumeFromWhere,
    ConsumeType,
    JsonBody,
    MessageModel,
    _none_is_empty_dict,
    _none_is_empty_list,
)
from protocol.bodies.heartbeat import SubscriptionData
from protocol.bodies.lenient import _dumps, _enum_name
from protocol.bodies.mq import MQ
from protocol.bodies.routes import BrokerData
from protocol.codes import LanguageCode

# -- name-server lists -----------------------------------------------------------------------------------------------


class ClusterInfo(JsonBody):
    broker_addr_table: dict[str, BrokerData] = Field(
        default_factory=dict, validation_alias="brokerAddrTable", serialization_alias="brokerAddrTable"
    )
    cluster_addr_table: dict[str, list[str]] = Field(
        default_factory=dict, validation_alias="clusterAddrTable", serialization_alias="clusterAddrTable"
    )

    _none = field_validator("broker_addr_table", "cluster_addr_table", mode="before")(_none_is_empty_dict)


class TopicList(JsonBody):
    topic_list: list[str] = Field(default_factory=list, validation_alias="topicList", serialization_alias="topicList")
    broker_addr: str | None = Field(default=None, validation_alias="brokerAddr", serialization_alias="brokerAddr")

    _none = field_validator("topic_list", mode="before")(_none_is_empty_list)


class GroupList(JsonBody):
    """QUERY_TOPIC_CONSUME_BY_WHO reply (J ``GroupList``, a HashSet on the J side: order carries no meaning)."""

    group_list: list[str] = Field(default_factory=list, validation_alias="groupList", serialization_alias="groupList")

    _none = field_validator("group_list", mode="before")(_none_is_empty_list)


class KVTable(JsonBody):
    table: dict[str, str] = Field(default_factory=dict)

    @field_validator("table", mode="before")
    @classmethod
    def _text_values(cls, v: Any) -> Any:
        """J's runtime-info table holds strings; tolerate numbers and booleans by keeping their text."""
        if isinstance(v, dict):
            return {k: (_dumps(x) if isinstance(x, bool | int | float) else x) for k, x in v.items()}
        return _none_is_empty_dict(v)


class ConsumerListBody(JsonBody):
    consumer_id_list: list[str] = Field(
        default_factory=list, validation_alias="consumerIdList", serialization_alias="consumerIdList"
    )

    _none = field_validator("consumer_id_list", mode="before")(_none_is_empty_list)


# -- orderly consumption locks ---------------------------------------------------------------------------------------


class LockBatchRequestBody(JsonBody):
    consumer_group: str = Field(validation_alias="consumerGroup", serialization_alias="consumerGroup")
    client_id: str = Field(validation_alias="clientId", serialization_alias="clientId")
    mq_set: list[MQ] = Field(default_factory=list, validation_alias="mqSet", serialization_alias="mqSet")
    only_this_broker: bool = Field(
        default=False, validation_alias="onlyThisBroker", serialization_alias="onlyThisBroker"
    )

    _none = field_validator("mq_set", mode="before")(_none_is_empty_list)


class LockBatchResponseBody(JsonBody):
    lock_ok_mq_set: list[MQ] = Field(
        default_factory=list, validation_alias="lockOKMQSet", serialization_alias="lockOKMQSet"
    )

    _none = field_validator("lock_ok_mq_set", mode="before")(_none_is_empty_list)


# -- connections -----------------------------------------------------------------------------------------------------


class Connection(JsonBody):
    client_id: str = Field(validation_alias="clientId", serialization_alias="clientId")
    client_addr: str = Field(default="", validation_alias="clientAddr", serialization_alias="clientAddr")
    language: str = "JAVA"
    version: int = 0

    @field_validator("language", mode="before")
    @classmethod
    def _lang(cls, v: Any) -> Any:
        if isinstance(v, int) and not isinstance(v, bool):
            return LanguageCode(v).name if 0 <= v < len(LanguageCode) else LanguageCode.OTHER.name
        return v


class ConsumerConnection(JsonBody):
    connection_set: list[Connection] = Field(
        default_factory=list, validation_alias="connectionSet", serialization_alias="connectionSet"
    )
    subscription_table: dict[str, SubscriptionData] = Field(
        default_factory=dict, validation_alias="subscriptionTable", serialization_alias="subscriptionTable"
    )
    consume_type: ConsumeType | None = Field(
        default=None, validation_alias="consumeType", serialization_alias="consumeType"
    )
    message_model: MessageModel | None = Field(
        default=None, validation_alias="messageModel", serialization_alias="messageModel"
    )
    consume_from_where: ConsumeFromWhere | None = Field(
        default=None, validation_alias="consumeFromWhere", serialization_alias="consumeFromWhere"
    )

    _none_list = field_validator("connection_set", mode="before")(_none_is_empty_list)
    _none_dict = field_validator("subscription_table", mode="before")(_none_is_empty_dict)

    @field_validator("consume_type", mode="before")
    @classmethod
    def _ct(cls, v: Any) -> Any:
        return None if v is None else _enum_name(v, CONSUME_TYPES, "consumeType")

    @field_validator("message_model", mode="before")
    @classmethod
    def _mm(cls, v: Any) -> Any:
        return None if v is None else _enum_name(v, MESSAGE_MODELS, "messageModel")

    @field_validator("consume_from_where", mode="before")
    @classmethod
    def _cfw(cls, v: Any) -> Any:
        return None if v is None else _enum_name(v, CONSUME_FROM_WHERE, "consumeFromWhere")


class ProducerConnection(JsonBody):
    connection_set: list[Connection] = Field(
        default_factory=list, validation_alias="connectionSet", serialization_alias="connectionSet"
    )

    _none = field_validator("connection_set", mode="before")(_none_is_empty_list)


# -- admin inspection (consume queues, time spans, direct consumption) ---------------------------------------------


def _dumps_sorted(obj: Any) -> bytes:
    """Compact JSON with every object's keys in alphabetical order, as fastjson writes a bean."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode("utf-8")


class QueueTimeSpan(JsonBody):
    """One queue in QueryConsumeTimeSpanBody: store times (ms) of its first and last message, of the group's last
    consumed message, and how far the group is behind (J leaves out nothing but the ``…Str`` display getters)."""

    consume_time_stamp: int = Field(
        default=0, validation_alias="consumeTimeStamp", serialization_alias="consumeTimeStamp"
    )
    delay_time: int = Field(default=0, validation_alias="delayTime", serialization_alias="delayTime")
    max_time_stamp: int = Field(default=0, validation_alias="maxTimeStamp", serialization_alias="maxTimeStamp")
    message_queue: MQ = Field(validation_alias="messageQueue", serialization_alias="messageQueue")
    min_time_stamp: int = Field(default=0, validation_alias="minTimeStamp", serialization_alias="minTimeStamp")


class QueryConsumeTimeSpanBody(JsonBody):
    """QUERY_CONSUME_TIME_SPAN reply: ``{"consumeTimeSpanSet":[QueueTimeSpan,…]}``."""

    consume_time_span_set: list[QueueTimeSpan] = Field(
        default_factory=list, validation_alias="consumeTimeSpanSet", serialization_alias="consumeTimeSpanSet"
    )

    _none = field_validator("consume_time_span_set", mode="before")(_none_is_empty_list)

    def encode(self) -> bytes:
        return _dumps_sorted(self.to_json())


class ConsumeQueueData(JsonBody):
    """One consume-queue unit in QueryConsumeQueueResponseBody. ``extendDataJson``/``bitMap``/``eval`` describe J's
    consume-queue extension (SQL92 bloom filters), which this store does not have: null/false."""

    bit_map: str | None = Field(default=None, validation_alias="bitMap", serialization_alias="bitMap")
    eval: bool = False
    extend_data_json: str | None = Field(
        default=None, validation_alias="extendDataJson", serialization_alias="extendDataJson"
    )
    msg: str | None = None
    physic_offset: int = Field(default=0, validation_alias="physicOffset", serialization_alias="physicOffset")
    physic_size: int = Field(default=0, validation_alias="physicSize", serialization_alias="physicSize")
    tags_code: int = Field(default=0, validation_alias="tagsCode", serialization_alias="tagsCode")


class QueryConsumeQueueResponseBody(JsonBody):
    """QUERY_CONSUME_QUEUE reply: the queue's live range, the units read, and the named group's subscription."""

    filter_data: str | None = Field(default=None, validation_alias="filterData", serialization_alias="filterData")
    max_queue_index: int = Field(default=0, validation_alias="maxQueueIndex", serialization_alias="maxQueueIndex")
    min_queue_index: int = Field(default=0, validation_alias="minQueueIndex", serialization_alias="minQueueIndex")
    queue_data: list[ConsumeQueueData] = Field(
        default_factory=list, validation_alias="queueData", serialization_alias="queueData"
    )
    subscription_data: SubscriptionData | None = Field(
        default=None, validation_alias="subscriptionData", serialization_alias="subscriptionData"
    )

    _none = field_validator("queue_data", mode="before")(_none_is_empty_list)

    def encode(self) -> bytes:
        return _dumps_sorted(self.to_json())


class CMResult(StrEnum):
    """J ``CMResult``: how a consumer's listener handled a CONSUME_MESSAGE_DIRECTLY message."""

    CR_SUCCESS = "CR_SUCCESS"
    CR_LATER = "CR_LATER"
    CR_ROLLBACK = "CR_ROLLBACK"
    CR_COMMIT = "CR_COMMIT"
    CR_THROW_EXCEPTION = "CR_THROW_EXCEPTION"
    CR_RETURN_NULL = "CR_RETURN_NULL"


class ConsumeMessageDirectlyResult(JsonBody):
    """A consumer's reply body to CONSUME_MESSAGE_DIRECTLY (relayed by the broker as bytes)."""

    auto_commit: bool = Field(default=True, validation_alias="autoCommit", serialization_alias="autoCommit")
    consume_result: CMResult | None = Field(
        default=None, validation_alias="consumeResult", serialization_alias="consumeResult"
    )
    order: bool = False
    remark: str | None = None
    spent_time_mills: int = Field(default=0, validation_alias="spentTimeMills", serialization_alias="spentTimeMills")

    @field_validator("consume_result", mode="before")
    @classmethod
    def _cr(cls, v: Any) -> Any:
        return None if v is None else _enum_name(v, tuple(e.value for e in CMResult), "consumeResult")

    def to_json(self) -> dict[str, Any]:
        """As fastjson writes it: null fields left out (``remark`` only after an exception)."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)
