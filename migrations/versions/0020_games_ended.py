"""An index on the games by game and the time they ended (``ix_games_game_finished``): idle
proving reads each game once, as it ends, instead of the newest thousand every round.

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-29
"""

from __future__ import annotations

from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_games_game_finished", "games", ["game", "finished_at"])


def downgrade() -> None:
    op.drop_index("ix_games_game_finished", table_name="games")
