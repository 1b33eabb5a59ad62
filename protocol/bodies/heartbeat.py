"""Heartbeat bodies (HEART_BEAT) and the subscription data they and the connection lists carry.

| body (class)                           | command(s)                                   | shape                                             |
|----------------------------------------|----------------------------------------------|---------------------------------------------------|
| HeartbeatData                          | HEART_BEAT                                   | {clientID, producerDataSet:[{groupName}],         |
|                                        |                                              |  consumerDataSet:[{groupName, consumeType,        |
|                                        |                                              |  messageModel, consumeFromWhere, unitMode,        |
|                                        |                                              |  subscriptionDataSet:[SubscriptionData]}]}        |
| SubscriptionData                       | (in heartbeats, connections)                 | {topic, subString, tagsSet, codeSet, subVersion,  |
|                                        |                                              |  expressionType, classFilterMode}                 |
| CheckClientRequestBody                 | CHECK_CLIENT_CONFIG                          | {clientId, group, subscriptionData}               |
"""

from __future__ import annotations

from collections.abc import Iterable
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
    _none_is_empty_list,
)
from protocol.bodies.lenient import _enum_name
from protocol.message_properties import tag_hash

# -- heartbeats ------------------------------------------------------------------------------------------------------


class SubscriptionData(JsonBody):
    """One subscription. ``sub_string`` ``*`` or empty = every tag; ``code_set`` is Java ``String.hashCode`` of each
    tag (C++ sends zeros: filter by ``tags_set``)."""

    topic: str
    sub_string: str = Field(default="*", validation_alias="subString", serialization_alias="subString")
    tags_set: list[str] = Field(default_factory=list, validation_alias="tagsSet", serialization_alias="tagsSet")
    code_set: list[int] = Field(default_factory=list, validation_alias="codeSet", serialization_alias="codeSet")
    sub_version: int = Field(default=0, validation_alias="subVersion", serialization_alias="subVersion")
    expression_type: str = Field(default="TAG", validation_alias="expressionType", serialization_alias="expressionType")
    class_filter_mode: bool = Field(
        default=False, validation_alias="classFilterMode", serialization_alias="classFilterMode"
    )

    _none_lists = field_validator("tags_set", "code_set", mode="before")(_none_is_empty_list)

    @field_validator("sub_version", mode="before")
    @classmethod
    def _version(cls, v: Any) -> Any:
        return 0 if v is None or v == "" else v

    @field_validator("expression_type", mode="before")
    @classmethod
    def _etype(cls, v: Any) -> Any:
        return v or "TAG"

    @field_validator("sub_string", mode="before")
    @classmethod
    def _sub(cls, v: Any) -> Any:
        return "*" if v is None else v

    @classmethod
    def of_tags(cls, topic: str, expression: str, tags: Iterable[str], sub_version: int = 0) -> SubscriptionData:
        """A TAG subscription as J's ``FilterAPI.buildSubscriptionData`` makes it: the tags sorted, each with its
        Java ``String.hashCode``."""
        ordered = sorted(tags)
        return cls(
            topic=topic,
            sub_string=expression,
            tags_set=ordered,
            code_set=[tag_hash(t) for t in ordered],
            sub_version=sub_version,
        )


class ConsumerData(JsonBody):
    group_name: str = Field(validation_alias="groupName", serialization_alias="groupName")
    consume_type: ConsumeType = Field(
        default=ConsumeType.CONSUME_PASSIVELY, validation_alias="consumeType", serialization_alias="consumeType"
    )
    message_model: MessageModel = Field(
        default=MessageModel.CLUSTERING, validation_alias="messageModel", serialization_alias="messageModel"
    )
    consume_from_where: ConsumeFromWhere = Field(
        default=ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET,
        validation_alias="consumeFromWhere",
        serialization_alias="consumeFromWhere",
    )
    subscription_data_set: list[SubscriptionData] = Field(
        default_factory=list, validation_alias="subscriptionDataSet", serialization_alias="subscriptionDataSet"
    )
    unit_mode: bool = Field(default=False, validation_alias="unitMode", serialization_alias="unitMode")

    _none_lists = field_validator("subscription_data_set", mode="before")(_none_is_empty_list)

    @field_validator("consume_type", mode="before")
    @classmethod
    def _ct(cls, v: Any) -> Any:
        return _enum_name(v, CONSUME_TYPES, "consumeType")

    @field_validator("message_model", mode="before")
    @classmethod
    def _mm(cls, v: Any) -> Any:
        return _enum_name(v, MESSAGE_MODELS, "messageModel")

    @field_validator("consume_from_where", mode="before")
    @classmethod
    def _cfw(cls, v: Any) -> Any:
        return _enum_name(v, CONSUME_FROM_WHERE, "consumeFromWhere")


class ProducerData(JsonBody):
    group_name: str = Field(validation_alias="groupName", serialization_alias="groupName")


class HeartbeatData(JsonBody):
    """HEART_BEAT body. C++ sends ordinals, sorted keys, a trailing newline and no ``consumerDataSet`` for a pure
    producer; ali-ons sends names and ``subVersion`` as a number; all of it reads the same."""

    client_id: str = Field(validation_alias="clientID", serialization_alias="clientID")
    producer_data_set: list[ProducerData] = Field(
        default_factory=list, validation_alias="producerDataSet", serialization_alias="producerDataSet"
    )
    consumer_data_set: list[ConsumerData] = Field(
        default_factory=list, validation_alias="consumerDataSet", serialization_alias="consumerDataSet"
    )

    _none_lists = field_validator("producer_data_set", "consumer_data_set", mode="before")(_none_is_empty_list)


class CheckClientRequestBody(JsonBody):
    """CHECK_CLIENT_CONFIG body: the J consumer sends one per non-TAG subscription before it starts."""

    client_id: str = Field(default="", validation_alias="clientId", serialization_alias="clientId")
    group: str = ""
    subscription_data: SubscriptionData | None = Field(
        default=None, validation_alias="subscriptionData", serialization_alias="subscriptionData"
    )
