"""A game against the AI remembers that its creator asked to see the engine's evaluation, so
a restored casual game keeps showing it (``server.store.GameRecord.evaluation``).

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN (SQLite too): a batch rebuild of games would lose the moves' trigger.
    op.add_column("games", sa.Column("evaluation", sa.Boolean(), nullable=False,
                                     server_default=sa.false()))


def downgrade() -> None:
    # SQLite drops a column in place (3.35+), as in 0008.
    op.execute("ALTER TABLE games DROP COLUMN evaluation")
