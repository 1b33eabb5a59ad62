"""Admin → broker → consumers: INVOKE_BROKER_TO_RESET_OFFSET (222) and INVOKE_BROKER_TO_GET_CONSUMER_STATUS (223)
(J ``Broker2Client.resetOffset / getConsumeStatus``).

Reset (header topic, group, timestamp ms, isForce):

1. unknown topic → SYSTEM_ERROR "[reset-offset] reset offset failed, no topic in this broker. topic=<t>";
2. per write queue of the topic: the target offset is the queue's max offset for timestamp -1, else the first
   offset stored at or after ``timestamp`` (binary search over store times). Without ``isForce`` a queue only moves
   back: the target is kept only when it is below the committed offset, else the committed one stays. A queue with
   nothing committed takes the target (J refuses the whole request when any queue has no committed offset; here
   that is only when the group has committed nothing at all for the topic: SYSTEM_ERROR
   "THe consumer group <g> not exist");
3. no consumer of the group connected: as J 5.5 with its default ``useServerSideResetOffset=true``, the stored
   offsets are reset (every read queue to its offset at ``timestamp``, ``isForce`` or not) and the reply is SUCCESS
   with the table — when the broker knows the group (its subscription group, or offsets it committed); a group it
   knows nothing of answers SUBSCRIPTION_GROUP_NOT_EXIST (26) "Group <g> does not exist", nothing changed. (J 4.9.7
   answered CONSUMER_NOT_ONLINE and changed nothing; the 5.5 mqadmin falls back to its old client-side way then);
4. otherwise the broker's committed offsets are set to the table (so a consumer that restarts before committing
   still starts there), and RESET_CONSUMER_CLIENT_OFFSET (220) goes oneway to every channel of the group: the C
   list body and ``isForce`` "1"/"0" for channels whose requests are in language CPP, J's object-key body and
   "true"/"false" for the others; then the group's pulls held on the topic are answered at once (see
   ``LongPollingService.release_group``: the client cannot restart a dropped queue before its last pull returns);
5. the reply is SUCCESS with the J-form ResetOffsetBody.

Consumer status (header topic, group, optional clientAddr = one client id): GET_CONSUMER_STATUS_FROM_CLIENT (221) is
sent to each client of the group (or just the named one), 5 s each; the reply is
``{"consumerTable":{"<clientId>":<that client's messageQueueTable>},"messageQueueTable":{}}``. A client's table is
relayed verbatim as text (its keys are MessageQueue objects, not valid JSON); a client body that is not of that
shape is relayed whole as a JSON string. No consumer online → SYSTEM_ERROR "No Any Consumer online in the consumer
group: [<g>]".
"""

from __future__ import annotations

import json
from collections.abc import Callable

import structlog

from broker.handlers._common import decode_header
from broker.services.group_state import GroupStateTables
from protocol.bodies import encode_reset_offset_body
from protocol.codes import LanguageCode, RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.errors import RemotingError
from protocol.headers import GetConsumerStatusRequestHeader, ResetOffsetRequestHeader
from protocol.remoting.handler import Handler, HandlerError, RequestContext

_log = structlog.get_logger("rocketq.broker.offset_reset")

CLIENT_TIMEOUT_S = 5.0


def extract_json_value(text: str, key: str) -> str | None:
    """The raw text of ``"key": <object>`` in ``text`` by brace matching (fastjson object keys are not JSON)."""
    marker = f'"{key}"'
    i = text.find(marker)
    if i < 0:
        return None
    i = text.find(":", i + len(marker))
    if i < 0:
        return None
    j = i + 1
    while j < len(text) and text[j] in " \t\r\n":
        j += 1
    if j >= len(text) or text[j] != "{":
        return None
    depth, k, in_str = 0, j, False
    while k < len(text):
        c = text[k]
        if in_str:
            if c == "\\":
                k += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return text[j : k + 1]
        k += 1
    return None


class OffsetResetHandlers:
    def __init__(
        self,
        tables: GroupStateTables,
        release_held_pulls: Callable[[str, str], int],
        *,
        broker_name: str,
    ) -> None:
        self._release_held_pulls = release_held_pulls
        self._store, self._topics, self._groups, self._offsets, self._clients = tables
        self._broker_name = broker_name

    def table(self) -> dict[int, Handler]:
        return {
            RequestCode.INVOKE_BROKER_TO_RESET_OFFSET: self.reset_offset,
            RequestCode.INVOKE_BROKER_TO_GET_CONSUMER_STATUS: self.consumer_status,
        }

    def compute(
        self, topic: str, group: str, timestamp: int, force: bool, *, offline: bool = False
    ) -> dict[tuple[str, str, int], int]:
        tc = self._topics.get(topic)
        if tc is None:
            raise HandlerError(
                ResponseCode.SYSTEM_ERROR, f"[reset-offset] reset offset failed, no topic in this broker. topic={topic}"
            )
        committed = self._offsets.query_all(group, topic)
        if offline:
            if self._groups.get(group) is None and not self._offsets.topics_of_group(group):
                raise HandlerError(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, f"Group {group} does not exist")
            committed, force = {}, True  # J 5.5 resetOffsetInner: every queue to the time's offset
        elif not committed:
            raise HandlerError(ResponseCode.SYSTEM_ERROR, f"THe consumer group <{group}> not exist")
        table: dict[tuple[str, str, int], int] = {}
        for qid in range(tc.read_queue_nums if offline else tc.write_queue_nums):
            if timestamp == -1:
                target = self._store.get_max_offset_in_queue(topic, qid)
            else:
                target = self._store.get_offset_in_queue_by_time_sync(topic, qid, timestamp)
            target = max(target, 0)
            current = committed.get(qid, -1)
            if not force and 0 <= current <= target:
                target = current
            table[(topic, self._broker_name, qid)] = target
        return table

    async def reset_offset(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = decode_header(ResetOffsetRequestHeader, cmd)
        grp = self._clients.consumer_group(h.group)
        channels = [c for c in grp.channels.values() if not c.channel.is_closed] if grp is not None else []
        table = self.compute(h.topic, h.group, h.timestamp, h.is_force, offline=not channels)
        for (topic, _b, qid), off in table.items():
            self._offsets.commit(h.group, topic, qid, off)
        header = ResetOffsetRequestHeader(h.topic, h.group, h.timestamp, h.is_force)
        for info in channels:
            cpp = info.language == LanguageCode.CPP or info.channel.language == LanguageCode.CPP
            req = RemotingCommand.request(
                RequestCode.RESET_CONSUMER_CLIENT_OFFSET,
                header.to_ext_fields(numeric_bool=cpp),
                encode_reset_offset_body(table, cpp=cpp),
                oneway=True,
            )
            try:
                info.channel.invoke_oneway(req)
            except RemotingError as exc:
                _log.warning("reset offset push failed", group=h.group, client_id=info.client_id, error=str(exc))
        woken = self._release_held_pulls(h.group, h.topic)
        _log.info(
            "consumer offsets reset",
            group=h.group,
            topic=h.topic,
            timestamp=h.timestamp,
            queues=len(table),
            held_pulls_answered=woken,
        )
        return cmd.make_response(body=encode_reset_offset_body(table, cpp=False))

    async def consumer_status(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = decode_header(GetConsumerStatusRequestHeader, cmd)
        grp = self._clients.consumer_group(h.group)
        channels = [c for c in grp.channels.values() if not c.channel.is_closed] if grp is not None else []
        if not channels:
            raise HandlerError(ResponseCode.SYSTEM_ERROR, f"No Any Consumer online in the consumer group: [{h.group}]")
        parts: list[str] = []
        for info in channels:
            if h.client_addr and h.client_addr != info.client_id:
                continue
            req = RemotingCommand.request(
                RequestCode.GET_CONSUMER_STATUS_FROM_CLIENT,
                GetConsumerStatusRequestHeader(h.topic, h.group).to_ext_fields(),
            )
            try:
                resp = await info.channel.invoke(req, CLIENT_TIMEOUT_S)
            except RemotingError as exc:
                _log.info("consumer status request failed", client_id=info.client_id, error=str(exc))
                continue
            if resp.code != ResponseCode.SUCCESS or not resp.body:
                continue
            text = resp.body.decode("utf-8", "replace")
            value = extract_json_value(text, "messageQueueTable")
            parts.append(json.dumps(info.client_id) + ":" + (value if value is not None else json.dumps(text)))
            if h.client_addr:
                break
        body = '{"consumerTable":{' + ",".join(parts) + '},"messageQueueTable":{}}'
        return cmd.make_response(body=body.encode())
