"""Tournaments: arenas, Swiss and round-robin events, their entrants and pairings
(``server.tournaments``, ``server.store.TournamentRecord``).

Independent of the other tables: players and games are named, not referred to.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tournaments",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("time_control", sa.String(32), nullable=True),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("created_by", sa.String(64), nullable=True),
        sa.Column("created_at", sa.Double(), nullable=False),
        sa.Column("starts_at", sa.Double(), nullable=False),
        sa.Column("ends_at", sa.Double(), nullable=True),
        sa.Column("rounds", sa.Integer(), nullable=True),
        sa.Column("berserk", sa.Boolean(), nullable=False),
        sa.Column("private", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
    )
    op.create_index("ix_tournaments_status_start", "tournaments", ["status", "starts_at"])
    op.create_table(
        "tournament_entrants",
        sa.Column("tournament_id", sa.String(64),
                  sa.ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("player_id", sa.String(64), primary_key=True),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("rating", sa.Double(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("joined_at", sa.Double(), nullable=False),
    )
    op.create_table(
        "tournament_pairings",
        sa.Column("tournament_id", sa.String(64),
                  sa.ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("pairing_id", sa.String(100), primary_key=True),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("first", sa.String(64), nullable=False),
        sa.Column("second", sa.String(64), nullable=True),
        sa.Column("started_at", sa.Double(), nullable=False),
        sa.Column("game_id", sa.String(64), nullable=True),
        sa.Column("berserk", sa.JSON(), nullable=False),
        sa.Column("result", sa.Double(), nullable=True),
        sa.Column("forfeit", sa.Boolean(), nullable=False),
        sa.Column("finished_at", sa.Double(), nullable=True),
    )
    op.create_index("ix_tournament_pairings_seq", "tournament_pairings",
                    ["tournament_id", "seq"])
    op.create_index("ix_tournament_pairings_game", "tournament_pairings", ["game_id"])


def downgrade() -> None:
    op.drop_index("ix_tournament_pairings_game", table_name="tournament_pairings")
    op.drop_index("ix_tournament_pairings_seq", table_name="tournament_pairings")
    op.drop_table("tournament_pairings")
    op.drop_table("tournament_entrants")
    op.drop_index("ix_tournaments_status_start", table_name="tournaments")
    op.drop_table("tournaments")
