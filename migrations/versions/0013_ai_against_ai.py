"""Games between two AI levels (the engine ladder): the level in the second AI seat.

Nullable, NULL for every game stored before (at most one AI seat). Added and dropped in
place (no table rebuild), which keeps the ``moves_fence`` trigger of 0005 on SQLite.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("games", sa.Column("other_ai_level", sa.String(64), nullable=True))


def downgrade() -> None:
    # SQLite drops a column in place (3.35+); a batch rebuild would lose the moves' trigger.
    op.execute("ALTER TABLE games DROP COLUMN other_ai_level")
