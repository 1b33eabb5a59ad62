"""TransactionService: half messages, their commit/rollback, and the check-back of undecided ones (J
``TransactionalMessageServiceImpl`` + ``TransactionalMessageBridge`` + ``TransactionalMessageCheckService``).

Storage, as J lays it out, so the state survives a restart with no file of its own:

* a half message (SEND with sysFlag TRANSACTION_PREPARED) is stored in ``RMQ_SYS_TRANS_HALF_TOPIC`` queue 0 with
  REAL_TOPIC / REAL_QID naming its destination, __transactionId__ = its UNIQ_KEY (J's parseHalfMessageInner) and the transaction type reset to NOT_TYPE (so it is dispatched to a
  consume queue and can be scanned by queue offset);
* a decision (END_TRANSACTION COMMIT or ROLLBACK) writes an op marker to ``RMQ_SYS_TRANS_OP_HALF_TOPIC`` queue 0:
  body = the half message's queue offset as decimal text, tag "d" (J's REMOVETAG). COMMIT first re-puts the real
  message (real topic/queue, sysFlag COMMIT, PREPARED_TRANSACTION_OFFSET = the half's commit-log offset; the half's
  properties as J's endMessageTransaction keeps them: TRAN_MSG, PGROUP and __transactionId__ stay, REAL_TOPIC /
  REAL_QID and our TRAN_PREPARED_QUEUE_OFFSET go);
* the check progress (the first half offset not yet settled) is a consumer offset of group ``CID_SYS_RMQ_TRANS`` on
  the half topic, persisted with the other consumer offsets. At start the op queue is read from its start (it is
  bounded by commit-log retention) to rebuild the set of settled half offsets.

Check pass, every ``transactionCheckInterval`` (60 s), over the half queue from the progress offset up to the
queue's end at the start of the pass:

* settled (an op marker names its offset, or the offset of the half it was copied from) → skip;
* younger than CHECK_IMMUNITY_TIME_IN_SECONDS (the producer's, when it set one) since it was born → re-put at the end
  of the half queue (TRAN_PREPARED_QUEUE_OFFSET = the offset of the first copy) and the pass goes on, as J's
  checkPrepareQueueOffset; without that property, younger than ``transactionTimeOut`` (6 s) → the pass stops;
* checked ``transactionCheckMax`` (15) times already (property TRANSACTION_CHECK_TIMES) → given up: logged and put
  to ``TRANS_CHECK_MAX_TIME_TOPIC``;
* else, as J: the half is re-put at the end of the half queue with TRANSACTION_CHECK_TIMES + 1 (and
  TRAN_PREPARED_QUEUE_OFFSET = the offset of the first copy), and CHECK_TRANSACTION_STATE goes oneway to one
  connected producer of its PGROUP group, about the new copy (body = the record with the real topic/queue; ext
  tranStateTableOffset, commitLogOffset, msgId, transactionId, offsetMsgId). No producer online: the check is
  counted anyway and retried next pass.

An END_TRANSACTION for a half that is already settled (for example a late answer to an earlier check) is answered
SUCCESS and changes nothing, so a transaction is never committed twice by this broker.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

import structlog

from broker import topics as T
from broker.services.group_state import GroupStateTables
from broker.store.request import GetRequest, PutRequest
from broker.store.results import AppendResult, PutMessageResult, PutMessageStatus
from protocol.codes import RequestCode
from protocol.command import RemotingCommand
from protocol.errors import RemotingError
from protocol.headers import CheckTransactionStateRequestHeader
from protocol.message_ext import MessageExt
from protocol.message_properties import PropertyKey, decode_properties, encode_properties
from protocol.record import TRANSACTION_COMMIT_TYPE, TRANSACTION_NOT_TYPE, encode_record, reset_transaction_type
from runtime.tasks import stop_tasks

_log = structlog.get_logger("rocketq.broker.transactions")

TRANS_GROUP = "CID_SYS_RMQ_TRANS"
REMOVE_TAG = "d"
_BATCH = 32


class TransactionError(Exception):
    """END_TRANSACTION names no usable half message; the text is J's remark."""


class TransactionService:
    def __init__(
        self,
        tables: GroupStateTables,
        *,
        check_interval_ms: int = 60_000,
        timeout_ms: int = 6_000,
        check_max: int = 15,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store, self._topics, _, self._offsets, self._clients = tables
        self.check_interval_ms = check_interval_ms
        self.timeout_ms = timeout_ms
        self.check_max = check_max
        self._clock = clock
        self._done: set[int] = set()  # settled half queue offsets
        self._op_read = 0  # op queue offset read so far
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self.checks_sent = 0
        self.discarded = 0
        # called with (real topic, committed) once per settled half message (the broker's transaction metrics)
        self.on_end: Callable[[str, bool], None] | None = None

    # -- lifecycle ---------------------------------------------------------------------------------------------

    async def start(self) -> None:
        await self._read_ops()
        self._task = asyncio.get_running_loop().create_task(self._check_loop(), name="transaction-check")

    async def stop(self) -> None:
        task, self._task = self._task, None
        await stop_tasks(task)

    def wake(self) -> None:
        """Run a check pass now (tests, admin)."""
        self._wake.set()

    async def _check_loop(self) -> None:
        while True:
            # asyncio.timeout, not wait_for: 3.11's wait_for swallows a stop() that races a wake()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.check_interval_ms / 1000):
                    await self._wake.wait()
            self._wake.clear()
            try:
                await self.check_once()
            except asyncio.CancelledError:
                raise
            except Exception:
                _log.exception("transaction check pass failed")

    # -- state ---------------------------------------------------------------------------------------------------

    async def _read_ops(self) -> None:
        """Read op markers written since the last read (at start: all of them still stored)."""
        offset = max(self._op_read, self._store.get_min_offset_in_queue(T.TRANS_OP_HALF_TOPIC, 0))
        while True:
            res = await self._store.get_message(
                GetRequest(TRANS_GROUP, T.TRANS_OP_HALF_TOPIC, 0, offset, _BATCH, 1 << 20)
            )
            if res.status.name != "FOUND":
                break
            for m in res.messages():
                with contextlib.suppress(ValueError):
                    self._done.add(int(m.body.decode()))
            if res.next_begin_offset <= offset:
                break
            offset = res.next_begin_offset
        self._op_read = offset

    def is_settled(self, msg: MessageExt) -> bool:
        if msg.queue_offset in self._done:
            return True
        origin = msg.properties.get(PropertyKey.TRANSACTION_PREPARED_QUEUE_OFFSET)
        return origin is not None and origin.isdigit() and int(origin) in self._done

    @property
    def check_offset(self) -> int:
        off = self._offsets.query(TRANS_GROUP, T.TRANS_HALF_TOPIC, 0)
        return max(off, self._store.get_min_offset_in_queue(T.TRANS_HALF_TOPIC, 0))

    # -- half messages -------------------------------------------------------------------------------------------

    async def put_half(self, req: PutRequest) -> PutMessageResult:
        """Store ``req`` (a prepared message for its real topic and queue) as a half message: in the half queue,
        with REAL_TOPIC / REAL_QID, __transactionId__ = its UNIQ_KEY and the transaction type NOT_TYPE."""
        props = dict(req.properties) if isinstance(req.properties, dict) else decode_properties(req.properties)
        props[PropertyKey.REAL_TOPIC] = req.topic
        props[PropertyKey.REAL_QID] = str(req.queue_id)
        if uniq := props.get(PropertyKey.UNIQ_KEY):
            props[PropertyKey.TRANSACTION_ID] = uniq
        req.topic = T.TRANS_HALF_TOPIC
        req.queue_id = 0
        req.sys_flag = reset_transaction_type(req.sys_flag, TRANSACTION_NOT_TYPE)
        req.properties = encode_properties(props)
        return await self._store.put_message(req)

    def _half(self, producer_group: str, queue_offset: int, commit_log_offset: int) -> MessageExt:
        msg = self._store.look_message_by_offset(commit_log_offset)
        if msg is None or msg.topic != T.TRANS_HALF_TOPIC:
            raise TransactionError("Find prepared transaction message failed")
        if msg.properties.get(PropertyKey.PRODUCER_GROUP) != producer_group:
            raise TransactionError("The producer group wrong")
        if msg.queue_offset != queue_offset:
            raise TransactionError("The transaction state table offset wrong")
        return msg

    async def commit(self, producer_group: str, queue_offset: int, commit_log_offset: int) -> bool:
        """Deliver the real message and settle the half; False if it was settled already."""
        half = self._half(producer_group, queue_offset, commit_log_offset)
        if self.is_settled(half):
            return False
        props = dict(half.properties)
        topic = props.pop(PropertyKey.REAL_TOPIC, "")
        qid = int(props.pop(PropertyKey.REAL_QID, "0") or 0)
        props.pop(PropertyKey.TRANSACTION_PREPARED_QUEUE_OFFSET, None)  # our check copies' mark, not J's
        if not topic:
            raise TransactionError("The half message has no REAL_TOPIC")
        result = await self._store.put_message(
            PutRequest.from_ext(
                half,
                topic=topic,
                queue_id=qid,
                sys_flag=reset_transaction_type(half.sys_flag, TRANSACTION_COMMIT_TYPE),
                properties=encode_properties(props),
                prepared_transaction_offset=commit_log_offset,
            )
        )
        if result.status is not PutMessageStatus.PUT_OK:
            raise TransactionError(f"put of the committed message failed: {result.status.name}")
        await self._settle(half)
        if self.on_end is not None:
            self.on_end(topic, True)
        return True

    async def rollback(self, producer_group: str, queue_offset: int, commit_log_offset: int) -> bool:
        half = self._half(producer_group, queue_offset, commit_log_offset)
        if self.is_settled(half):
            return False
        await self._settle(half)
        if self.on_end is not None:
            self.on_end(half.properties.get(PropertyKey.REAL_TOPIC, half.topic), False)
        return True

    async def _settle(self, half: MessageExt) -> None:
        result = await self._store.put_message(
            PutRequest(
                T.TRANS_OP_HALF_TOPIC,
                0,
                0,
                0,
                int(self._clock() * 1000),
                half.store_host,
                str(half.queue_offset).encode(),
                {PropertyKey.TAGS: REMOVE_TAG},
            )
        )
        if result.status is not PutMessageStatus.PUT_OK:
            raise TransactionError(f"put of the op marker failed: {result.status.name}")
        self._done.add(half.queue_offset)

    # -- check-back ----------------------------------------------------------------------------------------------

    async def check_once(self) -> int:
        """One pass; returns how many check requests were sent."""
        await self._read_ops()
        start = self.check_offset
        end = self._store.get_max_offset_in_queue(T.TRANS_HALF_TOPIC, 0)
        now_ms = int(self._clock() * 1000)
        offset, sent = start, 0
        while offset < end:
            res = await self._store.get_message(
                GetRequest(TRANS_GROUP, T.TRANS_HALF_TOPIC, 0, offset, min(_BATCH, end - offset), 4 << 20)
            )
            if res.status.name != "FOUND":
                if res.next_begin_offset > offset:
                    offset = res.next_begin_offset
                    continue
                break
            stop = False
            for m in res.messages():
                if m.queue_offset >= end:
                    stop = True
                    break
                if not self.is_settled(m):
                    age = now_ms - m.born_timestamp
                    raw = m.properties.get(PropertyKey.CHECK_IMMUNITY_TIME_IN_SECONDS)
                    if raw is not None:
                        # J: the producer's own immunity; while in it the half goes back to the end of the queue
                        # (marked with its origin, so a decision on the original still settles it) and the pass
                        # goes on to the halves behind it
                        immunity = int(raw) * 1000 if raw.isdigit() else self.timeout_ms
                        if age < immunity:
                            await self._put_back(m, dict(m.properties))
                            offset = m.queue_offset + 1
                            continue
                    elif 0 <= age < self.timeout_ms:
                        stop = True  # J: no immunity property; every half behind this one is younger still
                        break
                    sent += await self._check_one(m)
                offset = m.queue_offset + 1
            if stop:
                break
            offset = max(offset, res.next_begin_offset) if res.next_begin_offset <= end else offset
        if offset != start:
            self._offsets.commit(TRANS_GROUP, T.TRANS_HALF_TOPIC, 0, offset)
        return sent

    async def _check_one(self, m: MessageExt) -> int:
        props = dict(m.properties)
        raw = props.get(PropertyKey.TRANSACTION_CHECK_TIMES, "0")
        times = int(raw) if raw.isdigit() else 0
        if times >= self.check_max:
            await self._discard(m)
            return 0
        props[PropertyKey.TRANSACTION_CHECK_TIMES] = str(times + 1)
        item = await self._put_back(m, props)
        copy = MessageExt(
            topic=props.get(PropertyKey.REAL_TOPIC, m.topic),
            body=m.body,
            flag=m.flag,
            properties=props,
            queue_id=int(props.get(PropertyKey.REAL_QID, "0") or 0),
            queue_offset=item.queue_offset,
            commit_log_offset=item.wrote_offset,
            sys_flag=m.sys_flag,
            born_timestamp=m.born_timestamp,
            born_host=m.born_host,
            store_timestamp=item.store_timestamp,
            store_host=m.store_host,
            reconsume_times=m.reconsume_times,
        )
        return 1 if self._send_check(copy, item.msg_id) else 0

    async def _put_back(self, m: MessageExt, props: dict[str, str]) -> AppendResult:
        """Re-put half ``m`` with ``props`` at the end of the half queue, marked with the offset of the half it was
        first copied from (TRAN_PREPARED_QUEUE_OFFSET); the stored item."""
        props.setdefault(PropertyKey.TRANSACTION_PREPARED_QUEUE_OFFSET, str(m.queue_offset))
        result = await self._store.put_message(
            PutRequest.from_ext(m, topic=T.TRANS_HALF_TOPIC, queue_id=0, properties=encode_properties(props))
        )
        if result.status is not PutMessageStatus.PUT_OK:
            raise RuntimeError(f"re-put of a half message failed: {result.status.name}")
        return result.items[0]

    def _send_check(self, copy: MessageExt, offset_msg_id: str) -> bool:
        group = copy.properties.get(PropertyKey.PRODUCER_GROUP, "")
        channels = [c for c in self._clients.producer_groups().get(group, []) if not c.channel.is_closed]
        if not channels:
            _log.warning("transaction check skipped: no producer online", group=group, offset=copy.queue_offset)
            return False
        uniq = copy.properties.get(PropertyKey.UNIQ_KEY)
        header = CheckTransactionStateRequestHeader(
            tran_state_table_offset=copy.queue_offset,
            commit_log_offset=copy.commit_log_offset,
            msg_id=uniq or offset_msg_id,
            transaction_id=uniq or offset_msg_id,
            offset_msg_id=offset_msg_id,
        )
        body = bytes(
            encode_record(
                topic=copy.topic,
                body=copy.body,
                properties=copy.properties,
                queue_id=copy.queue_id,
                flag=copy.flag,
                queue_offset=copy.queue_offset,
                physical_offset=copy.commit_log_offset,
                sys_flag=copy.sys_flag,
                born_timestamp=copy.born_timestamp,
                born_host=copy.born_host,
                store_timestamp=copy.store_timestamp,
                store_host=copy.store_host,
                reconsume_times=copy.reconsume_times,
            )
        )
        req = RemotingCommand.request(RequestCode.CHECK_TRANSACTION_STATE, header.to_ext_fields(), body, oneway=True)
        for info in channels:
            try:
                info.channel.invoke_oneway(req)
            except RemotingError as exc:
                _log.info("check transaction push failed", group=group, client_id=info.client_id, error=str(exc))
                continue
            self.checks_sent += 1
            return True
        return False

    async def resume_check(self, commit_log_offset: int) -> bool:
        """J RESUME_CHECK_HALF_MESSAGE: the message stored at ``commit_log_offset`` (a half message, or one given up
        after ``transactionCheckMax`` checks) goes back to the half queue with TRANSACTION_CHECK_TIMES 0, so the
        check-back asks its producer again; False when there is no such message or the put fails."""
        m = self._store.look_message_by_offset(commit_log_offset)
        if m is None:
            return False
        props = dict(m.properties)
        props[PropertyKey.TRANSACTION_CHECK_TIMES] = "0"
        result = await self._store.put_message(
            PutRequest.from_ext(m, topic=T.TRANS_HALF_TOPIC, queue_id=0, properties=encode_properties(props))
        )
        if result.status is not PutMessageStatus.PUT_OK:
            return False
        _log.info("half message put back for checking", uniq_key=props.get(PropertyKey.UNIQ_KEY))
        self.wake()
        return True

    async def _discard(self, m: MessageExt) -> None:
        _log.warning(
            "half message checked too many times; given up",
            offset=m.queue_offset,
            uniq_key=m.properties.get(PropertyKey.UNIQ_KEY),
            max=self.check_max,
        )
        self._topics.create_if_absent(T.TRANS_CHECK_MAX_TIME_TOPIC, 1, T.PERM_RW)
        await self._store.put_message(
            PutRequest.from_ext(
                m, topic=T.TRANS_CHECK_MAX_TIME_TOPIC, queue_id=0, properties=encode_properties(m.properties)
            )
        )
        self.discarded += 1
