"""A move whose epoch is older than its game's is refused by the database itself.

Migration 0004 gave games and moves a fencing epoch (``server.cluster``); the store checked
it with a ``SELECT ... FOR UPDATE`` of the games before each group commit's INSERT, a round
trip that cost a cluster node about 4 ms of its move acknowledgement's median under load.
A ``BEFORE INSERT`` trigger does the same check inside the INSERT: on PostgreSQL it reads the
game's row ``FOR SHARE``, which conflicts with a takeover's ``UPDATE`` of the epoch, so a
move is either committed before the fence (and the new owner reads it) or refused. SQLite
has one writer at a time, so a plain read is enough there.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25
"""

from __future__ import annotations

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

MESSAGE = "discus_fenced"
"""What the trigger's error says; ``SqlStore`` turns it into ``Fenced``."""


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"""
            CREATE FUNCTION discus_move_fence() RETURNS trigger AS $$
            DECLARE held integer;
            BEGIN
              IF NEW.epoch <> 0 THEN
                SELECT epoch INTO held FROM games WHERE id = NEW.game_id FOR SHARE;
                IF held IS NOT NULL AND held > NEW.epoch THEN
                  RAISE EXCEPTION '{MESSAGE}: game % is held at epoch %, not %',
                    NEW.game_id, held, NEW.epoch;
                END IF;
              END IF;
              RETURN NEW;
            END $$ LANGUAGE plpgsql""")
        op.execute("""
            CREATE TRIGGER moves_fence BEFORE INSERT ON moves
            FOR EACH ROW EXECUTE FUNCTION discus_move_fence()""")
    else:
        op.execute(f"""
            CREATE TRIGGER moves_fence BEFORE INSERT ON moves
            FOR EACH ROW WHEN NEW.epoch <> 0
              AND (SELECT epoch FROM games WHERE id = NEW.game_id) > NEW.epoch
            BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END""")


def downgrade() -> None:
    op.execute("DROP TRIGGER IF EXISTS moves_fence" +
               (" ON moves" if op.get_bind().dialect.name == "postgresql" else ""))
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS discus_move_fence()")
