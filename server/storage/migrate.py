"""Alembic, driven from code: ``migrate(url)`` for ``discus migrate``, and ``upgrade`` on an
open connection for stores that make their schema current when they open.
"""

from __future__ import annotations

import asyncio
import weakref
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from server.storage.config import create_engine, database_url

HEAD = "head"


def migrations_dir() -> Path:
    """``migrations/`` beside the packages (a checkout), else in the working directory (an
    installed image runs from the folder that holds it)."""
    beside = Path(__file__).resolve().parents[2] / "migrations"
    return beside if (beside / "env.py").is_file() else Path.cwd() / "migrations"


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def _run(connection: Connection, url: str, revision: str, down: bool) -> None:
    config = alembic_config(url)
    config.attributes["connection"] = connection
    if down:
        command.downgrade(config, revision)
    else:
        command.upgrade(config, revision)


# Alembic keeps its running context in module globals, so two migrations must never
# interleave inside one process (other processes are kept out by the database's own locks).
_LOCKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
    weakref.WeakKeyDictionary()
)


async def upgrade_engine(engine: AsyncEngine, revision: str = HEAD, down: bool = False) -> None:
    """Upgrade (or downgrade) the database behind ``engine`` in one transaction."""
    url = engine.url.render_as_string(hide_password=False)
    lock = _LOCKS.setdefault(asyncio.get_running_loop(), asyncio.Lock())
    async with lock, engine.begin() as connection:
        await connection.run_sync(_run, url, revision, down)


async def _migrate(url: str, revision: str, down: bool) -> None:
    engine = create_engine(url)
    try:
        await upgrade_engine(engine, revision, down)
    finally:
        await engine.dispose()


def migrate(url: str | None = None, revision: str = HEAD) -> None:
    """Upgrade the database at ``url`` (default: ``$DATABASE_URL``, else the SQLite file) to
    ``revision``. Synchronous: call it from a command, not from a running event loop."""
    asyncio.run(_migrate(database_url(url), revision, down=False))


def downgrade(url: str | None = None, revision: str = "base") -> None:
    """Downgrade the database at ``url`` to ``revision`` (default: drop everything)."""
    asyncio.run(_migrate(database_url(url), revision, down=True))


def main_migrate(url: str | None = None) -> int:
    """``discus migrate``: upgrade to the newest schema and say where."""
    resolved = database_url(url)
    migrate(resolved)
    print(f"database at {_safe(resolved)} is at the newest schema")
    return 0


def _safe(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
