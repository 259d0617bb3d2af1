"""Ratings: each account's and bot's Glicko-2 rating per game, and a history row per rated
game (``server.ratings``, ``server.rating_desk``).

Independent of the clocks' tables: only players and games are referred to.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ratings",
        sa.Column("player_id", sa.String(64), sa.ForeignKey("players.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("game", sa.String(32), primary_key=True),
        sa.Column("rating", sa.Double(), nullable=False),
        sa.Column("rd", sa.Double(), nullable=False),
        sa.Column("volatility", sa.Double(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.Double(), nullable=False),
    )
    op.create_index("ix_ratings_game_rating", "ratings", ["game", "rating"])
    op.create_table(
        "rating_history",
        sa.Column("game_id", sa.String(64), sa.ForeignKey("games.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("player_id", sa.String(64), sa.ForeignKey("players.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("opponent_id", sa.String(64), nullable=True),
        sa.Column("opponent_level", sa.String(64), nullable=True),
        sa.Column("opponent_rating", sa.Double(), nullable=False),
        sa.Column("score", sa.Double(), nullable=False),
        sa.Column("rating_before", sa.Double(), nullable=False),
        sa.Column("rd_before", sa.Double(), nullable=False),
        sa.Column("volatility_before", sa.Double(), nullable=False),
        sa.Column("rating_after", sa.Double(), nullable=False),
        sa.Column("rd_after", sa.Double(), nullable=False),
        sa.Column("volatility_after", sa.Double(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.Double(), nullable=False),
    )
    op.create_index("ix_rating_history_player", "rating_history",
                    ["player_id", "game", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_rating_history_player", table_name="rating_history")
    op.drop_table("rating_history")
    op.drop_index("ix_ratings_game_rating", table_name="ratings")
    op.drop_table("ratings")
