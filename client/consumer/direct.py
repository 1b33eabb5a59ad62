"""CONSUME_MESSAGE_DIRECTLY (309): a broker asks this client, for RocketMQ Dashboard or ``mqadmin consumeMessage``,
to run one push consumer's listener once on one given message and to say how that went (J
``ConsumeMessageConcurrentlyService`` / ``ConsumeMessageOrderlyService.consumeMessageDirectly``).

The call is outside the pull → consume pipeline: no process queue sees the message, no offset moves, a failure is
not sent back and nothing is retried. Only the listener runs, on a one-message batch.

How the listener's answer maps to ``CMResult`` (as J does):

* concurrent consumers: SUCCESS → CR_SUCCESS, RECONSUME_LATER → CR_LATER;
* orderly consumers: SUCCESS → CR_SUCCESS, SUSPEND_CURRENT_QUEUE_A_MOMENT → CR_LATER, and RECONSUME_LATER → CR_LATER
  too (our orderly listeners may return it and it means "suspend" there). J's deprecated COMMIT/ROLLBACK
  (CR_COMMIT/CR_ROLLBACK) have no ConsumeResult here, so they never occur;
* ``None`` → CR_RETURN_NULL; an exception → CR_THROW_EXCEPTION with J's ``exceptionSimpleDesc`` in the remark;
* any other answer leaves ``consumeResult`` unset (J's ``default: break``), so the key is absent from the reply.

The reply body is ``protocol.bodies.ConsumeMessageDirectlyResult`` as fastjson writes it: keys in alphabetical order, null fields left
out (``remark`` appears only after an exception): ``{"autoCommit":true,"consumeResult":"CR_SUCCESS","order":false,
"spentTimeMills":3}``. ``spentTimeMills`` is J's spelling.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable

from client.results import ConsumeResult
from protocol.bodies import CMResult, ConsumeMessageDirectlyResult
from protocol.message_ext import MessageExt

_CONCURRENT: dict[ConsumeResult, CMResult] = {
    ConsumeResult.SUCCESS: CMResult.CR_SUCCESS,
    ConsumeResult.RECONSUME_LATER: CMResult.CR_LATER,
}
_ORDERLY: dict[ConsumeResult, CMResult] = {
    ConsumeResult.SUCCESS: CMResult.CR_SUCCESS,
    ConsumeResult.SUSPEND_CURRENT_QUEUE_A_MOMENT: CMResult.CR_LATER,
    ConsumeResult.RECONSUME_LATER: CMResult.CR_LATER,
}


def exception_simple_desc(exc: BaseException) -> str:
    """J ``RemotingHelper.exceptionSimpleDesc``: the exception, then where it was raised (the innermost frame)."""
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    tb = exc.__traceback__
    if tb is None:
        return text
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    return f"{text}, {code.co_name}({os.path.basename(code.co_filename)}:{tb.tb_lineno})"


def _map(answer: object, orderly: bool) -> CMResult | None:
    if answer is None:
        return CMResult.CR_RETURN_NULL
    if not isinstance(answer, ConsumeResult):
        try:
            answer = ConsumeResult(str(answer))
        except ValueError:
            return None
    return (_ORDERLY if orderly else _CONCURRENT).get(answer)


async def consume_directly(
    call_listener: Callable[[list[MessageExt]], Awaitable[object]], msg: MessageExt, *, orderly: bool
) -> ConsumeMessageDirectlyResult:
    """Run ``call_listener([msg])`` once (it returns the listener's raw answer or raises what the listener raised)
    and describe the outcome; never raises for the listener's sake."""
    begin = time.monotonic()
    remark: str | None = None
    try:
        result = _map(await call_listener([msg]), orderly)
    except Exception as exc:
        result, remark = CMResult.CR_THROW_EXCEPTION, exception_simple_desc(exc)
    spent = int((time.monotonic() - begin) * 1000)
    return ConsumeMessageDirectlyResult(order=orderly, consume_result=result, spent_time_mills=spent, remark=remark)
