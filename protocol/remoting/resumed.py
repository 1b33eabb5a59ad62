"""ResumedHandler: how a request handler that ran inline in the read callback (``RemotingConnection``) and then
suspended continues in a Task of its own, exactly as if the Task had run it from the start.
"""

from __future__ import annotations

from collections.abc import Coroutine, Generator
from typing import Any


class ResumedHandler(Coroutine[Any, None, None]):
    """A handler coroutine whose first step ran inline and suspended on ``first`` (a future, or None for a bare
    yield), as a coroutine a Task can run: the Task's first step hands it ``first`` to wait on, and every later
    send or throw (a cancel, even one before that first step) goes straight to the handler, as if the Task had
    run the handler from its start."""

    __slots__ = ("_coro", "_first", "_started")

    def __init__(self, coro: Coroutine[Any, None, None], first: Any) -> None:
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

    @property
    def __name__(self) -> str:  # what a Task's repr names: the handler
        return str(getattr(self._coro, "__qualname__", "handler"))

    def __await__(self) -> Generator[Any, None, None]:
        raise TypeError("a ResumedHandler is run by a Task, not awaited")
