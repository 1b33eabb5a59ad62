"""Blocking request/reply from the caller's own thread: the sync producer's path for a plain send.

Without it a sync ``Producer.send`` hands the send to its background loop and blocks on the result: two thread
hand-offs and an event-loop pass per send. Here the calling thread writes the request on a blocking socket of its
own and reads the reply, as blocking clients do (redis-py's ``Redis``, J's synchronous send). The request is what
the async producer would have written (``Producer.direct_request``); the frames are the remoting protocol's
(``protocol/frame.py``).

* One connection per (thread, broker address), dialled on first use with TCP_NODELAY; threads never share one,
  so a reply on it always answers that thread's request. ``close()`` closes every thread's connections.
* The socket stays in blocking mode and its timeouts are the kernel's (SO_SNDTIMEO / SO_RCVTIMEO), set only when the
  timeout changes: a request is one ``send`` and (for a reply that arrives whole) one ``recv_into`` (straight into
  the frame decoder's buffer). A Python socket timeout instead costs a mode-switching ``ioctl`` per ``settimeout`` and a ``poll`` before every call: six system
  calls per request instead of two (``strace -c``; on the 2-core VM they were cheap, and single sends/s did not move
  beyond noise). A request on a connection dialled for it, and a ``recv`` that has to wait again (a reply in
  pieces), wait at most what is left of the deadline.
* A request's reply is the next response frame carrying its opaque; any other frame (a request from the broker, a
  stale reply) is skipped.
* Headers are JSON (asking for msgpack) until the broker's reply on that connection offered it (``protocol.header_codec``).
* Any socket error or timeout closes that connection and propagates (``OSError``; ``TimeoutError`` for a timeout):
  the caller falls back to the async path, which retries and refreshes routes as J does.
"""

from __future__ import annotations

import socket
import struct
import threading
import time

from protocol.codes import SerializeType
from protocol.command import RemotingCommand, next_opaque
from protocol.frame import FrameDecoder, encode_frame
from protocol.header_codec import MSGPACK_OFFER_FIELD, ask_msgpack


class _Conn:
    __slots__ = ("decoder", "msgpack", "sock", "timeout")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.decoder = FrameDecoder()
        self.timeout = 0.0  # the kernel timeouts set on the socket (0: none yet)
        self.msgpack = False  # the broker offered msgpack headers on this connection (protocol.header_codec)

    def set_timeout(self, timeout: float) -> None:
        """Both kernel timeouts to ``timeout`` seconds (at least 1 µs: 0 would mean none)."""
        if timeout != self.timeout:
            us = max(1, int(timeout * 1e6))
            tv = struct.pack("@ll", us // 1_000_000, us % 1_000_000)  # struct timeval
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, tv)
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, tv)
            self.timeout = timeout


class DirectConnections:
    """Each calling thread's blocking connections to brokers."""

    def __init__(self) -> None:
        self._local = threading.local()
        self._lock = threading.Lock()
        self._all: set[_Conn] = set()
        self._closed = False

    def request(self, addr: str, cmd: RemotingCommand, timeout: float) -> RemotingCommand:
        """Write ``cmd`` to ``addr`` and return its reply within ``timeout`` seconds."""
        conns: dict[str, _Conn] | None = getattr(self._local, "conns", None)
        if conns is None:
            conns = self._local.conns = {}
        conn = conns.get(addr)
        deadline = time.monotonic() + timeout
        try:
            wait = timeout
            if conn is None:
                conn = conns[addr] = self._dial(addr, timeout)
                wait = deadline - time.monotonic()  # the dial took its share of the deadline
                if wait <= 0:
                    raise TimeoutError(f"no reply from {addr} within {timeout:.1f}s")
            if cmd.opaque == 0:
                cmd.opaque = next_opaque()
            if cmd.serialize_type == SerializeType.MSGPACK and not conn.msgpack:
                ask_msgpack(cmd)
            sock = conn.sock
            conn.set_timeout(wait)
            try:
                sock.sendall(encode_frame(cmd))
                decoder = conn.decoder
                waited = False
                while True:
                    frame = decoder.next_frame()
                    if frame is None:
                        if waited:  # a second wait for this reply: only what is left of the deadline
                            left = deadline - time.monotonic()
                            if left <= 0:
                                raise TimeoutError(f"no reply from {addr} within {timeout:.1f}s")
                            conn.set_timeout(left)
                        waited = True
                        received = sock.recv_into(decoder.get_buffer())
                        if not received:
                            raise ConnectionError(f"{addr} closed the connection")
                        decoder.buffer_updated(received)
                    elif frame.is_response and frame.opaque == cmd.opaque:
                        if not conn.msgpack and MSGPACK_OFFER_FIELD in frame.ext_fields:
                            conn.msgpack = True
                        return frame
            except BlockingIOError:  # EAGAIN from a blocking socket: a kernel timeout ran out
                raise TimeoutError(f"no reply from {addr} within {timeout:.1f}s") from None
        except BaseException:
            if conn is not None:
                conns.pop(addr, None)
                self._forget(conn)
            raise

    def _dial(self, addr: str, timeout: float) -> _Conn:
        if self._closed:
            raise ConnectionError("the producer is closed")
        host, _, port = addr.rpartition(":")
        sock = socket.create_connection((host, int(port)), timeout)
        sock.settimeout(None)  # blocking from here on; timeouts are the kernel's (module docstring)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = _Conn(sock)
        with self._lock:
            self._all.add(conn)
        return conn

    def _forget(self, conn: _Conn) -> None:
        with self._lock:
            self._all.discard(conn)
        conn.sock.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            conns, self._all = self._all, set()
        for conn in conns:
            conn.sock.close()
