"""ListenerRunner.invoke: the listener of a batch's topic called and its answer mapped to a ConsumeResult, on the
first call of a listener (which looks at whether it is ``async def``) and on the later ones (which call a known
``async def`` listener straight from ``invoke``), with a listener swapped meanwhile and with a namespace."""

from __future__ import annotations

import threading

from client.consumer.listener import Listener, ListenerRunner
from client.results import ConsumeResult
from protocol.message_ext import MessageExt


def batch(topic: str = "T") -> list[MessageExt]:
    return [MessageExt(topic=topic, body=b"x", queue_offset=0)]


def runner(listener: Listener | None, namespace: str = "", topic: str = "T") -> ListenerRunner:
    subs: dict[str, tuple[object, Listener | None]] = {topic: (None, listener)}
    return ListenerRunner("g", namespace, subs, lambda: None, 2)


async def test_an_async_listener_answers_on_every_call() -> None:
    seen: list[str] = []

    async def listener(msgs: list[MessageExt]) -> ConsumeResult:
        seen.append(msgs[0].topic)
        return ConsumeResult.SUCCESS

    r = runner(listener)
    assert [await r.invoke(batch()) for _ in range(3)] == [ConsumeResult.SUCCESS] * 3
    assert seen == ["T"] * 3


async def test_later_calls_map_raises_none_and_strings_as_the_first() -> None:
    answers: list[object] = [ConsumeResult.SUCCESS, None, "CONSUME_SUCCESS", "nonsense", ValueError("boom")]

    async def listener(msgs: list[MessageExt]) -> object:
        a = answers.pop(0)
        if isinstance(a, Exception):
            raise a
        return a

    r = runner(listener)  # type: ignore[arg-type]
    got = [await r.invoke(batch()) for _ in range(5)]
    assert got == [
        ConsumeResult.SUCCESS,
        ConsumeResult.RECONSUME_LATER,
        ConsumeResult.SUCCESS,
        ConsumeResult.RECONSUME_LATER,
        ConsumeResult.RECONSUME_LATER,
    ]


async def test_a_listener_swapped_for_a_plain_function_runs_in_the_pool() -> None:
    threads: list[int] = []

    async def first(msgs: list[MessageExt]) -> ConsumeResult:
        threads.append(threading.get_ident())
        return ConsumeResult.SUCCESS

    def second(msgs: list[MessageExt]) -> ConsumeResult:
        threads.append(threading.get_ident())
        return ConsumeResult.RECONSUME_LATER

    subs: dict[str, tuple[object, Listener | None]] = {"T": (None, first)}
    r = ListenerRunner("g", "", subs, lambda: None, 2)
    try:
        assert await r.invoke(batch()) is ConsumeResult.SUCCESS
        assert await r.invoke(batch()) is ConsumeResult.SUCCESS
        subs["T"] = (None, second)
        assert await r.invoke(batch()) is ConsumeResult.RECONSUME_LATER
    finally:
        r.close()
    loop_thread = threading.get_ident()
    assert threads[:2] == [loop_thread, loop_thread]
    assert threads[2] != loop_thread


async def test_with_a_namespace_the_listener_sees_the_topic_without_it() -> None:
    seen: list[str] = []

    async def listener(msgs: list[MessageExt]) -> ConsumeResult:
        seen.append(msgs[0].topic)
        return ConsumeResult.SUCCESS

    r = runner(listener, namespace="ns", topic="ns%T")
    msgs = batch("ns%T")
    assert await r.invoke(msgs) is ConsumeResult.SUCCESS
    assert await r.invoke(msgs) is ConsumeResult.SUCCESS
    assert seen == ["T", "T"]
    assert msgs[0].topic == "ns%T"  # restored for the consumer's own bookkeeping
