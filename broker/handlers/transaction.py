"""Transactional sends and END_TRANSACTION (37) (J ``SendMessageProcessor`` half path + ``EndTransactionProcessor``).

A SEND_MESSAGE / SEND_MESSAGE_V2 whose sysFlag carries TRANSACTION_PREPARED is a send (``broker.handlers.send``,
``broker.services.send``): checked like any send and stored as a half message by ``TransactionService.put_half``;
its reply's ``queueOffset`` is the half queue offset, which the producer returns as tranStateTableOffset.

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

import structlog

from broker.handlers._common import decode_header
from broker.services.transactions import TransactionError, TransactionService
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.headers import (
    EndTransactionRequestHeader,
    ResumeCheckHalfMessageRequestHeader,
)
from protocol.msg_id import decode_offset_msg_id
from protocol.record import TRANSACTION_COMMIT_TYPE, TRANSACTION_ROLLBACK_TYPE, transaction_type
from protocol.remoting.handler import Handler, HandlerError, RequestContext

_log = structlog.get_logger("rocketq.broker.transaction")


class TransactionHandlers:
    def __init__(
        self,
        service: TransactionService,
        *,
        is_slave: bool = False,
    ) -> None:
        self._svc = service
        self._is_slave = is_slave

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
