"""Clocks: a game's time control, and both clocks after each move (``server.clocks``).

All new columns are nullable, NULL meaning untimed, so every game stored before stays an
untimed game. Columns are added and dropped in place (no table rebuild), which keeps the
``moves_fence`` trigger of 0005 on SQLite.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("games", sa.Column("time_control", sa.String(16), nullable=True))
    op.add_column("games", sa.Column("clock_initial_ms", sa.Integer(), nullable=True))
    op.add_column("games", sa.Column("clock_increment_ms", sa.Integer(), nullable=True))
    op.add_column("moves", sa.Column("clock0_ms", sa.Integer(), nullable=True))
    op.add_column("moves", sa.Column("clock1_ms", sa.Integer(), nullable=True))


def downgrade() -> None:
    # SQLite drops a column in place (3.35+); a batch rebuild would lose the moves' trigger.
    for table, column in (("moves", "clock1_ms"), ("moves", "clock0_ms"),
                          ("games", "clock_increment_ms"), ("games", "clock_initial_ms"),
                          ("games", "time_control")):
        op.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
