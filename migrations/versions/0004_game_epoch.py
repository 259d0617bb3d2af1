"""Games and moves carry the fencing token (epoch) of the node that owns their room.

Several server nodes share one database (``server.cluster``); each unfinished room is run by
one node at a time under a lease in Redis, and a node taking a room over raises the game's
epoch here. Moves and game rows written with an older epoch are refused, so a node that was
paused or cut off past its lease cannot write after the room moved on.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    for table in ("games", "moves"):
        op.add_column(table, sa.Column("epoch", sa.Integer(), nullable=False,
                                       server_default=sa.text("0")))


def downgrade() -> None:
    for table in ("games", "moves"):
        with op.batch_alter_table(table) as batch:
            batch.drop_column("epoch")
