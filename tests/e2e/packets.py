"""An HTTP request sent as a network sends it: in packets, so that the server reads its head
in pieces.  On loopback a request of under 64 KiB comes in one read, and a limit on an
incomplete head is never met; over a network it is met at its own size."""

from __future__ import annotations

import socket
import time
from urllib.parse import urlsplit

PACKET_BYTES = 1_400  # an Ethernet frame's payload, less TCP/IP headers and options
PAUSE_AFTER = 17_000  # bytes
# A wide vector in a link, as the Vector Lab writes it: 40,796 characters (d = 3,400)
WIDE_VECTOR = "%2C+".join(["-0.12345"] * 3_400)


def status_in_packets(url: str, path_and_query: str, packet: int = PACKET_BYTES) -> str:
    """The status line ``url``'s server answers to ``GET path_and_query`` sent ``packet``
    bytes at a time, a millisecond apart and 0.3 s apart once past ``PAUSE_AFTER`` bytes
    ("HTTP/1.1 200 OK"); "" when the server closed the connection before the request was
    sent whole."""
    address = urlsplit(url)
    head = (
        f"GET {path_and_query} HTTP/1.1\r\nHost: {address.netloc}\r\n"
        "User-Agent: packets\r\nConnection: close\r\n\r\n"
    ).encode()
    with socket.create_connection((address.hostname, address.port), timeout=30) as sock:
        try:
            for start in range(0, len(head), packet):
                sock.sendall(head[start : start + packet])
                # past 16 KiB (h11's and HAProxy's default), a pause long enough for a busy
                # server to read what came: its head is then incomplete past that limit
                pause = start < PAUSE_AFTER <= start + packet
                time.sleep(0.3 if pause else 0.001)
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused mid-way: its answer, if any, is still there to read
        answer = b""
        while b"\r\n" not in answer:
            try:
                chunk = sock.recv(4096)
            except ConnectionResetError:
                break
            if not chunk:
                break
            answer += chunk
    return answer.split(b"\r\n", 1)[0].decode("latin-1") if b"\r\n" in answer else ""
