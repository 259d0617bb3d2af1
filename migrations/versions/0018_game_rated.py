"""A game remembers whether it is rated (``server.store.GameRecord.rated``), so a casual
room's game (an unrated tournament's, or a rematch in its room) restored after a restart
still moves nobody's rating when it finishes.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN (SQLite too), as in 0015-0017; games stored before were rated unless
    # their tournament said otherwise (which restore still asks of the tournament).
    op.add_column("games", sa.Column("rated", sa.Boolean(), nullable=False,
                                     server_default=sa.true()))


def downgrade() -> None:
    # SQLite drops a column in place (3.35+), as in 0008.
    op.execute("ALTER TABLE games DROP COLUMN rated")
