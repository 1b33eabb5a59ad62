"""ResumedHandler: how a request handler that ran inline in the read callback (``RemotingConnection``) and then
suspended continues, exactly as if it had run from its start: awaited by the coroutine that answers it
(``serve.finish_request``), and that coroutine in turn continued by a Task of its own.
"""

from __future__ import annotations

from collections.abc import Coroutine, Generator
from typing import Any


class ResumedHandler(Coroutine[Any, None, Any], Generator[Any, None, Any]):
    """A coroutine whose first step ran inline and suspended on ``first`` (a future, or None for a bare yield), as a
    coroutine a Task can run, or one a coroutine can await: the first step hands out ``first`` to wait on, and every
    later send or throw (a cancel, even one before that first step) goes straight to the coroutine, whose return
    value is the await's, as if the Task had run it from its start."""

    __slots__ = ("_coro", "_first", "_started")

    def __init__(self, coro: Coroutine[Any, None, Any], first: Any) -> None:
        self._coro = coro
        self._first = first
        self._started = False

    def send(self, value: None) -> Any:
        if not self._started:
            self._started = True
            return self._first
        return self._coro.send(value)

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        self._started = True
        if val is None and tb is None:
            return self._coro.throw(typ)
        return self._coro.throw(typ, val, tb)  # pragma: no cover - asyncio throws the one-argument form

    def close(self) -> None:
        self._coro.close()

    def __await__(self) -> Generator[Any, None, Any]:
        return self

    @property
    def __name__(self) -> str:  # what a Task's repr names: the handler
        return str(getattr(self._coro, "__qualname__", "handler"))
