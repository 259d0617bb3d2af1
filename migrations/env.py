"""Alembic environment: runs on a connection handed in by ``server.storage.migrate`` or, when
started by the ``alembic`` command, on its own async engine from the configured URL."""

from __future__ import annotations

import asyncio
import os

from alembic import context
from sqlalchemy import Connection, text

from server.storage.config import create_engine, database_url
from server.storage.models import metadata

config = context.config

# Any two server processes may open the same PostgreSQL database at once; one migrates, the
# other waits here and then finds nothing to do.
_LOCK_ID = 0x646973637573  # "discus"


def _run_migrations(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": _LOCK_ID})
        context.run_migrations()


async def _run_online() -> None:
    url = config.get_main_option("sqlalchemy.url") or database_url(os.environ.get("DATABASE_URL"))
    engine = create_engine(database_url(url))
    try:
        async with engine.begin() as connection:
            await connection.run_sync(_run_migrations)
    finally:
        await engine.dispose()


if context.is_offline_mode():
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=metadata,
        literal_binds=True,
    )
    with context.begin_transaction():
        context.run_migrations()
elif (connection := config.attributes.get("connection")) is not None:
    _run_migrations(connection)
else:
    asyncio.run(_run_online())
