"""PULL_MESSAGE (J ``PullMessageProcessor``): checks, tag filtering, the store read, the status → code mapping,
commit-offset piggy-backing, and the hand-off to long polling.

Order of checks and their replies (J 4.9.7), all the consume service's (``broker.services.consume``: ``pull_read``;
the first seven are its ``check``, which the gRPC endpoint's receive calls too):

=================================================== ========================== ======================================
check                                               code                       remark
=================================================== ========================== ======================================
broker not readable (brokerPermission)              NO_PERMISSION              the broker[ip] pulling message is forbidden
group unknown and auto-create off                   SUBSCRIPTION_GROUP_NOT_EXIST subscription group [g] does not exist
group consumeEnable=false                           NO_PERMISSION              subscription group no permission, g
topic unknown                                       TOPIC_NOT_EXIST            topic[t] not exist, apply first please!
topic not readable                                  NO_PERMISSION              the topic[t] pulling message is forbidden
queueId outside readQueueNums                       SYSTEM_ERROR               queueId[n] is illegal, topic:[t] ...
bad ``subscription`` (SUBSCRIPTION flag 0x4)        SUBSCRIPTION_PARSE_FAILED  parse the consumer's subscription failed
no flag 0x4 and no heartbeat for the group/topic    SUBSCRIPTION_NOT_EXIST     the consumer's group info / subscription not exist
heartbeat's SQL92 expression did not compile        FILTER_DATA_NOT_EXIST      The broker's consumer filter data is not exist!...
SQL92 and ``enablePropertyFilter=false``            SYSTEM_ERROR               The broker does not support consumer to filter
                                                                               message by SQL92
=================================================== ========================== ======================================

Store status → code: FOUND → SUCCESS; MESSAGE_WAS_REMOVING, NO_MATCHED_MESSAGE → PULL_RETRY_IMMEDIATELY;
NO_MESSAGE_IN_QUEUE, NO_MATCHED_LOGIC_QUEUE → PULL_OFFSET_MOVED if offset ≠ 0 else PULL_NOT_FOUND;
OFFSET_FOUND_NULL, OFFSET_OVERFLOW_ONE → PULL_NOT_FOUND; OFFSET_OVERFLOW_BADLY, OFFSET_TOO_SMALL →
PULL_OFFSET_MOVED. Every reply from the store path carries ``suggestWhichBrokerId``, ``nextBeginOffset``,
``minOffset`` and ``maxOffset`` as strings. Tags are filtered by their strings (the tag hashes recomputed here),
never by the client's ``codeSet`` (C++ sends ``[0,0]``); a SQL92 subscription is evaluated per record over its
properties (``broker.filter``), and the filtered-out records still advance ``nextBeginOffset``.

A PULL_NOT_FOUND with the SUSPEND flag (0x2) is held by ``LongPollingService`` for ``suspendTimeoutMillis`` (capped
at ``MAX_HOLD_MS``, under every official client's pull timeout) or ``shortPollingTimeMills`` when long polling is
off, then re-run once and answered: the handler returns a ``DeferredReply`` that the hold's wake resolves (no Task per
held pull), and a wake by an arriving message answers inside the put that stored it. The COMMIT_OFFSET flag (0x1) stores ``commitOffset`` when it is ≥ 0 (not on a slave).

``suggestWhichBrokerId`` (J): with ``slaveReadEnable`` it is the group's ``whichBrokerWhenConsumeSlowly`` when the
consumer reads data that has probably left the page cache (the commit log's end is more than
``accessMessageInMemoryMaxRatio`` % of physical memory past the last message read), else the group's ``brokerId``;
without it, 0 (the master). A slave without ``slaveReadEnable`` still returns what it found (J's status switch
overwrites its PULL_RETRY_IMMEDIATELY). On a slave (``offsetCheckInSlave`` false, J's default) an offset the slave
cannot serve is never corrected: PULL_OFFSET_MOVED becomes PULL_RETRY_IMMEDIATELY with the group's ``brokerId``,
and ``nextBeginOffset`` stays the offset asked for (J ``nextOffsetCorrection``).
"""

from __future__ import annotations

import os

from broker.handlers._common import HEADER_ERRORS, bad_header
from broker.services.broker_stats import BrokerStats
from broker.services.consume import ConsumeRefused, ConsumeRequest, ConsumeService
from broker.services.consumer_offsets import ConsumerOffsetTable
from broker.services.long_polling import LongPollingService, Wake
from broker.services.subscription_groups import SubscriptionGroupTable
from broker.store.message_store import MessageStore
from broker.store.request import GetRequest
from broker.store.results import GetMessageResult
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.headers.pull import read_pull_request
from protocol.record import last_physical_offset
from protocol.remoting.handler import DeferredReply, Handler, HandlerError, RequestContext

FLAG_COMMIT_OFFSET = 0x1
FLAG_SUSPEND = 0x2
MAX_HOLD_MS = 20_000  # J, C++ and ali-ons time a suspended pull out after 30 s; all ask for 15 s of suspend
# statuses whose nextBeginOffset J corrects only on a master (nextOffsetCorrection)
_CORRECTED = frozenset({"NO_MESSAGE_IN_QUEUE", "OFFSET_TOO_SMALL", "OFFSET_OVERFLOW_BADLY", "OFFSET_FOUND_NULL"})


def physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 8 << 30


_STATUS_CODE: dict[str, ResponseCode] = {
    "FOUND": ResponseCode.SUCCESS,
    "MESSAGE_WAS_REMOVING": ResponseCode.PULL_RETRY_IMMEDIATELY,
    "NO_MATCHED_MESSAGE": ResponseCode.PULL_RETRY_IMMEDIATELY,
    "OFFSET_FOUND_NULL": ResponseCode.PULL_NOT_FOUND,
    "OFFSET_OVERFLOW_ONE": ResponseCode.PULL_NOT_FOUND,
    "OFFSET_OVERFLOW_BADLY": ResponseCode.PULL_OFFSET_MOVED,
    "OFFSET_TOO_SMALL": ResponseCode.PULL_OFFSET_MOVED,
}


class PullHandlers:
    def __init__(
        self,
        store: MessageStore,
        consume: ConsumeService,
        groups: SubscriptionGroupTable,
        offsets: ConsumerOffsetTable,
        polling: LongPollingService,
        *,
        long_polling_enable: bool,
        short_polling_ms: int,
        max_transfer_bytes: int,
        is_slave: bool = False,
        stats: BrokerStats | None = None,
        slave_read_enable: bool = False,
        access_message_in_memory_max_ratio: int = 40,
    ) -> None:
        self._stats = stats
        self._store = store
        self._consume = consume
        self._groups = groups
        self._offsets = offsets
        self._polling = polling
        self._long_polling = long_polling_enable
        self._short_polling_s = short_polling_ms / 1000
        self._max_bytes = max_transfer_bytes
        self._is_slave = is_slave
        self._slave_read = slave_read_enable
        self._in_memory_max = physical_memory() * access_message_in_memory_max_ratio // 100

    def table(self) -> dict[int, Handler]:
        return {RequestCode.PULL_MESSAGE: self.pull}

    async def pull(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand | DeferredReply:
        try:
            h = read_pull_request(cmd.ext_fields)
        except HEADER_ERRORS as exc:
            raise bad_header(exc) from None
        try:  # the header translated once: the consume service checks it and gives the store's read
            get = self._consume.pull_read(ConsumeRequest.of_pull(h), self._max_bytes)
        except ConsumeRefused as exc:
            raise HandlerError(exc.code, exc.remark) from None
        resp = await self._read(cmd, get)
        flag = h.sys_flag
        if flag & FLAG_COMMIT_OFFSET and h.commit_offset >= 0 and not self._is_slave:
            self._offsets.commit(h.consumer_group, h.topic, h.queue_id, h.commit_offset)
        if resp.code != ResponseCode.PULL_NOT_FOUND or not flag & FLAG_SUSPEND:
            return resp
        if self._long_polling:
            timeout = min(max(h.suspend_timeout_millis, 0), MAX_HOLD_MS) / 1000
        else:
            timeout = self._short_polling_s
        ctx.long_polling = True
        if self._stats is not None:
            self._stats.pull_held += 1
            self._stats.pull_holds += 1
        held = DeferredReply()
        self._polling.park(
            get,
            timeout,
            lambda why: self._woken(ctx, get, resp, held, why),
            self._store.get_max_offset_in_queue,
            self._long_polling,
        )
        return held

    def _woken(
        self, ctx: RequestContext, get: GetRequest, resp: RemotingCommand, held: DeferredReply, why: Wake
    ) -> None:
        """A held pull's wake (``LongPollingService.park``): re-run the read and answer, at once — inside the put
        whose message woke it, so its reply leaves before the put's. Never raises (it runs inside the store's
        dispatch): a failed read is answered SYSTEM_ERROR, as the remoting layer answers a handler that raised."""
        if self._stats is not None:
            self._stats.pull_held -= 1
        cmd = ctx.cmd
        try:
            reply = resp if why is Wake.SHUTDOWN else self._reply(cmd, get, self._store.get_message_sync(get))
        except Exception as exc:
            ctx.log.exception("handler failed", code=cmd.code, opaque=cmd.opaque)
            reply = cmd.make_response(ResponseCode.SYSTEM_ERROR, f"{type(exc).__name__}: {exc}")
        held.resolve(reply)

    async def _read(self, cmd: RemotingCommand, get: GetRequest) -> RemotingCommand:
        return self._reply(cmd, get, await self._store.get_message(get))

    def _reply(self, cmd: RemotingCommand, get: GetRequest, result: GetMessageResult) -> RemotingCommand:
        status = result.status._name_  # the member's own attribute: ``name`` is an interpreted descriptor
        code = _STATUS_CODE.get(status)
        if code is None:  # NO_MESSAGE_IN_QUEUE / NO_MATCHED_LOGIC_QUEUE
            code = ResponseCode.PULL_OFFSET_MOVED if get.offset != 0 else ResponseCode.PULL_NOT_FOUND
        suggest = 0
        next_begin = result.next_begin_offset
        if self._slave_read or self._is_slave:
            group = self._groups.get(get.group)
            group_broker = group.broker_id if group is not None else 0
            if self._slave_read:
                slow = (
                    code == ResponseCode.SUCCESS
                    and self._store.commitlog.max_offset - last_physical_offset(result.buffer) > self._in_memory_max
                )
                suggest = (group.which_broker_when_consume_slowly if group is not None else 1) if slow else group_broker
            if self._is_slave:
                if status in _CORRECTED:
                    next_begin = get.offset
                if code == ResponseCode.PULL_OFFSET_MOVED:
                    code = ResponseCode.PULL_RETRY_IMMEDIATELY
                    suggest = group_broker
        ext = {
            "suggestWhichBrokerId": str(suggest),
            "nextBeginOffset": str(next_begin),
            "minOffset": str(result.min_offset),
            "maxOffset": str(result.max_offset),
        }
        body = result.buffer if code == ResponseCode.SUCCESS else b""
        if self._stats is not None:  # once per pull
            if code == ResponseCode.SUCCESS:
                self._stats.on_get(
                    get.group, get.topic, get.queue_id, result.message_count, len(body), result.next_begin_offset
                )
            else:
                self._stats.on_miss()
        return cmd.make_response(code, status, ext, body)
