"""Offset requests: QUERY_CONSUMER_OFFSET, UPDATE_CONSUMER_OFFSET, GET_MIN_OFFSET, GET_MAX_OFFSET,
SEARCH_OFFSET_BY_TIMESTAMP, GET_EARLIEST_MSG_STORETIME.

QUERY_CONSUMER_OFFSET for a (group, queue) with nothing committed follows J (docs/reference/protocol.md trap 15): when the queue's
min offset is ≤ 0 — nothing was ever deleted from it, so its first message is still there — the answer is SUCCESS
offset 0, and a new group reads the queue from its start whatever its ConsumeFromWhere. Otherwise QUERY_NOT_FOUND
(22) with J's remark, and CONSUME_FROM_LAST_OFFSET consumers ask GET_MAX_OFFSET. (J additionally requires offset 0
to be in the page cache; this broker does not model memory residency, so "still stored" is the test.)
"""

from __future__ import annotations

from broker.handlers._common import decode_header
from broker.services.consumer_offsets import ConsumerOffsetTable
from broker.store.message_store import MessageStore
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.headers import (
    GetEarliestMsgStoretimeRequestHeader,
    GetMaxOffsetRequestHeader,
    GetMinOffsetRequestHeader,
    QueryConsumerOffsetRequestHeader,
    SearchOffsetRequestHeader,
    UpdateConsumerOffsetRequestHeader,
)
from protocol.remoting.handler import Handler, HandlerError, RequestContext

QUERY_NOT_FOUND_REMARK = "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first"


class ConsumerManageHandlers:
    def __init__(self, offsets: ConsumerOffsetTable, store: MessageStore) -> None:
        self._offsets = offsets
        self._store = store

    def table(self) -> dict[int, Handler]:
        return {
            RequestCode.QUERY_CONSUMER_OFFSET: self.query_offset,
            RequestCode.UPDATE_CONSUMER_OFFSET: self.update_offset,
            RequestCode.GET_MIN_OFFSET: self.min_offset,
            RequestCode.GET_MAX_OFFSET: self.max_offset,
            RequestCode.SEARCH_OFFSET_BY_TIMESTAMP: self.search_offset,
            RequestCode.GET_EARLIEST_MSG_STORETIME: self.earliest_time,
        }

    async def query_offset(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = decode_header(QueryConsumerOffsetRequestHeader, cmd)
        offset = self._offsets.query(h.consumer_group, h.topic, h.queue_id)
        if offset >= 0:
            return cmd.make_response(ext_fields={"offset": str(offset)})
        if self._store.get_min_offset_in_queue(h.topic, h.queue_id) <= 0:
            return cmd.make_response(ext_fields={"offset": "0"})
        raise HandlerError(ResponseCode.QUERY_NOT_FOUND, QUERY_NOT_FOUND_REMARK)

    async def update_offset(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = decode_header(UpdateConsumerOffsetRequestHeader, cmd)
        self._offsets.commit(h.consumer_group, h.topic, h.queue_id, h.commit_offset)
        return cmd.make_response()

    async def min_offset(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = decode_header(GetMinOffsetRequestHeader, cmd)
        return cmd.make_response(ext_fields={"offset": str(self._store.get_min_offset_in_queue(h.topic, h.queue_id))})

    async def max_offset(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = decode_header(GetMaxOffsetRequestHeader, cmd)
        return cmd.make_response(ext_fields={"offset": str(self._store.get_max_offset_in_queue(h.topic, h.queue_id))})

    async def search_offset(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = decode_header(SearchOffsetRequestHeader, cmd)
        offset = await self._store.get_offset_in_queue_by_time(h.topic, h.queue_id, h.timestamp, upper=h.upper)
        return cmd.make_response(ext_fields={"offset": str(offset)})

    async def earliest_time(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = decode_header(GetEarliestMsgStoretimeRequestHeader, cmd)
        ts = await self._store.get_earliest_message_time(h.topic, h.queue_id)
        if ts < 0:
            raise HandlerError(ResponseCode.SYSTEM_ERROR, "Not found the earliest message store time")
        return cmd.make_response(ext_fields={"timestamp": str(ts)})
