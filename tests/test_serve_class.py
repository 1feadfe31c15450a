"""scripts/serve_class.py as an operator starts it: a wrong count or a port in use is a
message, not a traceback, and a signal during the start leaves no process behind."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from scripts import serve_class
from scripts.local_app import free_port


def _main(monkeypatch, *args: str) -> int:
    monkeypatch.setattr(sys, "argv", ["serve_class.py", *args])
    monkeypatch.setattr(signal, "signal", lambda *_: None)  # the test runner's own handlers
    return serve_class.main()


@pytest.mark.parametrize("count", ["0", "9", "abc"])
def test_a_count_outside_one_to_eight_is_refused_by_the_parser(monkeypatch, capsys, count):
    with pytest.raises(SystemExit) as ended:
        _main(monkeypatch, count)
    assert ended.value.code == 2
    assert "processes" in capsys.readouterr().err or count == "abc"


def test_the_default_count_is_one_per_core_up_to_eight(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    monkeypatch.setattr(serve_class, "start_class", _stop_here)
    with pytest.raises(_Started) as started:
        _main(monkeypatch)
    assert started.value.args[0] == serve_class.MAX_PROCESSES


class _Started(Exception):
    pass


def _stop_here(processes, *args, **kwargs):
    raise _Started(processes, kwargs)


def test_the_preload_variables_apply_to_every_process(monkeypatch):
    monkeypatch.setenv("NORMSCOPE_PRELOAD_MODEL", "0")
    monkeypatch.setattr(serve_class, "start_class", _stop_here)
    with pytest.raises(_Started) as started:
        _main(monkeypatch, "2")
    assert started.value.args[1]["preload"] is False and started.value.args[1]["warm"] is False


def test_a_port_in_use_stops_the_start_with_a_message(monkeypatch, capsys):
    if serve_class.haproxy_binary() is None:
        pytest.skip("Debian's haproxy is not installed (scripts/test.sh installs it as root)")
    port = free_port()
    with socket.socket() as taken:  # a class still running holds the second process's port
        taken.bind(("127.0.0.1", port + 2))
        taken.listen()
        assert _main(monkeypatch, "2", "--port", str(port), "--no-preload") == 1
    error = capsys.readouterr().err
    assert f"port {port + 2} is in use" in error and "Traceback" not in error


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.slow  # an app process starts (~5 s of imports)
def test_sigterm_during_the_start_stops_every_process_it_started():
    port = free_port()
    started, guard = _class_of_one(port, subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not _listening(port + 1):  # the app process is up; HAProxy not yet, or just
        assert time.monotonic() < deadline and started.poll() is None
        time.sleep(0.1)
    started.send_signal(signal.SIGTERM)
    assert started.wait(30) == 0  # a clean stop (the default action would give -15)
    time.sleep(0.5)
    assert not _listening(port + 1) and not _listening(port)
    guard.cancel()
    assert _pids_serving(port + 1) == []


def _cmdline(pid: str) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as file:
            return file.read()
    except OSError:
        return b""


def _class_of_one(port: int, stdout) -> tuple[subprocess.Popen, threading.Timer]:
    """``serve_class.py 1`` on ``port``, and a timer that stops it (and so every process it
    started) after 120 s, so that a failed wait never hangs the suite."""
    if serve_class.haproxy_binary() is None:
        pytest.skip("Debian's haproxy is not installed (scripts/test.sh installs it as root)")
    started = subprocess.Popen(
        [sys.executable, "scripts/serve_class.py", "1", "--port", str(port), "--no-preload"],
        cwd=serve_class.ROOT,
        stdout=stdout,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    guard = threading.Timer(120, started.terminate)
    guard.start()
    return started, guard


def _pids_serving(port: int) -> list[int]:
    return [
        int(pid)
        for pid in os.listdir("/proc")
        if pid.isdigit() and f"--server.port={port}".encode() in _cmdline(pid)
    ]


@pytest.mark.slow  # an app process starts (~5 s of imports)
def test_once_every_process_has_stopped_the_class_stops_and_says_so():
    """Nothing restarts a stopped process; with none left, HAProxy would answer 503 forever."""
    port = free_port()
    started, guard = _class_of_one(port, subprocess.PIPE)
    try:
        lines = iter(started.stdout.readline, "")  # the processes' own log lines come first
        assert any(line.startswith("NormScope for a class: ") for line in lines)
        for pid in _pids_serving(port + 1):
            os.kill(pid, signal.SIGKILL)
        assert started.wait(30) == 1
        assert "every process has exited" in started.stdout.read()
        time.sleep(0.5)
        assert not _listening(port)  # HAProxy stopped with it
    finally:
        guard.cancel()
        if started.poll() is None:
            started.terminate()
            started.wait(30)


def test_a_port_left_in_time_wait_by_a_stopped_class_is_free_and_a_listener_is_not():
    port = free_port()
    with socket.socket() as listener:  # as HAProxy binds (the app servers: SO_REUSEADDR)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen()
        with pytest.raises(OSError, match=f"port {port} is in use"):
            serve_class._refuse_taken([("127.0.0.1", port)])
        client = socket.create_connection(("127.0.0.1", port))
        accepted, _ = listener.accept()
        accepted.close()  # the server's side closes first: its port waits in TIME_WAIT
        client.close()
    serve_class._refuse_taken([("127.0.0.1", port)])  # a restart right away is not refused


@pytest.mark.parametrize(
    "address, port, said",
    [
        ("192.0.2.77", None, "cannot listen on 192.0.2.77"),  # an address this host lacks
        ("127.0.0.1", 70000, "cannot listen on 127.0.0.1 port 70000"),
    ],
)
def test_a_place_this_machine_cannot_listen_on_is_named_as_such(address, port, said):
    with pytest.raises(OSError, match=said) as refused:
        serve_class._refuse_taken([(address, port or free_port())])
    assert "in use" not in str(refused.value)


def test_every_interface_of_ipv6_is_accepted_where_the_machine_has_it():
    if not socket.has_ipv6:
        pytest.skip("no IPv6 here")
    try:
        serve_class._refuse_taken([("::", free_port())])
    except OSError as error:
        assert "in use" not in str(error)  # a host without IPv6 says so, not "in use"
    assert serve_class._host_in_url("::") == "127.0.0.1"
    assert serve_class._host_in_url("fd00::5") == "[fd00::5]"


def test_a_port_past_the_last_processes_port_is_refused_by_the_parser(monkeypatch, capsys):
    with pytest.raises(SystemExit):
        _main(monkeypatch, "2", "--port", "65535")
    assert "65527" in capsys.readouterr().err


def test_a_stop_signal_in_a_held_block_acts_after_it_and_in_the_stop_is_dropped():
    heard = []
    previous = signal.signal(signal.SIGHUP, lambda number, _frame: heard.append(number))
    try:
        with serve_class._signals_held():
            signal.raise_signal(signal.SIGHUP)
            assert heard == []  # held
        assert heard == [signal.SIGHUP]  # then acted on
        with serve_class._signals_held(deliver=False):
            signal.raise_signal(signal.SIGHUP)
        assert heard == [signal.SIGHUP]  # dropped
        assert signal.getsignal(signal.SIGHUP) is not signal.SIG_DFL  # our handler is back
    finally:
        signal.signal(signal.SIGHUP, previous)


@pytest.mark.slow  # an app process starts (~5 s of imports)
def test_the_processes_stop_on_their_own_signal_not_killed():
    """Started while the stop signals were blocked, the app processes inherited the blocked
    mask: every stop waited 10 s and then killed them."""
    if serve_class.haproxy_binary() is None:
        pytest.skip("Debian's haproxy is not installed (scripts/test.sh installs it as root)")
    server = serve_class.start_class(1)
    try:
        for process in (*server.apps, server.balancer):
            status = Path(f"/proc/{process.pid}/status").read_text()
            blocked = int(re.search(r"SigBlk:\s*([0-9a-f]+)", status)[1], 16)
            assert not [s for s in serve_class.STOPPING if blocked & (1 << (s - 1))], status
    finally:
        server.close()
    assert [p.returncode for p in server.apps] != [-signal.SIGKILL]
