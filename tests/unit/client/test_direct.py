"""client.direct: a thread's blocking request/reply against a real socket server that answers in odd ways."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Callable, Iterator

import pytest

from client.direct import DirectConnections
from protocol.command import RemotingCommand
from protocol.frame import FrameDecoder, encode_frame

Answer = Callable[[socket.socket, RemotingCommand], None]


@pytest.fixture
def server() -> Iterator[Callable[[Answer], str]]:
    """A TCP server on port 0 (a thread per connection) that hands every request frame to ``answer``."""
    listeners: list[socket.socket] = []

    def start(answer: Answer) -> str:
        ls = socket.create_server(("127.0.0.1", 0))
        listeners.append(ls)

        def handle(conn: socket.socket) -> None:
            dec = FrameDecoder()
            with conn:
                try:
                    while data := conn.recv(65536):
                        dec.feed(data)
                        while (cmd := dec.next_frame()) is not None:
                            answer(conn, cmd)
                except OSError:
                    return

        def serve() -> None:
            while True:
                try:
                    conn, _ = ls.accept()
                except OSError:
                    return
                threading.Thread(target=handle, args=(conn,), daemon=True).start()

        threading.Thread(target=serve, daemon=True).start()
        return f"127.0.0.1:{ls.getsockname()[1]}"

    yield start
    for ls in listeners:
        ls.close()


def test_the_reply_is_the_response_with_the_request_opaque(server: Callable[[Answer], str]) -> None:
    def answer(conn: socket.socket, cmd: RemotingCommand) -> None:
        stale = cmd.make_response(remark="stale")
        stale.opaque = cmd.opaque + 1000
        request_from_broker = RemotingCommand.request(39)  # a request on the connection, not a reply
        conn.sendall(encode_frame(stale) + encode_frame(request_from_broker) + encode_frame(cmd.make_response(0, "ok")))

    addr = server(answer)
    direct = DirectConnections()
    for _ in range(2):  # the connection is kept for the next request
        reply = direct.request(addr, RemotingCommand.request(310, {"k": "v"}, b"body"), 5)
        assert reply.is_response and reply.remark == "ok"
    assert len(direct._all) == 1
    direct.close()
    assert not direct._all


def test_a_closed_connection_or_a_silent_broker_fails_and_drops_the_connection(
    server: Callable[[Answer], str],
) -> None:
    closing = server(lambda conn, cmd: conn.shutdown(socket.SHUT_RDWR))
    silent = server(lambda conn, cmd: None)
    direct = DirectConnections()
    with pytest.raises(ConnectionError):
        direct.request(closing, RemotingCommand.request(310), 5)
    with pytest.raises(TimeoutError):
        direct.request(silent, RemotingCommand.request(310), 0.2)
    assert not direct._all  # both dropped; the next request dials again


def test_each_thread_has_its_own_connection(server: Callable[[Answer], str]) -> None:
    addr = server(lambda conn, cmd: conn.sendall(encode_frame(cmd.make_response())))
    direct = DirectConnections()
    direct.request(addr, RemotingCommand.request(310), 5)
    other = threading.Thread(target=direct.request, args=(addr, RemotingCommand.request(310), 5))
    other.start()
    other.join()
    assert len(direct._all) == 2
    direct.close()
    with pytest.raises(ConnectionError):
        direct.request("127.0.0.1:1", RemotingCommand.request(310), 1)  # closed: no new dials


def test_the_socket_blocks_with_kernel_timeouts_and_a_reply_in_pieces_is_read_whole(
    server: Callable[[Answer], str],
) -> None:
    def in_pieces(conn: socket.socket, cmd: RemotingCommand) -> None:
        data = encode_frame(cmd.make_response(0, "whole"))
        conn.sendall(data[:7])  # not even the whole length prefix and header length
        threading.Event().wait(0.05)
        conn.sendall(data[7:])

    def stalls(conn: socket.socket, cmd: RemotingCommand) -> None:
        conn.sendall(encode_frame(cmd.make_response(0, "never"))[:20])  # and never the rest

    direct = DirectConnections()
    pieces = server(in_pieces)
    reply = direct.request(pieces, RemotingCommand.request(310), 5)
    assert reply.remark == "whole"
    (conn,) = direct._all
    # no Python-level timeout (that would poll before every call and switch modes per settimeout): the kernel's
    assert conn.sock.gettimeout() is None
    rcv = conn.sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, 16)
    snd = conn.sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, 16)
    assert rcv == snd and sum(struct.unpack("@ll", rcv)) > 0
    with pytest.raises(TimeoutError):
        direct.request(server(stalls), RemotingCommand.request(310), 0.3)
    assert len(direct._all) == 1  # the stalled connection was dropped, the other kept
    assert direct.request(pieces, RemotingCommand.request(310), 5).remark == "whole"
    direct.close()
