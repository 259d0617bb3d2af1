"""A recurring arena remembers whether its arenas' games are rated
(``server.store.ScheduleRecord.rated``); a tournament's own choice has had its column since
0010.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN (SQLite too), as in 0015 and 0016; schedules made before were rated.
    op.add_column("tournament_schedules", sa.Column("rated", sa.Boolean(), nullable=False,
                                                    server_default=sa.true()))


def downgrade() -> None:
    # SQLite drops a column in place (3.35+), as in 0008.
    op.execute("ALTER TABLE tournament_schedules DROP COLUMN rated")
