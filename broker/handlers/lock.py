"""LOCK_BATCH_MQ (41) and UNLOCK_BATCH_MQ (42): queue locks for orderly consumers (J ``AdminBrokerProcessor.
lockBatchMQ/unlockBatchMQ``).

Body (both): LockBatchRequestBody ``{"consumerGroup","clientId","mqSet":[{"topic","brokerName","queueId"}]}``.
LOCK replies SUCCESS with ``{"lockOKMQSet":[...]}``, the queues now held by that client (newly granted or extended);
UNLOCK replies SUCCESS with no body (clients may send it oneway). A body that does not parse is SYSTEM_ERROR.
"""

from __future__ import annotations

from broker.services.rebalance_locks import RebalanceLockManager
from protocol.bodies import LockBatchRequestBody, encode_lock_response
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.remoting.handler import Handler, HandlerError, RequestContext


def _body(cmd: RemotingCommand) -> LockBatchRequestBody:
    if not cmd.body:
        raise HandlerError(ResponseCode.SYSTEM_ERROR, "LockBatchRequestBody is missing")
    try:
        return LockBatchRequestBody.decode(cmd.body)
    except ValueError as exc:
        raise HandlerError(ResponseCode.SYSTEM_ERROR, str(exc)) from None


class LockHandlers:
    def __init__(self, locks: RebalanceLockManager) -> None:
        self._locks = locks

    def table(self) -> dict[int, Handler]:
        return {RequestCode.LOCK_BATCH_MQ: self.lock, RequestCode.UNLOCK_BATCH_MQ: self.unlock}

    async def lock(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        b = _body(cmd)
        granted = self._locks.try_lock_batch(
            b.consumer_group, [(mq.topic, mq.broker_name, mq.queue_id) for mq in b.mq_set], b.client_id
        )
        return cmd.make_response(body=encode_lock_response(granted))

    async def unlock(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        b = _body(cmd)
        self._locks.unlock_batch(
            b.consumer_group, [(mq.topic, mq.broker_name, mq.queue_id) for mq in b.mq_set], b.client_id
        )
        return cmd.make_response()
