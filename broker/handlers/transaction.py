"""Transactional sends and END_TRANSACTION (37) (J ``SendMessageProcessor`` half path + ``EndTransactionProcessor``).

``send_half`` is where the send handler (``SendHandlers.half``) passes a SEND_MESSAGE / SEND_MESSAGE_V2 whose sysFlag
carries TRANSACTION_PREPARED, with the header it decoded: it is checked like any send (topic name, forbidden system
topics, auto-create, write permission, queue id) and stored as a half message by ``TransactionService.put_half``. The reply is a normal send reply: ``msgId`` (offset id of the half), ``queueId`` (the requested
queue, as J answers), ``queueOffset`` (the half queue offset, which the producer returns as tranStateTableOffset),
``MSG_REGION``, ``TRACE_ON``.

END_TRANSACTION (clients send it oneway; a normal request gets a reply):

==================================== =============================================================================
commitOrRollback                     effect
==================================== =============================================================================
0 (NOT_TYPE / UNKNOW)                nothing (the check-back will ask again); reply SUCCESS
8 (COMMIT)                           real message stored, op marker written
12 (ROLLBACK)                        op marker written
==================================== =============================================================================

A half message that is missing, of another producer group, or at another queue offset → SYSTEM_ERROR with J's
remark ("Find prepared transaction message failed", "The producer group wrong", "The transaction state table offset
wrong"). A slave answers SLAVE_NOT_AVAILABLE.

RESUME_CHECK_HALF_MESSAGE (323, the Dashboard's "resume check"): header ``msgId`` (offset id); the message there goes
back to the half queue with TRANSACTION_CHECK_TIMES 0 (``TransactionService.resume_check``); a bad id, no message or
a failed put → SYSTEM_ERROR "Put message back to RMQ_SYS_TRANS_HALF_TOPIC failed." (J's remark).
"""

from __future__ import annotations

import random

import structlog

from broker import topics as T
from broker.handlers._common import check_send_allowed, decode_header
from broker.services.topic_config import TopicConfigTable
from broker.services.transactions import TransactionError, TransactionService
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.headers import (
    EndTransactionRequestHeader,
    ResumeCheckHalfMessageRequestHeader,
    SendMessageRequestHeader,
)
from protocol.message_properties import decode_properties
from protocol.msg_id import decode_offset_msg_id
from protocol.record import TRANSACTION_COMMIT_TYPE, TRANSACTION_ROLLBACK_TYPE, transaction_type
from protocol.remoting.handler import Handler, HandlerError, RequestContext

_log = structlog.get_logger("rocketq.broker.transaction")


class TransactionHandlers:
    def __init__(
        self,
        service: TransactionService,
        topics: TopicConfigTable,
        *,
        broker_ip: str,
        broker_permission: int,
        region_id: str,
        trace_on: bool,
        max_message_size: int,
        is_slave: bool = False,
        reject_transaction_message: bool = False,
    ) -> None:
        self._svc = service
        self._topics = topics
        self._broker_ip = broker_ip
        self._writeable = T.is_writeable(broker_permission)
        self._region = region_id
        self._trace_on = "true" if trace_on else "false"
        self.max_message_size = max_message_size
        self._is_slave = is_slave
        self._reject = reject_transaction_message

    def set_broker_permission(self, perm: int) -> None:
        """``brokerPermission`` changed at runtime (UPDATE_BROKER_CONFIG): J reads it on every request."""
        self._writeable = T.is_writeable(perm)

    def table(self) -> dict[int, Handler]:
        return {
            RequestCode.END_TRANSACTION: self.end_transaction,
            RequestCode.RESUME_CHECK_HALF_MESSAGE: self.resume_check,
        }

    async def resume_check(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = decode_header(ResumeCheckHalfMessageRequestHeader, cmd)
        try:
            _host, _port, offset = decode_offset_msg_id(h.msg_id)
        except ValueError:
            offset = -1
        if offset < 0 or not await self._svc.resume_check(offset):
            raise HandlerError(ResponseCode.SYSTEM_ERROR, "Put message back to RMQ_SYS_TRANS_HALF_TOPIC failed.")
        return cmd.make_response()

    # -- half sends ------------------------------------------------------------------------------------------------

    async def send_half(
        self, ctx: RequestContext, cmd: RemotingCommand, h: SendMessageRequestHeader
    ) -> RemotingCommand:
        """A prepared send (``h`` decoded from ``cmd`` by the send handler), stored as a half message."""
        topic = h.topic
        check_send_allowed(topic, writeable=self._writeable, broker_ip=self._broker_ip)
        if self._reject:
            raise HandlerError(
                ResponseCode.NO_PERMISSION, f"the broker[{self._broker_ip}] sending transaction message is forbidden"
            )
        tc = self._topics.get(topic) or self._topics.create_in_send(
            topic, h.default_topic, h.default_topic_queue_nums, 0, producer=ctx.conn.peer
        )
        if tc is None:
            raise HandlerError(ResponseCode.TOPIC_NOT_EXIST, f"topic[{topic}] not exist, apply first please!")
        if not T.is_writeable(tc.perm):
            raise HandlerError(ResponseCode.NO_PERMISSION, f"the topic[{topic}] sending message is forbidden")
        if h.queue_id >= tc.write_queue_nums:
            raise HandlerError(
                ResponseCode.SYSTEM_ERROR,
                f"request queueId[{h.queue_id}] is illegal, topic:{topic} topicConfig.writeQueueNums:"
                f"{tc.write_queue_nums} consumer:{ctx.conn.peer}",
            )
        if len(cmd.body) > self.max_message_size:
            raise HandlerError(
                ResponseCode.MESSAGE_ILLEGAL, f"the message body size over max value, MAX: {self.max_message_size}"
            )
        qid = h.queue_id if h.queue_id >= 0 else random.randrange(max(tc.write_queue_nums, 1))
        result = await self._svc.put_half(
            topic,
            qid,
            h.flag,
            h.sys_flag,
            h.born_timestamp,
            ctx.conn.peer,
            cmd.body,
            decode_properties(h.properties or ""),
            h.reconsume_times or 0,
        )
        if result.status.name not in ("PUT_OK", "FLUSH_DISK_TIMEOUT", "FLUSH_SLAVE_TIMEOUT", "SLAVE_NOT_AVAILABLE"):
            code = (
                ResponseCode.MESSAGE_ILLEGAL
                if "ILLEGAL" in result.status.name or "EXCEEDED" in result.status.name
                else ResponseCode.SYSTEM_ERROR
            )
            raise HandlerError(code, result.remark or result.status.name)
        code = {
            "PUT_OK": ResponseCode.SUCCESS,
            "FLUSH_DISK_TIMEOUT": ResponseCode.FLUSH_DISK_TIMEOUT,
            "FLUSH_SLAVE_TIMEOUT": ResponseCode.FLUSH_SLAVE_TIMEOUT,
            "SLAVE_NOT_AVAILABLE": ResponseCode.SLAVE_NOT_AVAILABLE,
        }[result.status.name]
        item = result.items[0]
        ext = {
            "msgId": item.msg_id,
            "queueId": str(qid),
            "queueOffset": str(item.queue_offset),
            "MSG_REGION": self._region,
            "TRACE_ON": self._trace_on,
        }
        return cmd.make_response(code, None, ext)

    # -- END_TRANSACTION -------------------------------------------------------------------------------------------

    async def end_transaction(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        if self._is_slave:
            raise HandlerError(ResponseCode.SLAVE_NOT_AVAILABLE, "Can't find master broker")
        h = decode_header(EndTransactionRequestHeader, cmd)
        kind = transaction_type(h.commit_or_rollback)
        log = _log.bind(
            group=h.producer_group,
            offset=h.tran_state_table_offset,
            msg_id=h.msg_id,
            from_check=h.from_transaction_check,
        )
        try:
            if kind == TRANSACTION_COMMIT_TYPE and h.commit_or_rollback == TRANSACTION_COMMIT_TYPE:
                done = await self._svc.commit(h.producer_group, h.tran_state_table_offset, h.commit_log_offset)
                log.info("transaction committed" if done else "transaction already settled")
            elif h.commit_or_rollback == TRANSACTION_ROLLBACK_TYPE:
                done = await self._svc.rollback(h.producer_group, h.tran_state_table_offset, h.commit_log_offset)
                log.info("transaction rolled back" if done else "transaction already settled")
            else:
                log.info("transaction state unknown; left for the check-back")
        except TransactionError as exc:
            log.warning("end transaction refused", reason=str(exc))
            raise HandlerError(ResponseCode.SYSTEM_ERROR, str(exc)) from None
        return cmd.make_response()
