// The rooms this page is in, as the server's messages change them: a room's state, each move,
// who came and went and what was offered, the computer's thinking, the game's end, and a stored
// game opened read-only (a replay) in the same game view.
import { playSound } from "./prefs.js";
import { t } from "./i18n.js";
import { S, boardText, cellsOf, changes, mySeatIn, seatName, yourTurn } from "./state.js";
import { clockFrom } from "./clock.js";
import { openRoom, roomFromHash, sameCode } from "./links.js";

/**
 * Wire the rooms to ``client`` (net.js). ``render()`` draws the page again, ``renderStatus(r)``
 * the game view's status line alone, ``toast(text)`` says something briefly; ``startedBy(msg)``
 * (challenges.js) and ``playingIn()`` (tournaments.js) say whether a new room is a challenge's
 * or a tournament's game. Returns what app.js calls on messages.
 */
export function setUpRooms(client, { render, renderStatus, toast, startedBy, playingIn }) {
  function onRoomState(msg) {
    const id = msg.room.id;
    const prev = S.rooms.get(id);
    const entry = { view: msg.room, you: msg.you, thinking: null, away: [0, 0], sent: null, fresh: true,
      clock: clockFrom(msg.room.clock) };
    if (prev && prev.view.round === msg.room.round) entry.away = prev.away;
    // The game of a challenge (accepted here, or ours accepted by them) is shown, unless this
    // player is in the middle of another game: then it waits in the lobby's list.
    const challenged = prev ? null : startedBy(msg);
    const cur = S.current && S.rooms.get(S.current);
    const playing = cur && !cur.record && cur.you !== null && cur.view.status === "active";
    S.rooms.set(id, entry);
    // A tournament's pairing: its room comes unasked and is shown at once (not over a game
    // this player is in the middle of), with a way back to the tournament after.
    const paired = !prev && !challenged && msg.you !== null && msg.room.status === "active" ? playingIn() : null;
    if (paired) S.returnTo.set(id, `#tournament/${paired}`);
    if (paired && !playing) S.pendingShow = id;
    if (challenged === "you" || challenged === "they" && !playing) S.pendingShow = id;
    else if (challenged === "they") {
      toast(t("toast.challenge_accepted"));
    }
    // Show it if we just asked for it (create, join, watch), the link names it, or it is on
    // screen already (a rematch or a resync). Rooms restored on reconnect otherwise wait in
    // the lobby's list.
    if (S.expectNew || sameCode(S.pendingShow, id) || sameCode(roomFromHash(), id) || S.current === id) {
      S.expectNew = false;
      S.pendingShow = null;
      if (S.current === id) S.viewPly = null;
      openRoom(id);
    }
    render();
  }

  function onMoveMade(msg) {
    const r = S.rooms.get(msg.room);
    if (!r) return;
    const v = r.view;
    if (msg.ply !== v.moves.length) { client.resync(); return; }
    v.moves.push(msg.move);
    v.boards.push(boardText(msg.position.cells));
    v.position = msg.position;
    v.status = msg.status;
    // What the AI saw (its move's thought) stays on screen after its move (its search may be
    // quicker than a glance); it goes with the next move.
    r.thought = msg.thought ? { ...msg.thought, ply: msg.ply } : null;
    r.thinking = null;
    r.waiting = null;
    r.sent = null;
    r.clock = clockFrom(msg.clock);
    const next = msg.position.to_move;
    v.ai_thinking = msg.status === "active" && next !== null && v.seats[next].kind === "ai";
    // A move by the other side of a standing draw offer declines it (the server does the same).
    if (v.draw_offered_by !== null && v.draw_offered_by !== undefined && v.draw_offered_by !== msg.seat) {
      if (v.draw_offered_by === r.you) notify(r, t("offer.draw_declined_moved"));
      v.draw_offered_by = null;
    }
    // A pass the server played for a side with no move: say so, or the turn just comes back.
    if (msg.forced) notify(r, msg.seat === r.you ? t("status.forced_pass_you") : t("status.forced_pass", { who: seatName(v.seats[msg.seat]) }));
    if (S.current === msg.room) {
      render();
      if (msg.status === "active") playSound(yourTurn(r) ? "turn" : "move");
    }
  }

  function onRoomEvent(msg) {
    const r = S.rooms.get(msg.room);
    if (!r) return;
    r.view.seats = msg.seats;
    r.view.spectators = msg.spectators;
    if (msg.event === "joined" && r.view.status === "waiting") r.view.status = "active";
    if (msg.clock) r.clock = clockFrom(msg.clock);
    if (msg.event === "rematch_offered") r.view.rematch_offered_by = msg.seat;
    if (msg.event === "draw_offered") r.view.draw_offered_by = msg.seat;
    if (msg.event === "berserk") {
      r.view.berserk = [...new Set([...(r.view.berserk || []), msg.seat])];
      const who = seatName(r.view.seats[msg.seat]);
      notify(r, msg.seat === r.you ? t("offer.berserk_you") : t("offer.berserk_other", { who }));
    }
    if (msg.event === "draw_declined") {
      if (r.view.draw_offered_by === r.you && r.you !== null) notify(r, t("offer.draw_declined"));
      r.view.draw_offered_by = null;
    }
    if (msg.event === "left" && r.view.status === "finished" && r.view.rematch_offered_by === r.you && r.you !== null) {
      notify(r, t("offer.rematch_declined_left"));
      r.view.rematch_offered_by = null;
    }
    if (msg.event === "disconnected" && msg.seat !== null) {
      r.away[msg.seat] = Date.now() + 1000 * (msg.grace_seconds ?? 0);
    }
    if (msg.event === "reconnected" && msg.seat !== null) r.away[msg.seat] = 0;
    if (S.current === msg.room) render();
  }

  /** A line for the player about an answer to their offer, shown until the next move. */
  function notify(r, text) { r.notice = { text, ply: r.view.moves.length }; }

  function onThinking(msg) {
    const r = S.rooms.get(msg.room);
    if (!r || msg.ply !== r.view.moves.length) return;
    r.thinking = msg;
    r.waiting = null;
    r.view.ai_thinking = true;
    if (S.current === msg.room) renderStatus(r);
  }

  /** The AI's move waits for a free engine (the server's AI is busy): its place and estimated
   * wait, shown until an engine takes it (position 0) or the move comes. */
  function onWaiting(msg) {
    const r = S.rooms.get(msg.room);
    if (!r || msg.ply !== r.view.moves.length) return;
    r.waiting = msg.position > 0 ? msg : null;
    if (S.current === msg.room) renderStatus(r);
  }

  function onGameOver(msg) {
    const r = S.rooms.get(msg.room);
    if (!r) return;
    r.view.result = msg.result;
    r.view.status = "finished";
    r.view.ai_thinking = false;
    r.view.rematch_offered_by = null;
    r.view.draw_offered_by = null;
    r.thinking = null;
    r.waiting = null;
    if (msg.clock) r.clock = clockFrom(msg.clock);
    askForExport(r);
    if (S.current === msg.room) { render(); playSound("over"); }
  }

  /** A finished live game shows its export as a replay does: ask for its record (the server's
   * export texts and downloads), which ``game_record`` then attaches to the room. */
  function askForExport(r) {
    if (r.record || r.you === null || r.view.status !== "finished") return;
    S.exportFor = `${r.view.id}-${r.view.round}`;
    client.getGame(S.exportFor);
  }

  function onRecord(rec) {
    if (rec.id === S.exportFor) {
      S.exportFor = null;
      const r = [...S.rooms.values()].find((x) => !x.record && `${x.view.id}-${x.view.round}` === rec.id);
      if (r) { r.finished = rec; if (S.current === r.view.id) render(); }
      return;
    }
    openRecord(rec);
  }

  /** Show a stored game (game_record) read-only, at its final position, in the game view. */
  function openRecord(rec) {
    const last = cellsOf(rec.boards.at(-1));
    const before = rec.boards.length > 1 ? cellsOf(rec.boards.at(-2)) : null;
    const { placed, flipped } = changes(before, last);
    const view = {
      id: rec.id, game: rec.game, opponent: "friend",
      seats: rec.seats.map((s) => ({ ...s, connected: true })), spectators: 0,
      status: rec.status === "waiting" || rec.status === "active" ? "active" : "finished",
      moves: rec.moves, boards: rec.boards, result: rec.result, ai_thinking: false,
      rematch_offered_by: null, round: 1,
      position: { ply: rec.moves.length, cells: last, to_move: null, legal_moves: [],
        last_move: rec.moves.at(-1) ?? null, placed, flipped, winning: rec.winning ?? [] },
    };
    S.rooms.set(rec.id, { view, you: mySeatIn(rec.seats), thinking: null, away: [0, 0], sent: null,
      record: rec });
    S.current = null; // open at the final position even when this record was on screen
    openRoom(rec.id, `replay/${rec.id}`);
    render();
  }

  return { onRoomState, onMoveMade, onRoomEvent, onThinking, onWaiting, onGameOver, onRecord };
}
