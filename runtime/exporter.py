"""The daemons' observability port (J ``metricsPromExporterHost``/``metricsPromExporterPort``): a small asyncio HTTP
endpoint on the daemon's own event loop serving

* ``GET /metrics`` (and ``/``): the Prometheus text format of a ``prometheus_client`` registry, or OpenMetrics when
  the ``Accept`` header asks for it (``prometheus_client``'s own encoder choice);
* ``GET /healthz``: 200 while the process serves (liveness);
* ``GET /readyz``: 200 when the ``ready`` callable says so, else 503 with the reason (readiness).

Collecting on the event loop (not in prometheus_client's thread server) means collectors read the daemon's state
with no locks and no torn reads; the text encoding of the collected families (most of a scrape's cost) then runs in
a worker thread, so a large scrape does not hold the loop for its whole duration. Also here: ``RpcLatencyCollector``, the ``rocketmq_rpc_latency`` histogram both
the broker and the name server export from ``RpcStats``, and ``DaemonMetrics``, the registry + endpoint + start/stop
both build their metrics on. This module is imported by daemons only, never by the SDK.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable, Mapping

import structlog
from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics_core import HistogramMetricFamily, Metric
from prometheus_client.registry import Collector, CollectorRegistry

from protocol.codes import RequestCode, ResponseCode
from protocol.remoting.rpc_stats import RpcStats

_log = structlog.get_logger("rocketq.remoting.metrics")

MAX_REQUEST_HEAD = 16 * 1024
READ_TIMEOUT_S = 10.0

# Readiness: (ready, reason shown with the 503)
Readiness = Callable[[], tuple[bool, str]]


def _code_names(enum: Iterable[RequestCode] | Iterable[ResponseCode]) -> dict[int, str]:
    return {int(c): c.name.lower() for c in enum}


REQUEST_CODE_NAMES = _code_names(RequestCode)
RESPONSE_CODE_NAMES = _code_names(ResponseCode)


class RpcLatencyCollector(Collector):
    """``rocketmq_rpc_latency_milliseconds`` (histogram; J's buckets and labels) from an ``RpcStats``;
    ``const_labels`` is called at each scrape (a name server knows its node id only once bound)."""

    def __init__(self, stats: RpcStats, const_labels: Callable[[], Mapping[str, str]]) -> None:
        self._stats = stats
        self._const = const_labels

    def collect(self) -> Iterable[Metric]:
        const = dict(self._const())
        names = [*const, "protocol_type", "request_code", "response_code", "is_long_polling", "result"]
        fam = HistogramMetricFamily(
            "rocketmq_rpc_latency_milliseconds",
            "server-side time from request decode to response write",
            labels=names,
        )
        bounds = self._stats.buckets_ms
        for (code, resp_code, long_polling, result), row in sorted(self._stats.snapshot()):
            cumulative: list[tuple[str, float]] = []
            acc = 0.0
            for bound, n in zip((*bounds, float("inf")), row[:-1], strict=True):
                acc += n
                cumulative.append(("+Inf" if bound == float("inf") else repr(float(bound)), acc))
            values = [
                *const.values(),
                "remoting",
                REQUEST_CODE_NAMES.get(code, str(code)),
                RESPONSE_CODE_NAMES.get(resp_code, str(resp_code)),
                "true" if long_polling else "false",
                result,
            ]
            fam.add_metric(values, cumulative, row[-1])
        yield fam


class _Snapshot(Collector):
    """Metric families already collected, for encoding off the event loop."""

    def __init__(self, families: list[Metric]) -> None:
        self._families = families

    def collect(self) -> Iterable[Metric]:
        return self._families


class MetricsEndpoint:
    """``/metrics``, ``/healthz`` and ``/readyz`` on ``host:port`` (port 0 picks a free one; see ``port``)."""

    def __init__(self, registry: CollectorRegistry, host: str, port: int, ready: Readiness, *, name: str) -> None:
        self._registry = registry
        self._host = host
        self._port = port
        self._ready = ready
        self._name = name
        self._server: asyncio.Server | None = None

    @property
    def port(self) -> int:
        if self._server is None or not self._server.sockets:
            return self._port
        return int(self._server.sockets[0].getsockname()[1])

    async def start(self) -> None:
        """Bind and listen; raises OSError (port in use) for the caller to report."""
        self._server = await asyncio.start_server(self._handle, self._host, self._port, reuse_address=True)
        _log.info("metrics endpoint listening", server=self._name, host=self._host, port=self.port)

    async def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 2.0)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), READ_TIMEOUT_S)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ConnectionError):
            writer.close()
            return
        try:
            status, ctype, body = await self._respond(head)
        except Exception as exc:  # a collector bug answers 500 and is logged; the daemon keeps serving
            _log.exception("metrics request failed")
            status, ctype, body = "500 Internal Server Error", "text/plain; charset=utf-8", f"{exc}\n".encode()
        writer.write(
            f"HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\n"
            "Connection: close\r\n\r\n".encode()
            + body
        )
        with contextlib.suppress(ConnectionError):
            await writer.drain()
        writer.close()

    async def _respond(self, head: bytes) -> tuple[str, str, bytes]:
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split()
        if len(parts) < 2:
            return "400 Bad Request", "text/plain; charset=utf-8", b"bad request\n"
        method, target = parts[0], parts[1].split("?", 1)[0]
        if method not in ("GET", "HEAD"):
            return "405 Method Not Allowed", "text/plain; charset=utf-8", b"GET only\n"
        headers = {}
        for line in lines[1:]:
            key, _, value = line.partition(":")
            headers[key.strip().lower()] = value.strip()
        if target in ("/metrics", "/"):
            encoder, ctype = choose_encoder(headers.get("accept", ""))
            # collect on the loop (collectors read the daemon's state without locks), encode in a thread: the text
            # encoding is most of a scrape's cost, and there the loop keeps getting GIL slices to serve requests
            snapshot = CollectorRegistry(auto_describe=False)
            snapshot.register(_Snapshot(list(self._registry.collect())))
            return "200 OK", ctype, await asyncio.to_thread(encoder, snapshot)
        if target == "/healthz":
            return "200 OK", "text/plain; charset=utf-8", b"ok\n"
        if target == "/readyz":
            ok, reason = self._ready()
            if ok:
                return "200 OK", "text/plain; charset=utf-8", b"ready\n"
            return "503 Service Unavailable", "text/plain; charset=utf-8", f"not ready: {reason}\n".encode()
        return "404 Not Found", "text/plain; charset=utf-8", b"not found: try /metrics, /healthz, /readyz\n"


class DaemonMetrics:
    """A daemon's metrics registry and endpoint: ``rocketmq_rpc_latency`` (fed by ``observe``, the remoting server's
    request observer) with the daemon's constant labels, plus the collectors the daemon adds with ``register``,
    served by a ``MetricsEndpoint`` that ``start``/``stop`` open and close. The broker and the name server
    subclass it."""

    def __init__(
        self, labels: Callable[[], Mapping[str, str]], host: str, port: int, ready: Readiness, *, name: str
    ) -> None:
        self.rpc = RpcStats()
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(RpcLatencyCollector(self.rpc, labels))
        self.endpoint = MetricsEndpoint(self.registry, host, port, ready, name=name)
        self.observe = self.rpc.observe

    def register(self, collector: Collector) -> None:
        self.registry.register(collector)

    @property
    def port(self) -> int:
        return self.endpoint.port

    async def start(self) -> None:
        await self.endpoint.start()

    async def stop(self) -> None:
        await self.endpoint.stop()
