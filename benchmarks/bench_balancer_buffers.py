"""Benchmark: what HAProxy's larger buffer costs a class.  ``deploy/haproxy.cfg`` sets
``tune.bufsize`` to 256 KiB (the default is 16 KiB) so that a long link's request head fits.
Does every open websocket now hold two 256 KiB buffers?

HAProxy runs with the class's own configuration, once per buffer size, in front of a stand-in
process that answers every request with a websocket upgrade and then reads whatever comes (no
Streamlit: only HAProxy's memory is measured).  ``--sockets`` connections upgrade and stay
open, as a class's tabs do; the memory HAProxy holds (``VmRSS``, and its peak ``VmHWM``) is
read once they are open and idle, then after ``--burst`` bytes passed through half of them.

Run:  .venv/bin/python benchmarks/bench_balancer_buffers.py [--sockets 1000] [--burst 200000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script: make the project's scripts/ importable

from scripts.local_app import free_port  # noqa: E402
from scripts.serve_class import CONFIG, haproxy_binary  # noqa: E402

UPGRADE = (
    b"GET /_stcore/stream HTTP/1.1\r\nHost: class\r\nUpgrade: websocket\r\n"
    b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
    b"Sec-WebSocket-Version: 13\r\n\r\n"
)
SWITCHED = (
    b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n"
)


async def _answer(reader, writer) -> None:
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = await reader.read(65536)
        if not chunk:
            return
        head += chunk
    if b"/_stcore/health" in head:  # HAProxy's check
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        await writer.drain()
        writer.close()
        return
    writer.write(SWITCHED)
    await writer.drain()
    while await reader.read(65536):
        pass


def _stand_in(port: int) -> None:
    async def serve() -> None:
        server = await asyncio.start_server(_answer, "127.0.0.1", port, backlog=4096)
        await server.serve_forever()

    asyncio.run(serve())


def _memory_kb(pid: int) -> dict[str, int]:
    status = Path(f"/proc/{pid}/status").read_text()
    return {k: int(v) for k, v in re.findall(r"^(VmRSS|VmHWM):\s+(\d+) kB", status, re.M)}


def measure(bufsize: int, sockets: int, burst: int, app_port: int) -> tuple[dict, dict]:
    config = CONFIG.read_text()
    config = re.sub(r"tune\.bufsize \d+", f"tune.bufsize {bufsize}", config)
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "haproxy.cfg"
        path.write_text(config)
        environment = {
            **os.environ,
            "NORMSCOPE_BIND": f"127.0.0.1:{port}",
            "NORMSCOPE_APP1": f"127.0.0.1:{app_port}",
        }
        balancer = subprocess.Popen(
            [haproxy_binary(), "-f", str(path)], env=environment, stderr=subprocess.DEVNULL
        )
        opened = []
        try:
            time.sleep(3)  # its first health check
            for _ in range(sockets):
                connection = socket.create_connection(("127.0.0.1", port))
                connection.sendall(UPGRADE)
                opened.append(connection)
            for connection in opened:
                connection.settimeout(10)
                assert connection.recv(4096).startswith(b"HTTP/1.1 101")
            time.sleep(2)
            idle = _memory_kb(balancer.pid)
            for connection in opened[: sockets // 2]:
                connection.sendall(b"x" * burst)
            time.sleep(2)
            return idle, _memory_kb(balancer.pid)
        finally:
            for connection in opened:
                connection.close()
            balancer.terminate()
            balancer.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sockets", type=int, default=1000)
    parser.add_argument("--burst", type=int, default=200_000)
    args = parser.parse_args()
    if haproxy_binary() is None:
        raise SystemExit("haproxy is not installed")
    app_port = free_port()
    threading.Thread(target=_stand_in, args=(app_port,), daemon=True).start()
    print(f"{args.sockets} open websockets; a burst of {args.burst:,} bytes through half")
    for bufsize in (16_384, 262_144):
        idle, after = measure(bufsize, args.sockets, args.burst, app_port)
        print(
            f"tune.bufsize {bufsize:>7,}: idle RSS {idle['VmRSS'] / 1024:.1f} MiB; "
            f"after the burst RSS {after['VmRSS'] / 1024:.1f} MiB, "
            f"peak {after['VmHWM'] / 1024:.1f} MiB"
        )


if __name__ == "__main__":
    main()
