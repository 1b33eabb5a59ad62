"""Topic administration: UPDATE_AND_CREATE_TOPIC (17), DELETE_TOPIC_IN_BROKER (215), GET_ALL_TOPIC_CONFIG (21)
(J ``AdminBrokerProcessor``, 4.9.7).

* create/update: the name must pass TopicValidator (SYSTEM_ERROR with its text), must not be a system topic
  ("The topic[t] is conflict with system topic.") nor the cluster name ("the topic[t] is conflict with system
  reserved words."); queue counts must be 1..1024 here (J does not check; 0 queues makes a topic no client can use).
  The change is persisted and registered with the name servers at once (the topic table's change listeners).
* delete: blank → SYSTEM_ERROR; system topics are refused; the topic's config, its consume queues
  (``MessageStore.delete_topics``) and every group's committed offsets on it are removed. Deleting an unknown topic
  succeeds (J).
* list: ``{"topicConfigTable":{name:TopicConfig},"dataVersion":{"timestamp","counter"}}``.
"""

from __future__ import annotations

import structlog

from broker import topics as T
from broker.handlers._common import decode_header
from broker.services.consumer_offsets import ConsumerOffsetTable
from broker.services.topic_config import TopicConfig, TopicConfigTable
from broker.store.message_store import MessageStore
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.headers import CreateTopicRequestHeader, TopicRequestHeader
from protocol.remoting.handler import Handler, HandlerError, RequestContext

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
            RequestCode.DELETE_TOPIC_IN_BROKER: self.delete_topic,
            RequestCode.GET_ALL_TOPIC_CONFIG: self.all_topics,
        }

    async def create_topic(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = decode_header(CreateTopicRequestHeader, cmd)
        bad = T.topic_error(h.topic)
        if bad is not None:
            raise HandlerError(ResponseCode.SYSTEM_ERROR, bad)
        if is_system_topic(h.topic):
            raise HandlerError(ResponseCode.SYSTEM_ERROR, f"The topic[{h.topic}] is conflict with system topic.")
        if h.topic == self._cluster:
            raise HandlerError(
                ResponseCode.SYSTEM_ERROR, f"the topic[{h.topic}] is conflict with system reserved words."
            )
        for name, n in (("readQueueNums", h.read_queue_nums), ("writeQueueNums", h.write_queue_nums)):
            if not 1 <= n <= MAX_QUEUE_NUMS:
                raise HandlerError(ResponseCode.SYSTEM_ERROR, f"{name}={n} is out of range [1, {MAX_QUEUE_NUMS}]")
        tc = TopicConfig(
            h.topic,
            h.read_queue_nums,
            h.write_queue_nums,
            h.perm,
            h.topic_filter_type or "SINGLE_TAG",
            h.topic_sys_flag,
            h.order,
        )
        self._topics.put(tc)
        _log.info(
            "topic created or updated",
            topic=h.topic,
            read=tc.read_queue_nums,
            write=tc.write_queue_nums,
            perm=tc.perm,
            peer=ctx.conn.peer,
        )
        return cmd.make_response()

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
