"""Game reviews: the engine's value and verdict for every move of a finished game, kept with
the game so that a second look costs nothing (``server.reviews``).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "game_reviews",
        sa.Column("game_id", sa.String(64), sa.ForeignKey("games.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("review", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.Double(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("game_reviews")
