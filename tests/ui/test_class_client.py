"""The address a class's per-address limits count: the browser's own, read from a trusted
proxy's X-Forwarded-For (its last entry, the one the proxy appended), never from a header a
client sent straight to the app."""

from __future__ import annotations

import pytest

from ui.classroom import DEFAULT_PROXIES, client_of


@pytest.mark.parametrize(
    ("peer", "forwarded", "setting", "client"),
    [
        (None, "", DEFAULT_PROXIES, "local"),  # local development: no proxy, no header
        (None, "203.0.113.7", DEFAULT_PROXIES, "203.0.113.7"),  # HAProxy on this machine
        (None, "6.6.6.6, 203.0.113.7", DEFAULT_PROXIES, "203.0.113.7"),  # a forged first
        (None, "2001:db8::1", DEFAULT_PROXIES, "2001:db8::1"),
        (None, "not-an-address", DEFAULT_PROXIES, "local"),
        ("198.51.100.4", "203.0.113.7", DEFAULT_PROXIES, "198.51.100.4"),  # straight to the app
        ("10.89.0.2", "203.0.113.7", "10.89.0.2", "203.0.113.7"),  # compose's balancer
        ("10.89.0.3", "203.0.113.7", "10.89.0.2", "10.89.0.3"),  # another container
        ("10.89.0.3", "203.0.113.7", "10.89.0.0/24", "203.0.113.7"),  # a trusted network
        ("10.89.0.3", "203.0.113.7", "nonsense", "10.89.0.3"),  # a bad setting trusts none
    ],
)
def test_the_client_is_the_peer_or_what_a_trusted_proxy_appended(peer, forwarded, setting, client):
    assert client_of(peer, forwarded, setting) == client
