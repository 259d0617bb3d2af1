"""Fair play and moderation: guest resume tokens of the older form spent once
(``spent_guest_tokens``), chat silences that hold an address too (``chat_source_silences``),
and an index to prune old chat lines by age (``ix_chat_lines_created``).

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "spent_guest_tokens",
        sa.Column("player_id", sa.String(64), primary_key=True),
        sa.Column("spent_at", sa.Double(), nullable=False),
    )
    op.create_table(
        "chat_source_silences",
        sa.Column("source", sa.String(64), primary_key=True),
        sa.Column("player_id", sa.String(64), primary_key=True),
        sa.Column("until", sa.Double(), nullable=False),
    )
    op.create_index("ix_chat_source_silences_player", "chat_source_silences", ["player_id"])
    op.create_index("ix_chat_lines_created", "chat_lines", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_chat_lines_created", table_name="chat_lines")
    op.drop_index("ix_chat_source_silences_player", table_name="chat_source_silences")
    op.drop_table("chat_source_silences")
    op.drop_table("spent_guest_tokens")
