"""Census of one single SEND_MESSAGE_V2 through the broker's code, in-process: heap allocations and Python-level
calls per send, stage by stage, from the frame's bytes to the reply's.

The stages (each run ``--sends`` times over fresh requests, after a warm-up; a broker's handlers over a started
store in a temporary directory, as ``bench/handler_cpu_bench.py``; msgpack headers, as the Python SDK sends):

=============== ==================================================================================================
stage           what runs
=============== ==================================================================================================
frame decode    ``FrameDecoder.feed`` + ``next_frame``: bytes → ``RemotingCommand`` (msgpack header, ext dict)
handler         what the connection runs per request: ``RequestContext`` + the send handler's coroutine to its
                reply (header → ``SendRequest`` → ``SendService.send`` → store append → reply command)
  request       the ``SendRequest`` read from the ext fields (part of "handler"; ``SendRequest.of_ext_fields``,
                or in older checkouts the header object, then ``SendRequest.of_header``)
  service       ``SendService.send`` on a ready request, the store append included (part of "handler")
  store append  ``MessageStore.append`` of a ready request (part of "service")
  reply         the reply command from an outcome (part of "handler")
dispatch        the dispatcher's drain of one append (consume queue unit, key index), scheduled once per send
reply encode    ``encode_frame`` of the reply: its bytes
=============== ==================================================================================================

Allocations are counted by a malloc counter preloaded into a child process run with ``PYTHONMALLOC=malloc`` (built
here with ``cc`` on first use): every Python object and buffer allocation that reaches the allocator; objects taken
from CPython's free lists (small tuples, floats, dicts, lists, frames) are not counted. Calls are counted with
``sys.setprofile`` (Python functions and the builtins they call); code compiled by mypyc calls without profile
events, so only the pure build's call counts are complete (``ROCKETQ_PURE=1``). A stage's count includes its
sub-stages'.

    .venv/bin/python bench/send_census.py [--sends 2000]                 # this checkout as it is built
    ROCKETQ_PURE=1 .venv/bin/python bench/send_census.py --calls         # + calls per send (pure build)
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import ctypes
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

_COUNTER_C = r"""
#include <stddef.h>
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
static unsigned long n_alloc;
void *malloc(size_t s) { n_alloc++; return __libc_malloc(s); }
void *calloc(size_t a, size_t b) { n_alloc++; return __libc_calloc(a, b); }
void *realloc(void *p, size_t s) { if (!p) n_alloc++; return __libc_realloc(p, s); }
unsigned long rocketq_alloc_count(void) { return n_alloc; }
"""
_WARM = 300


def _counter_lib() -> Path:
    """The malloc counter's shared library, built once per user under the temp directory."""
    lib = Path(tempfile.gettempdir()) / f"rocketq-alloc-count-{os.getuid()}.so"
    if not lib.exists():
        src = lib.with_suffix(".c")
        src.write_text(_COUNTER_C)
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    return lib


def _where(frame: Any) -> str:
    """file:function of a call (a generated ``__init__``: its class)."""
    code = frame.f_code
    if code.co_filename.startswith("<"):
        self = frame.f_locals.get("self")
        return f"{type(self).__module__}.{type(self).__qualname__}.{code.co_name}"
    return f"{code.co_filename.rsplit('/', 1)[-1]}:{code.co_name}"


class _Counter:
    def __init__(self, calls: bool) -> None:
        self._alloc: Callable[[], int] = ctypes.CDLL(None).rocketq_alloc_count
        self._alloc.restype = ctypes.c_ulong
        self.calls = calls
        self.by_name: collections.Counter[str] = collections.Counter()

    def measure(
        self, n: int, step: Callable[[int], object], between: Callable[[], object] | None = None
    ) -> tuple[float, float]:
        """(allocations, calls) per call of ``step(i)`` for i in range(n); ``between`` runs after each, uncounted."""
        by_name = self.by_name
        ncalls = 0

        def prof(frame: Any, event: str, arg: Any) -> None:
            nonlocal ncalls
            if event == "call":
                ncalls += 1
                by_name[_where(frame)] += 1
            elif event == "c_call":
                ncalls += 1
                by_name[f"builtin:{getattr(arg, '__qualname__', arg)}"] += 1

        count = self._alloc
        allocs = 0
        for i in range(n):
            if self.calls:
                sys.setprofile(prof)
            a0 = count()
            step(i)
            allocs += count() - a0
            sys.setprofile(None)
            if between is not None:
                between()
        return allocs / n, (ncalls - 2 * n) / n if self.calls else float("nan")  # less step's own call/return


async def _census(n: int, calls: bool) -> None:
    sys.path.insert(0, ".")
    import structlog

    import protocol.record
    from broker.services.send import SendRequest
    from protocol import headers as _headers
    from protocol.bodies import TopicConfig
    from protocol.codes import RequestCode, SerializeType
    from protocol.command import RemotingCommand
    from protocol.frame import FrameDecoder, encode_frame
    from protocol.headers import SEND_V2_AS_V1

    SEND_V2_NAMES = getattr(_headers, "SEND_V2_NAMES", None)
    from broker import topics as T
    from protocol.remoting.handler import RequestContext
    from tests.integration.broker_wire import send_cmd
    from tests.unit.broker.handler_support import FakeChannel, wired_broker

    counter = _Counter(calls)
    total = n + _WARM
    with tempfile.TemporaryDirectory() as d:
        async with wired_broker(Path(d), mappedFileSizeCommitLog=256 * 1024 * 1024) as b:
            b.topics.put(TopicConfig.with_queues("BenchT", 4, T.PERM_RW))
            handler = b.registry.get(RequestCode.SEND_MESSAGE_V2)
            assert handler is not None
            handlers = handler.__self__  # type: ignore[attr-defined]
            svc = handlers._svc
            store = b.store
            chan = FakeChannel()
            log = structlog.get_logger("census")

            def frame(i: int) -> bytes:
                cmd = send_cmd("BenchT", b"x" * 256, tags="TagA", queue_id=i % 4, v2=True)
                cmd.serialize_type = SerializeType.MSGPACK
                return encode_frame(cmd)

            frames = [frame(i) for i in range(total)]
            dec = FrameDecoder()

            def decode(i: int) -> Any:
                dec.feed(frames[i])
                return dec.next_frame()

            cmds = [decode(i) for i in range(total)]
            cmds2 = [decode(i) for i in range(total)]
            replies: list[Any] = []

            def handle(i: int) -> None:
                cmd = cmds2[i]
                got = handler(RequestContext(chan, cmd, log, 0.0), cmd)
                if isinstance(got, RemotingCommand):  # a plain handler's reply (the connection takes it as it is)
                    replies.append(got)
                    return
                try:  # older checkouts: the coroutine of an ``async def`` handler, driven as the connection drives it
                    got.send(None)
                except StopIteration as done:
                    replies.append(done.value)
                else:
                    raise AssertionError("the send suspended")

            def drain() -> None:
                store.dispatcher.drain()

            def drained(i: int) -> None:
                handle(i)
                drain()

            rows: list[tuple[str, tuple[float, float]]] = []
            rows.append(("frame decode", counter.measure(n, lambda i: decode(_WARM + i))))
            for i in range(_WARM):
                drained(i)
            rows.append(("handler", counter.measure(n, lambda i: handle(_WARM + i), drain)))
            store.dispatcher.drain()
            peer = chan.peer
            if hasattr(SendRequest, "of_ext_fields"):  # the header read straight into the request

                def to_request(i: int) -> Any:
                    return SendRequest.of_ext_fields(cmds[i].ext_fields, SEND_V2_NAMES, cmds[i].body, peer, False)

            else:  # older checkouts: a header object, then the request

                def to_request(i: int) -> Any:
                    return SendRequest.of_header(
                        SEND_V2_AS_V1.from_ext_fields(cmds[i].ext_fields), cmds[i].body, peer, False
                    )

            rows.append(("  request", counter.measure(n, to_request)))
            reqs = [to_request(i) for i in range(total)]
            outcomes: list[Any] = []

            def serve(i: int) -> None:
                coro = svc.send(reqs[i], defer=True)
                try:
                    coro.send(None)
                except StopIteration as done:
                    outcomes.append(done.value)

            rows.append(("  service", counter.measure(n, serve, drain)))
            store.dispatcher.drain()
            reqs = [to_request(i) for i in range(total)]
            rows.append(("  store append", counter.measure(n, lambda i: store.append(reqs[i]), drain)))
            store.dispatcher.drain()
            rows.append(("  reply", counter.measure(n, lambda i: handlers.reply(cmds[i], outcomes[i]))))
            # dispatch: each append made outside the count, then its drain counted
            pending = [to_request(i) for i in range(n + 1)]
            store.append(pending.pop())
            rows.append(("dispatch", counter.measure(n, lambda i: drain(), lambda: store.append(pending.pop()))))
            rows.append(("reply encode", counter.measure(n, lambda i: encode_frame(replies[i]))))
    compiled = not (protocol.record.__file__ or "").endswith(".py")
    print(f"build: {'compiled' if compiled else 'pure'}; {n} sends; per send:")
    print(f"{'stage':16} {'allocs':>8} {'calls':>8}")
    for name, (a, c) in rows:
        print(f"{name:16} {a:8.1f} {c:8.1f}")
    if calls:
        print("\nthe calls, per send (all stages above, sub-stages counted again):")
        for name, count in counter.by_name.most_common(80):
            if count / n >= 0.5:
                print(f"{count / n:6.1f}  {name}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sends", type=int, default=2000)
    ap.add_argument("--calls", action="store_true", help="count Python-level calls too (complete on the pure build)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        asyncio.run(_census(a.sends, a.calls))
        return
    env = dict(os.environ, PYTHONMALLOC="malloc", LD_PRELOAD=str(_counter_lib()))
    args = [sys.executable, str(Path(__file__).resolve()), "--child", "--sends", str(a.sends)]
    subprocess.run([*args, *(["--calls"] if a.calls else [])], env=env, check=True)


if __name__ == "__main__":
    main()
