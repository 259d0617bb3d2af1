"""A live bot's or admin's name is unique within its scope, enforced by the database.

``Accounts.create`` checks for a live name before it inserts, but two servers (or two
requests on one server before they were serialised) could both pass the check and make two
bots of one name; challenges go to a bot by name. A partial unique index over the live
tokens closes that race on every server sharing the database.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

LIVE = "revoked_at IS NULL"


def upgrade() -> None:
    op.create_index(
        "ux_tokens_live_name",
        "tokens",
        ["scope", "name"],
        unique=True,
        postgresql_where=sa.text(LIVE),
        sqlite_where=sa.text(LIVE),
    )


def downgrade() -> None:
    op.drop_index("ux_tokens_live_name", table_name="tokens")
