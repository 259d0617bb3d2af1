// What the page knows, shared by its views (lobby.js, game.js, rooms.js, analysis.js): the
// state below and the few things every view reads off it -- a game's title and colours, a
// seat's name, whose move it is. The page keeps no knowledge the server has not sent and has
// no game rules: every position it draws, the live one and every earlier one in a replay, is a
// board the server sent (room.boards, move_made's position, game_record.boards).
import { t, tr } from "./i18n.js";

export const S = {
  me: null,            // PlayerView
  games: {},           // name -> GameInfo (levels, colour names)
  open: [],            // RoomSummary[] waiting for a second player
  rooms: new Map(),    // id -> {view: RoomView, you, thinking, thought (the AI's last, kept
                       //   after its move), away: [ms, ms], sent, aborted, finished (record)}
  current: null,       // id of the room on screen, or null for the lobby
  viewPly: null,       // null: the live position; a number: replaying the position after that ply
  drawn: null,         // {id, ply, round} last drawn, to animate only a one-move step
  online: false,       // greeted by the server on the current connection
  autoJoin: null,      // request id of the join made from a shared link or a code
  pendingShow: null,   // id of a room asked for (join/watch) to show when its state comes
  expectNew: false,    // a room was just created: show it when its state comes
  past: [],            // PastGame[]: the player's finished games, newest first
  exportFor: null,     // game id of the record asked for to show a finished game's export
  reviews: new Map(),  // game id -> GameReview, once the server sent it
  reviewing: new Map(),// game id -> request id of a review asked for that has not come yet
  analysis: null,      // the analysis board: {room, game, moves, board, to_move, values} or null
  timeControls: [],    // TimeControlView[] a room may be made with (welcome.time_controls)
  returnTo: new Map(), // room id -> the page (#tournament/<id>, #ladder/<game>) it was opened from
};

/** Until this many plies are played, leaving aborts the game (server/play/rooms.py says so too). */
export const ABORTABLE_PLIES = 2;

// --- boards as the server sends them -------------------------------------------------------

/** "-XO" text (one character a cell, as room.boards) to cells: null, 0 or 1. */
export function cellsOf(board) {
  return [...board].map((c) => (c === "X" ? 0 : c === "O" ? 1 : null));
}

export function boardText(cells) {
  return cells.map((c) => (c === null ? "-" : c === 0 ? "X" : "O")).join("");
}

/** What one ply did between two server boards: the cell it filled and the cells it turned. */
export function changes(before, after) {
  let placed = null;
  const flipped = [];
  if (before) {
    after.forEach((c, i) => {
      if (c === before[i]) return;
      if (before[i] === null) placed = i; else flipped.push(i);
    });
  }
  return { placed, flipped };
}

export function discCounts(cells) {
  return [cells.filter((v) => v === 0).length, cells.filter((v) => v === 1).length];
}

export function gameInfo(name) {
  const info = S.games[name] || { name, title: name, players: ["First", "Second"], levels: [] };
  return { ...info, title: tr("title.", info.title), players: info.players.map((c) => tr("colour.", c)) };
}

/** A seat's colour in the page's language. */
export function colourOf(seat) {
  return tr("colour.", seat.colour);
}

export function seatName(seat) {
  if (seat.kind === "ai") return t("seat.computer_level", { level: seat.level });
  if (seat.kind === "empty") return t("seat.waiting");
  if (!seat.player) return t("seat.player");
  return seat.player.bot ? t("seat.bot", { name: seat.player.name }) : seat.player.name;
}

/** "1 move", "2 moves": a count with its noun, singular or plural. */
export function count(n, noun) { return t(`count.${noun}`, { n }); }

export function yourTurn(r) {
  const v = r.view;
  return v.status === "active" && r.you !== null && v.position.to_move === r.you;
}

/** The stored game id of a room on screen: a replayed record's, or the live room's round. */
export function gameIdOf(r) { return r.record ? r.record.id : `${r.view.id}-${r.view.round}`; }

export function mySeatIn(seats) {
  const s = seats.find((seat) => seat.player && S.me && seat.player.id === S.me.id);
  return s ? s.seat : null;
}
