"""Topic administration: UPDATE_AND_CREATE_TOPIC (17), UPDATE_AND_CREATE_TOPIC_LIST (18), DELETE_TOPIC_IN_BROKER
(215), GET_ALL_TOPIC_CONFIG (21), GET_TOPIC_CONFIG (351) (J ``AdminBrokerProcessor``, 4.9.7 and 5.5).

* create/update: the name must pass TopicValidator (SYSTEM_ERROR with its text), must not be a system topic
  ("The topic[t] is conflict with system topic.") nor the cluster name ("the topic[t] is conflict with system
  reserved words."); queue counts must be 1..1024 here (J does not check; 0 queues makes a topic no client can use).
  The change is persisted and registered with the name servers at once (the topic table's change listeners).
  5.x ``attributes`` (``+message.type=FIFO,...``) are applied to the topic's current ones as J does
  (``protocol.topic_attributes``; a refused modification answers SYSTEM_ERROR with J's text, MIXED
  INVALID_PARAMETER "MIXED message type is not supported.").
* create a list (18): body ``{"topicConfigList":[TopicConfig]}``, each validated as above (attributes in the
  body's map, keys signed ``+``/``-`` as the header's), all applied or none.
* delete: blank → SYSTEM_ERROR; system topics are refused; the topic's config, its consume queues
  (``MessageStore.delete_topics``) and every group's committed offsets on it are removed. Deleting an unknown topic
  succeeds (J).
* list: ``{"topicConfigTable":{name:TopicConfig},"dataVersion":{"timestamp","counter"}}``.
* one (351): J's ``TopicConfigAndQueueMapping`` JSON, the TopicConfig (with ``attributes``) and no ``mappingDetail``
  (no static topics here); an unknown topic answers TOPIC_NOT_EXIST "No topic in this broker. topic: <t>".
"""

from __future__ import annotations

import structlog

from broker import topics as T
from broker.handlers._common import decode_header
from broker.services.consumer_offsets import ConsumerOffsetTable
from broker.services.topic_config import TopicConfigTable
from broker.store.message_store import MessageStore
from protocol.bodies import BodyDecodeError, CreateTopicListRequestBody, TopicConfig
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.headers import CreateTopicRequestHeader, GetTopicConfigRequestHeader, TopicRequestHeader
from protocol.remoting.handler import Handler, HandlerError, RequestContext
from protocol.topic_attributes import (
    MixedMessageTypeError,
    TopicAttributeError,
    apply_modification,
    parse_modification,
)

_log = structlog.get_logger("rocketq.broker.admin")

SYSTEM_TOPICS = T.SYSTEM_TOPIC_SET
MAX_QUEUE_NUMS = 1024


def is_system_topic(topic: str) -> bool:
    return topic in SYSTEM_TOPICS or topic.startswith(T.SYSTEM_TOPIC_PREFIX)


class AdminTopicHandlers:
    def __init__(
        self, topics: TopicConfigTable, offsets: ConsumerOffsetTable, store: MessageStore, *, cluster_name: str
    ) -> None:
        self._topics = topics
        self._offsets = offsets
        self._store = store
        self._cluster = cluster_name

    def table(self) -> dict[int, Handler]:
        return {
            RequestCode.UPDATE_AND_CREATE_TOPIC: self.create_topic,
            RequestCode.UPDATE_AND_CREATE_TOPIC_LIST: self.create_topic_list,
            RequestCode.DELETE_TOPIC_IN_BROKER: self.delete_topic,
            RequestCode.GET_ALL_TOPIC_CONFIG: self.all_topics,
            RequestCode.GET_TOPIC_CONFIG: self.topic_config,
        }

    async def create_topic(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = decode_header(CreateTopicRequestHeader, cmd)
        try:
            modification = parse_modification(h.attributes)
        except TopicAttributeError as exc:
            raise HandlerError(ResponseCode.SYSTEM_ERROR, str(exc)) from None
        wire = TopicConfig(
            topic_name=h.topic,
            read_queue_nums=h.read_queue_nums,
            write_queue_nums=h.write_queue_nums,
            perm=h.perm,
            topic_filter_type=h.topic_filter_type or "SINGLE_TAG",
            topic_sys_flag=h.topic_sys_flag,
            order=h.order,
            attributes=modification,
        )
        tc = self._validated(wire)
        self._topics.put(tc)
        self._log_put(tc, ctx)
        return cmd.make_response()

    async def create_topic_list(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        try:
            body = CreateTopicListRequestBody.decode(cmd.body)
        except BodyDecodeError as exc:
            raise HandlerError(ResponseCode.SYSTEM_ERROR, f"bad topic list body: {exc}") from None
        configs = [self._validated(wire) for wire in body.topic_config_list]  # all valid, or none applied
        for tc in configs:
            self._topics.put(tc)
            self._log_put(tc, ctx)
        return cmd.make_response()

    def _validated(self, wire: TopicConfig) -> TopicConfig:
        """The topic config a create/update request asks for, its attribute modification applied to the current
        attributes; HandlerError with J's answer when it is refused."""
        topic = wire.topic_name
        bad = T.topic_error(topic)
        if bad is not None:
            raise HandlerError(ResponseCode.SYSTEM_ERROR, bad)
        if is_system_topic(topic):
            raise HandlerError(ResponseCode.SYSTEM_ERROR, f"The topic[{topic}] is conflict with system topic.")
        if topic == self._cluster:
            raise HandlerError(ResponseCode.SYSTEM_ERROR, f"the topic[{topic}] is conflict with system reserved words.")
        for name, n in (("readQueueNums", wire.read_queue_nums), ("writeQueueNums", wire.write_queue_nums)):
            if not 1 <= n <= MAX_QUEUE_NUMS:
                raise HandlerError(ResponseCode.SYSTEM_ERROR, f"{name}={n} is out of range [1, {MAX_QUEUE_NUMS}]")
        current = self._topics.get(topic)
        try:
            attributes = apply_modification(current is None, current.attributes if current else {}, wire.attributes)
        except TopicAttributeError as exc:
            code = (
                ResponseCode.INVALID_PARAMETER if isinstance(exc, MixedMessageTypeError) else ResponseCode.SYSTEM_ERROR
            )
            raise HandlerError(code, str(exc)) from None
        return wire.model_copy(
            update={
                "topic_name": topic,
                "topic_filter_type": wire.topic_filter_type or "SINGLE_TAG",
                "attributes": attributes,
            }
        )

    def _log_put(self, tc: TopicConfig, ctx: RequestContext) -> None:
        _log.info(
            "topic created or updated",
            topic=tc.topic_name,
            read=tc.read_queue_nums,
            write=tc.write_queue_nums,
            perm=tc.perm,
            attributes=tc.attributes,
            peer=ctx.conn.peer,
        )

    async def topic_config(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = decode_header(GetTopicConfigRequestHeader, cmd)
        tc = self._topics.get(h.topic)
        if tc is None:
            return cmd.make_response(ResponseCode.TOPIC_NOT_EXIST, f"No topic in this broker. topic: {h.topic}")
        return cmd.make_response(body=tc.encode())

    async def delete_topic(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = decode_header(TopicRequestHeader, cmd)
        if not h.topic.strip():
            raise HandlerError(ResponseCode.SYSTEM_ERROR, "The specified topic is blank.")
        if is_system_topic(h.topic):
            raise HandlerError(ResponseCode.SYSTEM_ERROR, f"The topic[{h.topic}] is conflict with system topic.")
        self._topics.delete(h.topic)
        queues = self._store.delete_topics({h.topic})
        self._offsets.remove_topic(h.topic)
        _log.info("topic deleted", topic=h.topic, queues=queues, peer=ctx.conn.peer)
        return cmd.make_response()

    async def all_topics(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        return cmd.make_response(body=self._topics.encode())
