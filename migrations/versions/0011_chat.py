"""Chat: lines of games' and the lobby's chat, and silenced players (``server.chat_desk``).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "chat_lines",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("game_id", sa.String(64), sa.ForeignKey("games.id", ondelete="CASCADE"),
                  nullable=True),
        sa.Column("channel", sa.String(16), nullable=False),
        sa.Column("player_id", sa.String(64), nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("created_at", sa.Double(), nullable=False),
        sa.Column("deleted_at", sa.Double(), nullable=True),
    )
    op.create_index("ix_chat_lines_game", "chat_lines", ["game_id", "id"])
    op.create_table(
        "chat_silences",
        sa.Column("player_id", sa.String(64), primary_key=True),
        sa.Column("until", sa.Double(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("chat_silences")
    op.drop_index("ix_chat_lines_game", table_name="chat_lines")
    op.drop_table("chat_lines")
