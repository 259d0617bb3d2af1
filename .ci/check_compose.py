"""Check a compose file against the Compose Specification's JSON Schema, without Docker.

``python .ci/check_compose.py docker-compose.yml``: exit 0 when valid, else 1 with every
error. ``.ci/run`` uses it where Docker's compose plugin is missing, instead of installing a
Docker engine for ``docker compose config -q``.

No package on the registries CI reaches ships the current schema alone; docker-compose 1.29.2
ships the Compose Specification's schema of 2021 (``compose/config/compose_spec.json``) in its
wheel. pip fetches that wheel by its pinned hash (``compose-schema.lock`` beside this file)
into a cache inside the virtualenv, once, and the schema is read out of the zip: nothing of
docker-compose is installed or run. Like Compose, it checks the file before interpolation
only where values are strings, which is everywhere this project's file uses ``${...}``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import jsonschema
import yaml

HERE = Path(__file__).resolve().parent
LOCK = HERE / "compose-schema.lock"
CACHE = HERE.parent / ".venv" / "compose-schema"
MEMBER = "compose/config/compose_spec.json"


def schema() -> dict:
    wheels = sorted(CACHE.glob("docker_compose-*.whl"))
    if not wheels:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--require-hashes",
             "-r", str(LOCK), "-d", str(CACHE)],
            check=True,
        )
        wheels = sorted(CACHE.glob("docker_compose-*.whl"))
    with zipfile.ZipFile(wheels[-1]) as wheel:
        loaded: dict = json.loads(wheel.read(MEMBER))
    return loaded


def main(path: str) -> int:
    document = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    spec = schema()
    # The schema says draft 2019-09 in a spelling jsonschema does not look up: name it.
    validator = jsonschema.Draft201909Validator(spec)
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    for error in errors:
        where = "/".join(str(part) for part in error.absolute_path) or "(top)"
        print(f"{path}: {where}: {error.message}", file=sys.stderr)
    if not errors:
        print(f"{path}: valid against the Compose Specification's schema")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "docker-compose.yml"))
