"""Process-level plumbing shared by every daemon and the native client: uvloop, structlog, signal handling, and
the start / banner / wait-for-signal / stop life of a daemon (``serve``), with its one-line failures (``fail``).

``settle_heap`` runs once a daemon has started (``serve``): one full collection, then ``gc.freeze`` moves every
object start-up left (modules, config, the tables loaded from disk) to CPython's permanent generation. Measured with
``gc.callbacks`` during workload B (issue 21): no collection of any generation runs in the broker or name server while
messages flow; the only full collections are during start-up (13-48 ms each on a loaded 2-core VM), and one that
comes later (a long run, a burst of new topics) would walk those ~50k start-up objects again without the freeze.

``configure_logging`` renders to the console when stderr is a TTY and to JSON lines otherwise (docs/DESIGN.md).
``run`` runs a coroutine on uvloop when it is installed, on asyncio's default loop otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import signal
import sys
from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import Any, Protocol, Self, TypeVar

from runtime import logsetup
from runtime.config_loader import ConfigError
from runtime.logsetup import LogSettings

__all__ = [
    "Daemon",
    "DaemonApp",
    "config_file_main",
    "configure_logging",
    "daemon_main",
    "fail",
    "install_stop_signals",
    "run",
    "serve",
    "settle_heap",
]

T = TypeVar("T")


def configure_logging(level: str = "INFO", *, json: bool | None = None, settings: LogSettings | None = None) -> None:
    """Route structlog and stdlib logging to stderr (JSON unless stderr is a terminal) and, with ``settings`` that
    name a directory, to rotating log files (``logsetup``)."""
    if settings is None:
        settings = LogSettings(level=level)
    logsetup.configure(settings, stderr_json=json)


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` to completion on uvloop if available."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    return uvloop.run(main)


def install_stop_signals(stop: Callable[[], None]) -> None:
    """Call ``stop`` on SIGINT/SIGTERM (once each; a second signal falls back to the default action)."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):

        def _handler(s: signal.Signals = sig) -> None:
            loop.remove_signal_handler(s)
            stop()

        try:
            loop.add_signal_handler(sig, _handler)
        except (NotImplementedError, RuntimeError):  # not the main thread, or Windows
            pass


class Daemon(Protocol):
    """What ``serve`` runs: a server application with an async start and stop."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


class DaemonApp:
    """The base of a server application (broker, name server, controller): ``async with app:`` starts it and stops
    it on the way out, whatever ends the block."""

    async def start(self) -> None:
        raise NotImplementedError

    async def stop(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()


C = TypeVar("C")


def daemon_main(
    prog: str,
    load: Callable[[], C],
    print_config: Callable[[C], str | None],
    start: Callable[[C], tuple[LogSettings, str, Callable[[], Coroutine[Any, Any, int]]]],
) -> int:
    """A daemon's ``main`` once its flags are parsed: ``load()`` the config (a ``ConfigError`` is one line and exit
    1), print it and exit 0 when ``print_config`` gives text (``-p``), else ``run_daemon`` what ``start`` names: the
    log settings, the log directory and the coroutine that serves."""
    try:
        cfg = load()
    except ConfigError as exc:
        return fail(prog, str(exc))
    text = print_config(cfg)
    if text is not None:
        sys.stdout.write(text)
        return 0
    logs, log_dir, main = start(cfg)
    return run_daemon(prog, logs, log_dir, main)


def config_file_main(
    prog: str,
    args: argparse.Namespace,
    load_config: Callable[[str | None], C],
    format_config: Callable[[C], str],
    start: Callable[[C], tuple[LogSettings, str, Callable[[], Coroutine[Any, Any, int]]]],
) -> int:
    """``daemon_main`` of a daemon whose flags are J's ``-c FILE`` (``args.configFile``) and ``-p``
    (``args.printConfigItem``: print ``format_config`` of the config and exit)."""
    return daemon_main(
        prog,
        lambda: load_config(args.configFile),
        lambda cfg: format_config(cfg) if args.printConfigItem else None,
        start,
    )


def settle_heap() -> None:
    """Collect start-up's garbage, then freeze what survives (``gc.freeze``): later collections, a full one
    included, walk only objects made after start-up. Collect first: a cycle frozen would never be freed."""
    gc.collect()
    gc.freeze()


def fail(prog: str, message: str) -> int:
    """One line on stderr, exit status 1: how a daemon reports bad config or a failed start (no traceback)."""
    print(f"{prog}: {message}", file=sys.stderr, flush=True)
    return 1


def run_daemon(prog: str, logs: LogSettings, log_dir: str, main: Callable[[], Coroutine[Any, Any, int]]) -> int:
    """A daemon's ``main`` after its config is read: set up ``logs`` (a ``log_dir`` that cannot be written is a
    one-line failure), then run ``main()`` and return its exit status (0 for a signal that comes before the stop
    handlers are installed)."""
    try:
        configure_logging(settings=logs)
    except OSError as exc:
        return fail(prog, f"cannot write logs under {log_dir}: {exc}")
    try:
        return run(main())
    except KeyboardInterrupt:
        return 0


async def serve(
    app: Daemon,
    *,
    prog: str,
    listen: str,
    banner: Callable[[], str],
    start_errors: tuple[type[Exception], ...] = (),
) -> int:
    """Start ``app``, settle the heap (``settle_heap``), print ``banner()`` on stdout (scripts and health checks
    wait for it), run until SIGINT or SIGTERM, stop cleanly and return 0. A port that cannot be bound on ``listen`` (host:port) or one of
    ``start_errors`` is one line on stderr and 1."""
    try:
        await app.start()
    except OSError as exc:
        # uvloop's strerror repeats the address; a resolver error (gaierror) has a negative errno
        reason = os.strerror(exc.errno) if exc.errno and exc.errno > 0 else exc.strerror or str(exc)
        return fail(prog, f"cannot listen on {listen}: {reason}")
    except start_errors as exc:
        return fail(prog, str(exc))
    settle_heap()
    stop = asyncio.Event()
    install_stop_signals(stop.set)
    print(banner(), flush=True)
    try:
        await stop.wait()
    finally:
        await app.stop()
    return 0
