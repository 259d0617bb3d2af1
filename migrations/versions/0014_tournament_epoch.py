"""Tournaments carry a fencing epoch, as games do: on a cluster one node pairs a tournament
under a lease, and the database refuses the writes of a node whose lease was taken over
(``Store.fence_tournament``).

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # In place (no batch rebuild): on SQLite a rebuild drops the table its entrants and
    # pairings refer to (ON DELETE CASCADE).
    op.add_column("tournaments", sa.Column("epoch", sa.Integer(), nullable=False,
                                           server_default=sa.text("0")))


def downgrade() -> None:
    op.execute("ALTER TABLE tournaments DROP COLUMN epoch")
