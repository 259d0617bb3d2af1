"""Initial schema: players, games, moves, levels, tokens, position cache.

Revision ID: 0001
Revises:
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

ID = sa.String(64)
UNFINISHED = "status IN ('waiting', 'active')"


def upgrade() -> None:
    op.create_table(
        "players",
        sa.Column("id", ID, primary_key=True),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("created_at", sa.Double(), nullable=False),
    )
    op.create_table(
        "games",
        sa.Column("id", ID, primary_key=True),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("player0_id", ID, nullable=True),
        sa.Column("player1_id", ID, nullable=True),
        sa.Column("ai_level", sa.String(64), nullable=True),
        sa.Column("ai_seat", sa.SmallInteger(), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("start_position", sa.Text(), nullable=False),
        sa.Column("created_at", sa.Double(), nullable=False),
        sa.Column("result", sa.Integer(), nullable=True),
        sa.Column("reason", sa.String(64), nullable=True),
        sa.Column("finished_at", sa.Double(), nullable=True),
    )
    op.create_index("ix_games_player0_created", "games", ["player0_id", "created_at"])
    op.create_index("ix_games_player1_created", "games", ["player1_id", "created_at"])
    op.create_index(
        "ix_games_unfinished",
        "games",
        ["status"],
        postgresql_where=sa.text(UNFINISHED),
        sqlite_where=sa.text(UNFINISHED),
    )
    op.create_table(
        "moves",
        sa.Column(
            "game_id", ID, sa.ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("ply", sa.Integer(), primary_key=True),
        sa.Column("move", sa.String(16), nullable=False),
        sa.Column("seat", sa.SmallInteger(), nullable=False),
        sa.Column("seconds", sa.Double(), nullable=False),
        sa.Column("created_at", sa.Double(), nullable=False),
        sa.Column("ai_depth", sa.Integer(), nullable=True),
        sa.Column("ai_score", sa.Integer(), nullable=True),
        sa.Column("ai_nodes", sa.BigInteger(), nullable=True),
    )
    op.create_table(
        "levels",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("settings", sa.JSON(), nullable=False),
        sa.Column("updated_at", sa.Double(), nullable=False),
        sa.UniqueConstraint("game", "name", name="uq_levels_game_name"),
    )
    op.create_index("ix_levels_game_position", "levels", ["game", "position"])
    op.create_table(
        "tokens",
        sa.Column("id", ID, primary_key=True),
        sa.Column(
            "player_id", ID, sa.ForeignKey("players.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("scope", sa.String(16), nullable=False),
        sa.Column("token_hash", sa.String(128), nullable=False, unique=True),
        sa.Column("created_at", sa.Double(), nullable=False),
        sa.Column("last_used_at", sa.Double(), nullable=True),
        sa.Column("revoked_at", sa.Double(), nullable=True),
    )
    op.create_index("ix_tokens_player", "tokens", ["player_id"])
    op.create_table(
        "position_cache",
        sa.Column("game", sa.String(32), primary_key=True),
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("depth", sa.SmallInteger(), nullable=False),
        sa.Column("score", sa.Integer(), nullable=False),
        sa.Column("bound", sa.SmallInteger(), nullable=False),
        sa.Column("best_move", sa.String(16), nullable=True),
        sa.Column("exact", sa.Boolean(), nullable=False),
        sa.Column("updated_at", sa.Double(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("position_cache")
    op.drop_index("ix_tokens_player", table_name="tokens")
    op.drop_table("tokens")
    op.drop_index("ix_levels_game_position", table_name="levels")
    op.drop_table("levels")
    op.drop_table("moves")
    op.drop_index("ix_games_unfinished", table_name="games")
    op.drop_index("ix_games_player1_created", table_name="games")
    op.drop_index("ix_games_player0_created", table_name="games")
    op.drop_table("games")
    op.drop_table("players")
