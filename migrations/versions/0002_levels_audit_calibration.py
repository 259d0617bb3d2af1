"""Levels as data: seeded default levels, their audit trail and version counter, and
calibration runs with their results.

The default levels are written out here, not imported from ``ai.levels``: a migration must
do the same thing forever, whatever the code says later.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

ID = sa.String(64)
SEEDED_AT = 1795305600.0  # 2026-11-22T00:00:00Z

# (game, name, order, description, max_depth, soft_time, hard_time, nodes, candidates,
#  margin, rails): ai.levels.DEFAULT_LEVELS as of this migration.
DEFAULT_LEVELS = (
    ("connect4", "beginner", 0, "Looks two moves ahead and often picks a lesser move.",
     2, 0.05, 0.2, None, 7, 60, False),
    ("connect4", "easy", 1, "Sees simple threats, still makes mistakes.",
     4, 0.1, 0.3, None, 4, 25, True),
    ("connect4", "medium", 2, "Plays solid moves with a little variety.",
     8, 0.2, 0.6, None, 3, 8, True),
    ("connect4", "hard", 3, "Searches deep; rarely strays from the best move.",
     16, 0.5, 1.5, None, 2, 2, True),
    ("connect4", "expert", 4, "Best move found in its time, solving endgames exactly.",
     None, 1.5, 3.0, None, 1, 0, True),
    ("othello", "beginner", 0, "Looks one move ahead and often picks a lesser move.",
     1, 0.05, 0.2, None, 8, 12, False),
    ("othello", "easy", 1, "A short look ahead with plenty of variety.",
     3, 0.1, 0.3, None, 4, 6, True),
    ("othello", "medium", 2, "Plays solid moves with a little variety.",
     6, 0.3, 0.8, None, 3, 3, True),
    ("othello", "hard", 3, "Searches deep; rarely strays from the best move.",
     10, 0.8, 2.0, None, 2, 1, True),
    ("othello", "expert", 4, "Best move found in its time, solving endgames exactly.",
     None, 2.0, 4.0, None, 1, 0, True),
)  # fmt: skip


def upgrade() -> None:
    op.create_table(
        "level_audit",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("level", sa.String(64), nullable=False),
        sa.Column("actor", sa.String(100), nullable=False),
        sa.Column("action", sa.String(16), nullable=False),
        sa.Column("before", sa.JSON(), nullable=True),
        sa.Column("after", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.Double(), nullable=False),
    )
    op.create_index("ix_level_audit_game_created", "level_audit", ["game", "created_at"])
    versions = op.create_table(
        "levels_version",
        sa.Column("id", sa.SmallInteger(), primary_key=True),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.Double(), nullable=False),
    )
    op.create_table(
        "calibration_runs",
        sa.Column("id", ID, primary_key=True),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("actor", sa.String(100), nullable=False),
        sa.Column("games_per_pair", sa.Integer(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("pair_mode", sa.String(16), nullable=False),
        sa.Column("levels", sa.JSON(), nullable=False),
        sa.Column("ratings", sa.JSON(), nullable=True),
        sa.Column("seconds", sa.Double(), nullable=True),
        sa.Column("created_at", sa.Double(), nullable=False),
        sa.Column("finished_at", sa.Double(), nullable=True),
    )
    op.create_index("ix_calibration_runs_game_created", "calibration_runs", ["game", "created_at"])
    op.create_table(
        "calibration_results",
        sa.Column(
            "run_id",
            ID,
            sa.ForeignKey("calibration_runs.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("level_a", sa.String(64), primary_key=True),
        sa.Column("level_b", sa.String(64), primary_key=True),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.Column("draws", sa.Integer(), nullable=False),
        sa.Column("losses", sa.Integer(), nullable=False),
    )
    _seed_levels()
    op.bulk_insert(versions, [{"id": 1, "version": 1, "updated_at": SEEDED_AT}])


def _levels_table() -> sa.TableClause:
    return sa.table(
        "levels",
        sa.column("game", sa.String),
        sa.column("name", sa.String),
        sa.column("position", sa.Integer),
        sa.column("settings", sa.JSON),
        sa.column("updated_at", sa.Double),
    )


def _seed_levels() -> None:
    """Insert the defaults a database does not have yet (a level saved by hand stays)."""
    levels = _levels_table()
    existing = {
        (row.game, row.name)
        for row in op.get_bind().execute(sa.select(levels.c.game, levels.c.name))
    }
    rows = []
    for (
        game,
        name,
        order,
        description,
        depth,
        soft,
        hard,
        nodes,
        top,
        margin,
        rails,
    ) in DEFAULT_LEVELS:
        if (game, name) in existing:
            continue
        settings = {
            "description": description,
            "max_depth": depth,
            "soft_time": soft,
            "hard_time": hard,
            "nodes": nodes,
            "candidates": top,
            "margin": margin,
            "rails": rails,
        }
        rows.append(
            {
                "game": game,
                "name": name,
                "position": order,
                "settings": settings,
                "updated_at": SEEDED_AT,
            }
        )
    if rows:
        op.bulk_insert(levels, rows)


def downgrade() -> None:
    levels = _levels_table()
    for game, name, *_ in DEFAULT_LEVELS:
        op.execute(levels.delete().where(levels.c.game == game, levels.c.name == name))
    op.drop_table("calibration_results")
    op.drop_index("ix_calibration_runs_game_created", table_name="calibration_runs")
    op.drop_table("calibration_runs")
    op.drop_table("levels_version")
    op.drop_index("ix_level_audit_game_created", table_name="level_audit")
    op.drop_table("level_audit")
