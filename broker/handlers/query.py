"""Message lookups: VIEW_MESSAGE_BY_ID (33) and QUERY_MESSAGE (12) (J ``QueryMessageProcessor``).

* VIEW_MESSAGE_BY_ID: header ``offset`` = the commit-log offset decoded from an offset msgId; the reply body is that
  stored record, byte for byte. Nothing there → SYSTEM_ERROR "can not find message by the offset".
* QUERY_MESSAGE: by a KEYS entry, or by UNIQ_KEY when ``_UNIQUE_KEY_QUERY=true`` (J then caps the count at
  ``defaultQueryMaxNum`` = 32 whatever ``maxNum`` says), within ``[beginTimestamp, endTimestamp]``; the reply body is
  the matching records back to back, ext ``indexLastUpdateTimestamp`` / ``indexLastUpdatePhyoffset``. None →
  QUERY_NOT_FOUND "can not find message, maybe time range not correct".

"View a message by queue offset" (mqadmin queryMsgByOffset) needs no code of its own: J's tool does a PULL of one
message at that offset with any group, which ``broker.handlers.pull`` serves.
"""

from __future__ import annotations

from broker.handlers._common import decode_header
from broker.store.message_store import MessageStore
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.headers import QueryMessageRequestHeader, QueryMessageResponseHeader, ViewMessageRequestHeader
from protocol.remoting.handler import Handler, HandlerError, RequestContext

DEFAULT_QUERY_MAX_NUM = 32


class QueryHandlers:
    def __init__(self, store: MessageStore, *, query_max_num: int = DEFAULT_QUERY_MAX_NUM) -> None:
        self._store = store
        self._max = query_max_num

    def table(self) -> dict[int, Handler]:
        return {RequestCode.VIEW_MESSAGE_BY_ID: self.view_by_id, RequestCode.QUERY_MESSAGE: self.query}

    async def view_by_id(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = decode_header(ViewMessageRequestHeader, cmd)
        raw = self._store.select_one_message_by_offset(h.offset) if h.offset >= 0 else None
        if raw is None:
            raise HandlerError(ResponseCode.SYSTEM_ERROR, "can not find message by the offset")
        return cmd.make_response(body=raw)

    def _index_last_update(self) -> tuple[int, int]:
        index = self._store.index
        files = getattr(index, "files", None) if index is not None else None
        if not files:
            return 0, 0
        last = files[-1]
        return int(getattr(last, "end_ts", 0)), int(getattr(last, "end_phy", 0))

    async def query(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = decode_header(QueryMessageRequestHeader, cmd)
        max_num = self._max if h.unique_key_query else max(1, min(h.max_num, self._max * 2))
        found = self._store.query_message(h.topic, h.key, max_num, h.begin_timestamp, h.end_timestamp)
        ts, phy = self._index_last_update()
        ext = QueryMessageResponseHeader(ts, phy).to_ext_fields()
        if not found:
            resp = cmd.make_response(
                ResponseCode.QUERY_NOT_FOUND, "can not find message, maybe time range not correct", ext
            )
            return resp
        return cmd.make_response(ext_fields=ext, body=b"".join(found))
