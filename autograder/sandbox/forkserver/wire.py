"""What the fork server and its client say to each other, over a Unix socket pair.

A message is a 4-byte little-endian length and a JSON body. A request to start a child carries,
attached with SCM_RIGHTS to its first bytes, the file descriptors the child gets: stdin, stdout,
stderr, the status pipe and any ``pass_fds``. The replies: ``{"ready": true, "preloaded": [...]}``
once the server has imported its preload and later; then per request ``{"pid"}`` or
``{"error": "one line"}``. When a child exits, the server writes its wait status (4 bytes, ``<i``)
to the child's status pipe and closes it. The client closing the socket tells the server to stop.
"""
from __future__ import annotations

import array
import json
import socket
import struct

#: Most file descriptors one request may carry (stdin, stdout, stderr, status, pass_fds).
MAX_FDS = 16
#: Seconds the server may take to stop (kill and reap its children) before the client kills it.
STOP_TIMEOUT_S = 5.0
#: How a child's wait status is packed on its status pipe.
STATUS = struct.Struct("<i")


def send_msg(sock: socket.socket, body: dict, fds=()) -> None:
    """Send ``body`` (JSON), with ``fds`` attached to its header when there are any."""
    data = json.dumps(body).encode()
    header = struct.pack("<I", len(data))
    if fds:
        sock.sendmsg([header], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
    else:
        sock.sendall(header)
    sock.sendall(data)


def _recv_exact(sock: socket.socket, n: int) -> bytes | None:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def recv_msg(sock: socket.socket, with_fds: bool = False):
    """The next message (None once the other end closed, or reset the connection as it exited
    with a reply unread); ``with_fds``: (message, received fds)."""
    try:
        return _recv_msg(sock, with_fds)
    except ConnectionResetError:
        return (None, []) if with_fds else None


def _recv_msg(sock: socket.socket, with_fds: bool):
    fds = []
    if with_fds:
        msg, ancdata, _flags, _addr = sock.recvmsg(4, socket.CMSG_SPACE(MAX_FDS * 4))
        for level, kind, data in ancdata:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                arr = array.array("i")
                arr.frombytes(data[:len(data) - len(data) % arr.itemsize])
                fds.extend(arr)
        if len(msg) < 4 and msg:
            rest = _recv_exact(sock, 4 - len(msg))
            msg = None if rest is None else msg + rest
        header = msg or None
    else:
        header = _recv_exact(sock, 4)
    if not header:
        return (None, fds) if with_fds else None
    body = _recv_exact(sock, struct.unpack("<I", header)[0])
    value = None if body is None else json.loads(body)
    return (value, fds) if with_fds else value
