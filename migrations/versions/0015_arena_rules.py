"""Arena rules: a game remembers who went berserk (its halved clock survives a restart), an
arena its entry conditions and the schedule it was made from, and admins' recurring arena
schedules (``server.store.ScheduleRecord``).

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN (SQLite too): a batch rebuild of games would lose the moves' trigger.
    op.add_column("games", sa.Column("berserk", sa.SmallInteger(), nullable=False,
                                     server_default=sa.text("0")))
    for column in ("min_rating", "max_rating", "min_games"):
        op.add_column("tournaments", sa.Column(column, sa.Integer(), nullable=True))
    op.add_column("tournaments", sa.Column("schedule_id", sa.String(64), nullable=True))
    op.create_table(
        "tournament_schedules",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("time_control", sa.String(32), nullable=False),
        sa.Column("minutes", sa.Integer(), nullable=False),
        sa.Column("every_minutes", sa.Integer(), nullable=False),
        sa.Column("first_start", sa.Double(), nullable=False),
        sa.Column("created_by", sa.String(64), nullable=False),
        sa.Column("created_at", sa.Double(), nullable=False),
        sa.Column("berserk", sa.Boolean(), nullable=False),
        sa.Column("private", sa.Boolean(), nullable=False),
        sa.Column("min_rating", sa.Integer(), nullable=True),
        sa.Column("max_rating", sa.Integer(), nullable=True),
        sa.Column("min_games", sa.Integer(), nullable=True),
        sa.Column("made", sa.Integer(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("tournament_schedules")
    # SQLite drops a column in place (3.35+), as in 0008.
    for table, column in (("tournaments", "schedule_id"), ("tournaments", "min_games"),
                          ("tournaments", "max_rating"), ("tournaments", "min_rating"),
                          ("games", "berserk")):
        op.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
