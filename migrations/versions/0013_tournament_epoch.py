"""Tournaments carry a fencing epoch, as games do: on a cluster one node pairs a tournament
under a lease, and the database refuses the writes of a node whose lease was taken over
(``Store.fence_tournament``).

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
    with op.batch_alter_table("tournaments") as batch:
        batch.add_column(sa.Column("epoch", sa.Integer(), nullable=False,
                                   server_default=sa.text("0")))


def downgrade() -> None:
    with op.batch_alter_table("tournaments") as batch:
        batch.drop_column("epoch")
