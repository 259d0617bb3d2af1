"""The deployment files say what an operator needs, read as Docker would (no engine here).

``docker-compose.yml`` and the ``Dockerfile`` are checked for the properties that keep a
deployment healthy: the server gets the stop signal and the time to shut down cleanly, the
engines are warmed up in the copy that runs, tokens survive a recreated container, and the
dependencies are the locked ones. ``.ci/run`` checks the compose file's schema.
"""

from __future__ import annotations

import fnmatch
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from server.engines.local import STOP_SECONDS
from server.settings import SHUTDOWN_SECONDS

ROOT = Path(__file__).resolve().parents[1]
COMPOSE: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVER: dict[str, Any] = COMPOSE["services"]["server1"]
DOCKERFILE = (ROOT / "Dockerfile").read_text()
CLOSE_TIMEOUT = 10.0
"""websockets' default close_timeout: how long closing one connection may take."""


def seconds(duration: str) -> float:
    """A Compose duration such as ``1m30s`` in seconds."""
    units = {"h": 3600, "m": 60, "s": 1, "ms": 0.001}
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|h|m|s)", duration)
    assert parts and "".join(n + u for n, u in parts) == duration, duration
    return sum(float(n) * units[u] for n, u in parts)


def final_stage() -> list[str]:
    """The Dockerfile's instructions after its last FROM (continuation lines joined)."""
    text = DOCKERFILE.replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines()]
    lines = [line for line in lines if line and not line.startswith("#")]
    last_from = max(i for i, line in enumerate(lines) if line.startswith("FROM "))
    return lines[last_from + 1:]


def test_the_server_command_execs_the_server_so_it_gets_the_stop_signal() -> None:
    command = SERVER["command"]
    if command[:2] == ["sh", "-c"]:
        steps = re.split(r"&&|;", command[2])
        assert all(not step.strip().startswith("exec") for step in steps[:-1])
        last = shlex.split(steps[-1])
        assert last[:3] == ["exec", "discus", "serve"], command
    else:
        assert command[:2] == ["discus", "serve"], command
    assert SERVER["init"] is True  # tini forwards the signal and reaps the workers


def test_compose_waits_longer_than_the_servers_own_shutdown() -> None:
    shutdown = CLOSE_TIMEOUT + STOP_SECONDS + 2 + 2 * SHUTDOWN_SECONDS  # see shut_down
    assert seconds(SERVER["stop_grace_period"]) > shutdown


def test_the_server_keeps_its_secret_and_data_across_a_recreated_container() -> None:
    secret = SERVER["environment"]["DISCUS_SECRET"]
    assert secret.startswith("${DISCUS_SECRET:?"), "required from the operator, never a default"
    data_dir = SERVER["environment"]["DISCUS_DATA_DIR"]
    named = [v.split(":") for v in SERVER["volumes"]]
    assert [name for name, target in named if target == data_dir] == ["discus-data"]
    assert "discus-data" in COMPOSE["volumes"]
    assert any(line == f"ENV DISCUS_DATA_DIR={data_dir}" or
               line.startswith(f"ENV DISCUS_DATA_DIR={data_dir} ") for line in final_stage())


def test_every_service_has_a_healthcheck_and_comes_back_after_a_failure() -> None:
    for name, service in COMPOSE["services"].items():
        if service.get("restart") == "no" and service["command"][:2] == ["discus", "migrate"]:
            continue  # the one-shot migration before the nodes start
        assert service.get("healthcheck", {}).get("test"), name
        assert service.get("restart") == "unless-stopped", name
    assert "/healthz" in " ".join(SERVER["healthcheck"]["test"])
    for name in ("postgres", "redis"):
        assert SERVER["depends_on"][name] == {"condition": "service_healthy"}


def test_the_server_runs_a_stated_number_of_workers() -> None:
    assert "--workers" in shlex.split(SERVER["command"][-1])


def test_the_image_warms_up_the_installed_package_as_the_user_that_serves() -> None:
    stage = final_stage()
    # No source tree in the image that runs: the installed wheel is the only copy.
    copied = [line.split()[1] for line in stage if line.startswith("COPY ")]
    assert not {"games", "ai", "server", "bench", "."} & set(copied), copied
    assert "python -c" not in DOCKERFILE
    user = next(i for i, line in enumerate(stage) if line.startswith("USER "))
    assert stage[user].split()[1] not in ("root", "0")
    warm = next(i for i, line in enumerate(stage) if "discus warm-up" in line)
    install = max(i for i, line in enumerate(stage) if "pip install" in line)
    assert install < user < warm
    assert "discus warm-up --check" in stage[warm]  # a fresh process loads it all from cache
    cache_env = next(line for line in stage if "NUMBA_CACHE_DIR=" in line)
    cache_dir = cache_env.split("NUMBA_CACHE_DIR=")[1].split()[0]
    assert any("chown" in line and cache_dir in line for line in stage)


def test_the_image_installs_the_locked_dependencies() -> None:
    assert "pip install --no-cache-dir --require-hashes -r /tmp/requirements.lock" in DOCKERFILE
    assert "--no-deps" in next(line for line in final_stage() if ".whl" in line)


def locked(path: Path) -> dict[str, str]:
    pins = re.findall(r"^([A-Za-z0-9_.-]+)==([^\s;]+)", path.read_text(), flags=re.MULTILINE)
    return {canonicalize_name(name): version for name, version in pins}


@pytest.mark.parametrize(("lock", "extras"), [("requirements.lock", ["fast"]),
                                              ("requirements-dev.lock", ["dev", "fast"])])
def test_the_locks_pin_every_declared_dependency_within_its_range(
    lock: str, extras: list[str]
) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = [Requirement(r) for r in project["dependencies"]]
    for extra in extras:
        declared += [Requirement(r) for r in project["optional-dependencies"][extra]]
    pins = locked(ROOT / lock)
    for requirement in declared:
        version = pins.get(canonicalize_name(requirement.name))
        assert version is not None, f"{requirement.name} is not in {lock}: run uv pip compile"
        assert requirement.specifier.contains(version), f"{requirement} but {lock} has {version}"


def test_the_build_context_keeps_what_the_dockerfile_copies_and_drops_the_virtualenv() -> None:
    ignored = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
               if line.strip() and not line.startswith("#")]
    assert ".venv" in ignored and ".env" in ignored
    copies = [line.split()[1:-1] for line in DOCKERFILE.splitlines()
              if line.startswith("COPY ") and "--from=" not in line]
    for source in (s for sources in copies for s in sources):
        assert (ROOT / source).exists(), source
        assert not any(fnmatch.fnmatch(source, pattern) for pattern in ignored), source


def test_two_nodes_run_alike_behind_haproxy_with_the_repositorys_configuration() -> None:
    services = COMPOSE["services"]
    assert services["server2"] == SERVER  # one definition, two replicas
    proxy = services["haproxy"]
    assert "./deploy/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro" in proxy["volumes"]
    config = (ROOT / "deploy" / "haproxy.cfg").read_text()
    for name in ("server1", "server2"):
        node = next(k for k, v in proxy["environment"].items() if v == f"{name}:8000")
        assert f'"${{{node}}}"' in config
    assert "option httpchk GET /readyz" in config
    for name in ("server1", "server2", "worker"):
        assert services[name]["depends_on"]["migrate"] == {
            "condition": "service_completed_successfully"}
