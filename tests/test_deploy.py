"""The class topology's two descriptions agree: ``compose.yaml`` runs HAProxy with the
``deploy/haproxy.cfg`` that ``scripts/serve_class.py`` (and the class test) use, and sets the
variables that file reads."""

from __future__ import annotations

import re
import subprocess

import pytest
import yaml

from scripts.serve_class import CONFIG, ROOT, haproxy_binary

COMPOSE = ROOT / "compose.yaml"


def _balancer() -> dict:
    return yaml.safe_load(COMPOSE.read_text())["services"]["balancer"]


def test_compose_mounts_the_config_the_class_script_uses():
    mounts = [v.split(":")[0] for v in _balancer()["volumes"]]
    assert [(ROOT / m).resolve() for m in mounts] == [CONFIG.resolve()]


def test_compose_sets_the_address_and_one_slot_per_app_service():
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    apps = sorted(name for name in services if name.startswith("app"))
    environment = _balancer()["environment"]
    read = set(re.findall(r"NORMSCOPE_[A-Z0-9_]+", CONFIG.read_text()))
    assert set(environment) <= read
    assert environment["NORMSCOPE_BIND"].endswith(":8501")
    for index, app in enumerate(apps, start=1):
        assert environment[f"NORMSCOPE_APP{index}"] == f"{app}:8501"


def test_haproxy_accepts_the_config_with_composes_addresses(tmp_path):
    binary = haproxy_binary()
    if binary is None:
        pytest.skip("Debian's haproxy is not installed (scripts/test.sh installs it as root)")
    environment = {k: str(v) for k, v in _balancer()["environment"].items()}
    checked = subprocess.run(
        [binary, "-c", "-f", str(CONFIG)], env=environment, capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_apps_believe_the_balancers_forwarded_address_and_only_its():
    compose = yaml.safe_load(COMPOSE.read_text())
    balancer = compose["services"]["balancer"]["networks"]["class"]["ipv4_address"]
    for name, service in compose["services"].items():
        if name.startswith("app"):
            assert service["environment"]["NORMSCOPE_TRUSTED_PROXIES"] == balancer
    assert "option forwardfor" in CONFIG.read_text()
