"""A listener on the grader's loopback for the sandbox's network tests: whatever a child sends
it is kept, so a test can prove nothing arrived."""
from __future__ import annotations

import socket
import threading
from contextlib import contextmanager


@contextmanager
def listener():
    """(port, the bytes each connection sent) of a TCP listener on 127.0.0.1, closed at the end."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    server.settimeout(0.2)
    received: list[bytes] = []
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                received.append(conn.recv(64))
                conn.close()
            except OSError:
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], received
    finally:
        stop.set()
        thread.join()
        server.close()
