// The page: a lobby and one game view, drawn from the state below. Server messages update the
// state (through net.js) and every change re-renders the visible view; the page keeps no
// knowledge the server has not sent and has no game rules: every position it draws, the live
// one and every earlier one in a replay, is a board the server sent (room.boards, move_made's
// position, game_record.boards).

import { Client } from "./net.js";
import { drawBoard } from "./board.js";
import { initPrefs, playSound } from "./prefs.js";
import { MARKS, markCells, shortValue, valueChart } from "./review.js";
import { setUpAccount } from "./account.js";
import { ratingText, setUpStandings } from "./standings.js";
import { clockLabel, setUpChallenges } from "./challenges.js";
import { setUpChat } from "./chat.js";
import { setUpTournaments } from "./tournaments.js";
import { setUpLadder } from "./ladder.js";
import { errorText, languageSwitch, t, tr } from "./i18n.js";

const $ = (id) => document.getElementById(id);

const S = {
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

// --- clocks: the server's remaining times, counted down from when they arrived ----------------

/** A room's clocks from a ClockView: remaining ms per seat as the server sent them, and the
 * moment (this page's own clock) they arrived; only the running seat's is counted down from
 * there, so the page never compares its clock with the server's. */
function clockFrom(view) {
  return view ? { control: view.control, remaining: view.remaining_ms, running: view.running, at: performance.now() } : null;
}

function clockLeft(c, seat) {
  const left = c.remaining[seat];
  if (left === null || left === undefined) return null;
  return seat === c.running ? Math.max(0, left - (performance.now() - c.at)) : left;
}

/** 3:05, and tenths under ten seconds (0:09.4). */
function fmtClock(ms) {
  if (ms < 10000) return `0:0${(Math.floor(ms / 100) / 10).toFixed(1)}`;
  const s = Math.ceil(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/** The clocks to show for the room at ``ply``: live ones, or a replay's as stored after that ply. */
function shownClock(r, ply) {
  const rec = r.record;
  if (rec) {
    if (!rec.time_control || !rec.clocks) return null;
    const initial = rec.time_control.initial_ms;
    const after = ply > 0 ? rec.clocks[ply - 1] : rec.seats.map((s) => (s.kind === "ai" ? null : initial));
    return { control: rec.time_control, remaining: after, running: null, at: 0 };
  }
  return S.viewPly === null ? r.clock : null;
}

/** A clock picker (a select.clock-choice): Untimed, then the server's time controls. */
function fillClock(sel) {
  const keep = sel.value;
  sel.replaceChildren(Object.assign(document.createElement("option"), { value: "", textContent: t("clock.untimed") }),
    ...S.timeControls.map((c) => Object.assign(document.createElement("option"), {
      value: c.name, textContent: clockLabel(c),
    })));
  sel.value = keep;
}

function fillClocks() {
  for (const sel of document.querySelectorAll("select.clock-choice")) fillClock(sel);
}

/** Redraw the running clock of the game on screen (between messages, several times a second). */
function tickClocks() {
  const r = S.current && S.rooms.get(S.current);
  if (!r || !r.clock || r.clock.running === null || S.viewPly !== null) return;
  const el = $("players").querySelector(`.clock[data-seat="${r.clock.running}"]`);
  if (!el) return;
  const left = clockLeft(r.clock, r.clock.running);
  el.textContent = fmtClock(left);
  el.classList.toggle("low", left < 10000);
}

// --- boards as the server sends them -------------------------------------------------------

/** "-XO" text (one character a cell, as room.boards) to cells: null, 0 or 1. */
function cellsOf(board) {
  return [...board].map((c) => (c === "X" ? 0 : c === "O" ? 1 : null));
}

function boardText(cells) {
  return cells.map((c) => (c === null ? "-" : c === 0 ? "X" : "O")).join("");
}

/** What one ply did between two server boards: the cell it filled and the cells it turned. */
function changes(before, after) {
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

function discCounts(cells) {
  return [cells.filter((v) => v === 0).length, cells.filter((v) => v === 1).length];
}

const client = new Client(dispatch);
const account = setUpAccount(client, (text) => toast(text, null, true));
const challenges = setUpChallenges(client, {
  titleOf: (game) => gameInfo(game).title, games: () => Object.values(S.games), me: () => S.me,
  fillClock, toast: (text) => toast(text, null, true),
});
const chat = setUpChat(client, { me: () => S.me });
const standings = setUpStandings(client, (game) => gameInfo(game)?.title ?? game,
  (gameId) => client.getGame(gameId), challenges.profileBox);

/** Watch ``room`` (a tournament's or the ladder's game), back to the page on screen after. */
function watchFrom(room) {
  S.returnTo.set(room, location.hash);
  if (S.rooms.has(room)) { openRoom(room); render(); return; }
  S.pendingShow = room;
  client.spectate(room);
}
const tournaments = setUpTournaments(client, {
  titleOf: (game) => gameInfo(game).title, me: () => S.me, controls: () => S.timeControls,
  games: () => Object.values(S.games), watch: watchFrom, toast: (text) => toast(text, null, true),
  changed: () => { if ($("game").hidden) render(); }, // a push does not redraw a game on screen
});
const ladder = setUpLadder(client, {
  titleOf: (game) => gameInfo(game).title, watch: watchFrom,
  replay: (gameId) => { S.returnTo.set(gameId, location.hash); client.getGame(gameId); },
});

/** Until this many plies are played, leaving aborts the game (server/rooms.py says so too). */
const ABORTABLE_PLIES = 2;

// --- server events ---------------------------------------------------------------------------

function dispatch(event, msg) {
  switch (event) {
    case "status": return showConnection(msg);
    case "welcome": return onWelcome(msg);
    case "synced": return onSynced();
    case "rooms": S.open = msg; return renderLobby();
    case "room_state": return onRoomState(msg);
    case "move_made": return onMoveMade(msg);
    case "room_event": return onRoomEvent(msg);
    case "ai_thinking": return onThinking(msg);
    case "game_over": return onGameOver(msg);
    case "error": return onError(msg);
    case "history": S.past = msg; return renderHistory(msg);
    case "game_record": return onRecord(msg);
    case "review": return onReview(msg.review);
    case "analysis": return onAnalysis(msg);
    case "signed_in": return account.signedIn(msg);
    case "signed_out": return account.signedOut(msg);
    case "password_changed": return account.passwordChanged(msg);
    case "rating_change": return standings.onRatingChange(msg);
    case "leaderboard": return standings.onLeaderboard(msg);
    case "profile": return standings.onProfile(msg);
    case "challenge": return challenges.onOffer(msg);
    case "challenge_sent": return challenges.onSent(msg);
    case "challenge_declined": return challenges.onDeclined(msg);
    case "chat_history": case "chat_line": case "chat_deleted": return chat.receive(msg);
    case "stats": return onStats(msg);
    case "games": return onGames(msg);
    case "tournaments": return tournaments.onList(msg);
    case "tournament": case "round_tournament": return tournaments.onTournament(msg);
    case "ladder": return ladder.onLadder(msg);
    default: return undefined;
  }
}

/** While the AI workers warm up (a first start compiles the engines), say so in the lobby and
 * ask again every few seconds until they are ready. */
function onStats(msg) {
  const pool = msg.pool;
  const warming = Boolean(pool && pool.ready < pool.workers);
  const note = $("engines-note");
  note.hidden = !warming;
  if (!warming) return;
  note.textContent = t("lobby.engines_compiling", { ready: pool.ready, workers: pool.workers });
  clearTimeout(onStats.timer);
  onStats.timer = setTimeout(() => { if (S.online) client.stats(); }, 3000);
}

function onWelcome(msg) {
  S.me = msg.player;
  S.games = Object.fromEntries(msg.games.map((g) => [g.name, g]));
  S.timeControls = msg.time_controls || [];
  fillClocks();
  $("name").value = client.name || msg.player.name;
  account.show(msg.player);
  $("evaluation-row").hidden = client.signedIn; // an account's games are rated: no evaluation
  client.stats(); // a first start's engines may still be compiling: say so
  fillLevels();
  challenges.onWelcome();
  chat.onWelcome(msg);
  client.listRooms();
  client.listHistory();
  tournaments.onWelcome();
  ladder.onWelcome();
  for (const r of S.rooms.values()) r.fresh = false;
}

function onSynced() {
  // After a reconnect the server has re-sent every unfinished room we sit in. Rooms we were
  // watching are asked for again; a game we played that did not come back is gone.
  for (const [id, r] of S.rooms) {
    if (r.fresh !== false || r.record) continue;
    if (r.you === null) client.spectate(id);
    else if (r.view.status !== "finished") {
      S.rooms.delete(id);
      if (S.current === id) {
        toast(t("toast.game_gone"), null, true);
        S.current = null;
        history.replaceState(null, "", location.pathname);
      }
    }
  }
  // Every room we sit in has arrived; a link to any other room means: take its free seat
  // (or watch, if there is none).
  const id = roomFromHash();
  if (id && !S.rooms.has(id)) { S.autoJoin = client.join(id); S.pendingShow = id; }
  const past = replayFromHash();
  if (past && !S.rooms.has(past)) client.getGame(past);
  route();
}

function onRoomState(msg) {
  const id = msg.room.id;
  const prev = S.rooms.get(id);
  const entry = { view: msg.room, you: msg.you, thinking: null, away: [0, 0], sent: null, fresh: true,
    clock: clockFrom(msg.room.clock) };
  if (prev && prev.view.round === msg.room.round) entry.away = prev.away;
  // The game of a challenge (accepted here, or ours accepted by them) is shown, unless this
  // player is in the middle of another game: then it waits in the lobby's list.
  const challenged = prev ? null : challenges.startedBy(msg);
  const cur = S.current && S.rooms.get(S.current);
  const playing = cur && !cur.record && cur.you !== null && cur.view.status === "active";
  S.rooms.set(id, entry);
  // A tournament's pairing: its room comes unasked and is shown at once (not over a game
  // this player is in the middle of), with a way back to the tournament after.
  const paired = !prev && !challenged && msg.you !== null && msg.room.status === "active" ? tournaments.playingIn() : null;
  if (paired) S.returnTo.set(id, `#tournament/${paired}`);
  if (paired && !playing) S.pendingShow = id;
  if (challenged === "you" || challenged === "they" && !playing) S.pendingShow = id;
  else if (challenged === "they") {
    toast(t("toast.challenge_accepted"), null, true);
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
  r.sent = null;
  r.clock = clockFrom(msg.clock);
  const next = msg.position.to_move;
  v.ai_thinking = msg.status === "active" && next !== null && v.seats[next].kind === "ai";
  // A move by the other side of a standing draw offer declines it (the server does the same).
  if (v.draw_offered_by !== null && v.draw_offered_by !== undefined && v.draw_offered_by !== msg.seat) {
    if (v.draw_offered_by === r.you) notify(r, t("offer.draw_declined_moved"));
    v.draw_offered_by = null;
  }
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

/** The offers line: a draw offered to you, your own waiting, or an answer to your offer. */
function renderOffers(r) {
  const v = r.view;
  let text = "";
  if (!r.record && S.viewPly === null && r.you !== null && r.you !== undefined) {
    const opp = v.seats[1 - r.you];
    if (v.status === "active" && v.draw_offered_by === 1 - r.you) {
      text = t("offer.draw_to_you", { who: seatName(opp) });
    } else if (v.status === "active" && v.draw_offered_by === r.you) {
      text = t("offer.draw_waiting", { who: seatName(opp) });
    } else if (v.status === "finished" && v.rematch_offered_by === r.you && opp.kind === "human") {
      text = t("offer.rematch_waiting", { who: seatName(opp) });
    } else if (r.notice && r.notice.ply === v.moves.length) {
      text = r.notice.text;
    }
  }
  $("offer-note").hidden = !text;
  $("offer-note").textContent = text;
}

function onThinking(msg) {
  const r = S.rooms.get(msg.room);
  if (!r || msg.ply !== r.view.moves.length) return;
  r.thinking = msg;
  r.view.ai_thinking = true;
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

// --- the game review and the analysis board (request_review, analyse) ------------------------

/** The stored game id of a room on screen: a replayed record's, or the live room's round. */
function gameIdOf(r) { return r.record ? r.record.id : `${r.view.id}-${r.view.round}`; }

// The games drawn the other way round (the flip button), by game id, kept in this tab's
// sessionStorage: a reload or a reconnect keeps a board as it was turned, another game (a
// rematch too) starts the usual way round, and nothing outlives the tab to meet a later game
// that happens to reuse a room code.
const FLIP_KEY = "discus.flipped";

function flippedGames() {
  try { return new Set(JSON.parse(sessionStorage.getItem(FLIP_KEY)) || []); } catch { return new Set(); }
}

function isFlipped(r) { return flippedGames().has(gameIdOf(r)); }

function toggleFlip(r) {
  const games = flippedGames();
  const id = gameIdOf(r);
  if (!games.delete(id)) games.add(id);
  sessionStorage.setItem(FLIP_KEY, JSON.stringify([...games]));
}

function onReview(review) {
  S.reviewing.delete(review.game_id);
  S.reviews.set(review.game_id, review);
  const r = S.rooms.get(S.current);
  if (r && gameIdOf(r) === review.game_id) render();
}

function onAnalysis(msg) {
  const a = S.analysis;
  if (!a || a.game !== msg.game || a.moves.join(" ") !== msg.moves.join(" ")) return;
  Object.assign(a, { board: msg.board, to_move: msg.to_move, values: msg.values, result: msg.result ?? null, pending: false });
  render();
}

function startAnalysis(r, moves) {
  // The position shown until the answer comes: a refused analysis goes back to it.
  const before = S.analysis && S.analysis.room === r.view.id && !S.analysis.pending ? S.analysis : null;
  S.analysis = { room: r.view.id, game: r.view.game, moves, board: before ? before.board : null, to_move: null,
    values: [], result: null, pending: true, before };
  S.analysis.ref = client.analyse(r.view.game, moves);
  render();
}

/** A finished analysis position's result in words, from seat 0's side's ``value``. */
function resultText(game, value) {
  if (value === 0) return t("analysis.over_draw");
  const colours = gameInfo(game).players;
  const who = colours[value > 0 ? 0 : 1];
  const n = Math.abs(value);
  return game === "othello" ? t("analysis.over_wins_by", { who, n }) : t("analysis.over_wins", { who });
}

function tryMove(move) {
  const a = S.analysis;
  if (!a || a.pending) return;
  const r = S.rooms.get(a.room);
  if (r) startAnalysis(r, [...a.moves, move]);
}

/** "1 move", "2 moves": a count with its noun, singular or plural. */
/** A value's label as the server words it (ai/review.py's ``label``: "win in 7", "loss in 3",
 * "draw", "won", "lost", "unknown", Othello's "+6" or "+6 exact") in the page's language. */
function labelText(label) {
  if (!label) return "";
  let m = /^(win|loss) in (\d+)$/.exec(label);
  if (m) return t(`label.${m[1]}_in`, { n: Number(m[2]) });
  m = /^([+-]?\d+) exact$/.exec(label);
  if (m) return t("label.exact", { value: m[1] });
  return tr("label.", label);
}

function count(n, noun) { return t(`count.${noun}`, { n }); }

/** The review card: ask, the chart, the selected move's verdict; the analysis board's list. */
function renderReview(r, ply) {
  const v = r.view;
  const over = v.status === "finished";
  const id = gameIdOf(r);
  const review = S.reviews.get(id);
  $("review").hidden = !over;
  if (!over) return;
  const btn = $("review-btn");
  btn.hidden = Boolean(review);
  btn.disabled = S.reviewing.has(id);
  btn.textContent = t(S.reviewing.has(id) ? "review.reviewing" : "review.button");
  $("review-note").textContent = review ? t("review.exact", { k: review.moves.filter((m) => m.exact).length, n: review.moves.length }) : "";
  const colours = gameInfo(v.game).players;
  $("review-chart").replaceChildren(...(review ? [valueChart(review.values, ply, (p) => {
    S.viewPly = p === v.moves.length ? null : p; render();
  }, colours)] : []));
  const entry = review && ply > 0 ? review.moves[ply - 1] : null;
  let text = "";
  if (entry) {
    const who = colours[entry.seat];
    const verdict = entry.verdict ? tr("verdict.", entry.verdict) : t("review.not_valued");
    text = t("review.move", { n: entry.ply + 1, who, move: entry.move, verdict: verdict + (MARKS[entry.verdict] ? ` (${MARKS[entry.verdict]})` : "") }) +
      ` ${labelText(entry.label_before)} → ${labelText(entry.label_after)}.`;
    if (entry.best && entry.best !== entry.move) text += ` ${t("review.best_was", { move: entry.best })}`;
  } else if (review) {
    text = t("review.start", { value: review.moves.length ? labelText(review.moves[0].label_before) : "", who: colours[0] });
  }
  $("review-move").textContent = text;
  const a = S.analysis && S.analysis.room === v.id ? S.analysis : null;
  $("analyse-btn").hidden = Boolean(a);
  $("analysis-exit").hidden = !a;
  $("analysis-undo").hidden = !a;
  if (a) $("analysis-undo").disabled = a.moves.length === 0 || a.pending;
  const list = $("analysis-values");
  list.hidden = !a;
  if (a) {
    const line = (text, cls) => Object.assign(document.createElement("li"), { className: cls, textContent: text });
    list.replaceChildren(...(a.pending ? [line(t("analysis.working"), "muted")]
      : a.result !== null && a.result !== undefined ? [line(resultText(a.game, a.result), "analysis-result")]
      : a.values.map((mv) => {
        const li = document.createElement("li");
        li.append(button(mv.move, () => tryMove(mv.move), "", t("analysis.try", { move: mv.move, value: labelText(mv.label) })));
        li.append(Object.assign(document.createElement("span"), { className: "value", textContent: labelText(mv.label) }));
        return li;
      })));
  }
}

/** Marks on the board: the analysis board's value of every legal move, or the best move of the
 * selected (just played) move where it was not the move played. */
function boardMarks(r, ply) {
  const a = S.analysis && S.analysis.room === r.view.id ? S.analysis : null;
  if (a) {
    return Object.fromEntries(a.values.filter((mv) => mv.move !== "pass").map((mv) =>
      [mv.move, { text: shortValue(mv), cls: "valued", label: labelText(mv.label) }]));
  }
  const review = S.reviews.get(gameIdOf(r));
  const entry = review && ply > 0 ? review.moves[ply - 1] : null;
  if (entry && entry.best && entry.best !== entry.move) {
    return { [entry.best]: { text: "★", cls: "best-move", label: t("review.best_instead", { move: entry.move }) } };
  }
  return {};
}

function onError(msg) {
  S.expectNew = false;
  challenges.onError(msg);
  tournaments.onError(msg);
  chat.onError(msg);
  // A refused review or analysis: let it be asked again.
  for (const [id, ref] of S.reviewing) if (ref === msg.ref) S.reviewing.delete(id);
  if (S.analysis && S.analysis.ref === msg.ref) {
    // Back to the position shown before (the board stays usable), or off if there was none.
    S.analysis = S.analysis.before;
    render();
  }
  if (msg.ref !== null && msg.ref === S.autoJoin) {
    S.autoJoin = null;
    if (msg.code === "room_full") {
      S.pendingShow = msg.room || roomFromHash();
      client.spectate(S.pendingShow);
      return;
    }
  }
  if (msg.code === "stale_ply") client.resync();
  if (msg.code === "cannot_claim" && msg.room && S.rooms.has(msg.room) && msg.detail?.retry_after) {
    const r = S.rooms.get(msg.room);
    if (r.you !== null) r.away[1 - r.you] = Date.now() + 1000 * Number(msg.detail.retry_after);
  }
  // A refused move: give the board back (errors name the request they answer in ``ref``).
  for (const [id, r] of S.rooms) {
    if (r.sent !== null && (r.sentRef === msg.ref || id === msg.room)) {
      r.sent = null;
      if (S.current === id) render();
    }
  }
  toast(errorText(msg), msg.code);
  if (msg.code === "unknown_room" && roomFromHash()) { location.hash = ""; }
}

// --- past games: history (list_history) and replays (get_game) ------------------------------

/** "You won" / "Red won" / "Draw", and why, for a finished game's result. */
function outcomeText(g, mySeat) {
  const res = g.result;
  if (!res) return t(g.status === "aborted" ? "outcome.aborted" : "outcome.unfinished");
  if (res.reason === "aborted") return t("outcome.aborted_unscored");
  const why = ["resigned", "left", "abandoned", "timeout"].includes(res.reason) ? t(`outcome.why_${res.reason}`) : "";
  if (res.winner === null) return t("outcome.draw") + why;
  if (mySeat === null) return t("outcome.colour_won", { who: colourOf(g.seats[res.winner]) }) + why;
  return t(res.winner === mySeat ? "outcome.you_won" : "outcome.you_lost") + why;
}

function mySeatIn(seats) {
  const s = seats.find((seat) => seat.player && S.me && seat.player.id === S.me.id);
  return s ? s.seat : null;
}

function fmtDate(seconds) {
  return new Date(seconds * 1000).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

/** games: PastGame[] newest first ({id, game, seats, status, result, started_at, move_count}). */
function renderHistory(games) {
  $("history-card").hidden = games.length === 0;
  $("history").replaceChildren(...games.map((g) => {
    const li = document.createElement("li");
    li.dataset.game = g.id;
    const me = mySeatIn(g.seats);
    const what = document.createElement("div");
    what.className = "what";
    what.innerHTML = "<strong></strong><small></small>";
    const others = g.seats.filter((s) => s.seat !== me).map(seatName).join(` ${t("common.vs")} `);
    what.firstChild.textContent = `${gameInfo(g.game).title} · ${me === null ? "" : `${t("common.vs")} `}${others}`;
    what.lastChild.textContent = `${outcomeText(g, me)} · ${count(g.move_count, "move")} · ${fmtDate(g.started_at)}`;
    const acts = Object.assign(document.createElement("span"), { className: "acts" });
    acts.append(button(t("history.replay"), () => client.getGame(g.id), "primary", t("history.replay_aria", { id: g.id })));
    acts.append(downloadLink(`/games/${g.id}.txt`, t("history.download"), t("history.download_aria", { id: g.id })));
    li.append(what, acts);
    return li;
  }));
}

function downloadLink(href, label, aria) {
  const a = Object.assign(document.createElement("a"), { href, textContent: label, className: "button" });
  a.setAttribute("download", "");
  if (aria) a.setAttribute("aria-label", aria);
  return a;
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

// --- navigation --------------------------------------------------------------------------------

function roomFromHash() {
  const m = /^#(?:\/room\/)?([\w-]{1,32})$/.exec(location.hash);
  return m ? m[1] : null;
}

/** The game id of a replay link (#replay/<id>), or null. */
function replayFromHash() {
  const m = /^#replay\/([\w-]{1,64})$/.exec(location.hash);
  return m ? m[1] : null;
}

/** Room codes are typed in any case (the server matches them so): compare them that way. */
function sameCode(a, b) {
  return a !== null && b !== null && a.toUpperCase() === b.toUpperCase();
}

function openRoom(id, hash = id) {
  if (location.hash !== `#${hash}`) history.replaceState(null, "", `#${hash}`);
  if (S.current !== id) { S.current = id; S.viewPly = null; S.drawn = null; S.analysis = null; }
}

/** A tournament's or a ladder's page named by the link (#tournament/<id>, #ladder/<game>). */
function pageFromHash() {
  const m = /^#(tournament|ladder)\/([\w-]{1,64})$/.exec(location.hash);
  return m ? { kind: m[1], id: m[2] } : null;
}

function route() {
  const id = roomFromHash();
  if (id && S.rooms.has(id)) { openRoom(id); render(); return; }
  const past = replayFromHash();
  if (past && S.rooms.has(past)) { openRoom(past, `replay/${past}`); render(); return; }
  if (!id && !past) { S.current = null; }
  if (pageFromHash()) S.current = null;
  render();
}

window.addEventListener("hashchange", () => {
  const id = roomFromHash();
  if (id && !S.rooms.has(id) && client.ready) { S.autoJoin = client.join(id); S.pendingShow = id; }
  const past = replayFromHash();
  if (past && !S.rooms.has(past) && client.ready) client.getGame(past);
  route();
});

function goLobby() {
  const r = S.current && S.rooms.get(S.current);
  // Leaving a game you are playing forfeits it: ask first, then resign (or abort) it for good
  // rather than leave it running in the background.
  if (r && !r.record && r.you !== null && r.view.status === "active") {
    const abortable = r.view.moves.length < ABORTABLE_PLIES;
    if (!confirm(t(abortable ? "leave.confirm_abort" : "leave.confirm_resign"))) return;
    client.leave(r.view.id);
    S.rooms.delete(r.view.id);
    toast(t(abortable ? "leave.aborted" : "leave.resigned"), null, true);
  } else if (r && (r.record || r.you === null || r.view.status === "finished")) {
    if (!r.record && !r.aborted) client.leave(r.view.id);
    S.rooms.delete(r.view.id);
  }
  S.current = null;
  S.analysis = null;
  history.replaceState(null, "", location.pathname);
  client.listRooms();
  client.listHistory();
  tournaments.refreshList();
  render();
}

/** Back from a game to the tournament or ladder page it was opened from: a finished or
 * watched game is left, one under way stays in "Your games in progress". */
function goBack() {
  const r = S.current && S.rooms.get(S.current);
  const back = r && S.returnTo.get(S.current);
  if (!back) { goLobby(); return; }
  if (r.record || r.you === null || r.view.status === "finished") {
    if (!r.record && !r.aborted) client.leave(r.view.id);
    S.rooms.delete(r.view.id);
    S.returnTo.delete(r.view.id);
  }
  S.current = null;
  S.analysis = null;
  history.replaceState(null, "", back);
  render();
}

// --- rendering --------------------------------------------------------------------------------

function render() {
  const inGame = S.current !== null && S.rooms.has(S.current);
  const page = inGame ? null : pageFromHash();
  $("lobby").hidden = inGame || page !== null;
  $("game").hidden = !inGame;
  $("tournament").hidden = page?.kind !== "tournament";
  $("ladder").hidden = page?.kind !== "ladder";
  if (page?.kind !== "tournament") tournaments.hide();
  if (page?.kind !== "ladder") ladder.hide();
  if (inGame) renderGame(S.rooms.get(S.current));
  else if (page?.kind === "tournament") { tournaments.show(page.id); tournaments.render(); }
  else if (page?.kind === "ladder") { ladder.show(page.id); ladder.render(); }
  else renderLobby();
  const r = inGame ? S.rooms.get(S.current) : null;
  chat.show(!r ? null : r.record ? r.record.id : `${r.view.id}-${r.view.round}`, r ? r.you : null);
}

let retryTimer = null;
function showConnection({ state, retryIn, code, reason }) {
  const was = S.online;
  S.online = state === "online";
  if (was && !S.online && S.current) render(); // no clicks on a board we cannot send from
  const el = $("conn");
  el.dataset.state = state;
  clearInterval(retryTimer);
  if (state === "offline") {
    // Count down to the next attempt, second by second.
    const at = Date.now() + (retryIn || 0);
    const what = t(code === 1013 ? "conn.busy" : "conn.offline");
    el.title = code === 1013 && reason ? reason : "";
    const tick = () => {
      el.textContent = t("conn.retrying", { what, s: Math.max(0, Math.ceil((at - Date.now()) / 1000)) });
    };
    tick();
    retryTimer = setInterval(tick, 250);
    return;
  }
  el.title = "";
  el.textContent = t(`conn.${state}`);
}

let toastTimer = null;
function toast(message, code, info = false) {
  const el = $("toast");
  el.classList.toggle("info", info);
  // The server's message is in words; its stable code is kept for scripts, not shown.
  el.replaceChildren(document.createTextNode(message));
  if (code) el.dataset.code = code; else delete el.dataset.code;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.hidden = true; }, 6000);
}
$("toast").addEventListener("click", () => { $("toast").hidden = true; });

function gameInfo(name) {
  const info = S.games[name] || { name, title: name, players: ["First", "Second"], levels: [] };
  return { ...info, title: tr("title.", info.title), players: info.players.map((c) => tr("colour.", c)) };
}

/** A seat's colour in the page's language. */
function colourOf(seat) {
  return tr("colour.", seat.colour);
}

/** The levels changed on the server (an admin's edit): the lobby shows them at once, keeping
 * the level chosen. */
function onGames(msg) {
  const chosen = $("ai-level").value;
  S.games = Object.fromEntries(msg.games.map((g) => [g.name, g]));
  fillLevels();
  if (chosen && [...$("ai-level").options].some((o) => o.value === chosen)) $("ai-level").value = chosen;
  showLevelNote();
}

function fillLevels() {
  const game = new FormData($("ai-form")).get("game");
  const info = gameInfo(game);
  const sel = $("ai-level");
  const keep = localStorage.getItem(`discus.level.${game}`);
  sel.replaceChildren(...[...info.levels].sort((a, b) => a.order - b.order).map((l) => {
    const o = document.createElement("option");
    o.value = l.name;
    o.textContent = l.name;
    o.title = l.description || "";
    if (l.name === keep) o.selected = true;
    return o;
  }));
  showLevelNote();
  $("seat0-name").textContent = info.players[0];
  $("seat1-name").textContent = info.players[1];
  $("seat-note").textContent = t("lobby.moves_first", { who: info.players[0] });
}

function showLevelNote() {
  const chosen = $("ai-level").selectedOptions[0];
  $("level-note").textContent = chosen ? chosen.title : "";
}

function seatName(seat) {
  if (seat.kind === "ai") return t("seat.computer_level", { level: seat.level });
  if (seat.kind === "empty") return t("seat.waiting");
  if (!seat.player) return t("seat.player");
  return seat.player.bot ? t("seat.bot", { name: seat.player.name }) : seat.player.name;
}

function renderLobby() {
  if (S.current === null) document.title = t("page.title");
  if (!$("lobby").hidden || S.current === null) {
    const list = $("rooms");
    const mineToo = (r) => S.rooms.has(r.id) || r.seats.some((s) => s.player && S.me && s.player.id === S.me.id);
    const items = S.open.filter((r) => !mineToo(r)).map((r) => {
      const li = document.createElement("li");
      const host = r.seats.find((s) => s.kind === "human");
      const what = document.createElement("div");
      what.className = "what";
      what.innerHTML = `<strong></strong><small></small>`;
      what.firstChild.textContent = `${gameInfo(r.game).title} · ${host ? seatName(host) : "?"}`;
      what.lastChild.textContent = `${r.status === "waiting" ? t("rooms.waiting") : count(r.ply, "move")}` +
        (r.time_control ? ` · ${r.time_control}` : "") + (r.spectators ? ` · ${t("rooms.watching", { n: r.spectators })}` : "");
      const acts = Object.assign(document.createElement("span"), { className: "acts" });
      if (r.status === "waiting") acts.append(button(t("rooms.join"), () => { S.pendingShow = r.id; client.join(r.id); }, "primary", t("rooms.join_aria", { game: gameInfo(r.game).title, id: r.id })));
      acts.append(button(t("rooms.watch"), () => { S.pendingShow = r.id; client.spectate(r.id); }, "", t("rooms.watch_aria", { id: r.id })));
      li.append(what, acts);
      return li;
    });
    // Games this page is part of (seated or watching) have a card of their own: a way back
    // after "Lobby".
    const mine = [...S.rooms.values()].filter((r) => r.view.status !== "finished").map((r) => {
      const li = document.createElement("li");
      const what = document.createElement("div");
      what.className = "what";
      what.innerHTML = `<strong></strong><small></small>`;
      what.firstChild.textContent = `${gameInfo(r.view.game).title} · ${r.view.seats.map(seatName).join(` ${t("common.vs")} `)}`;
      what.lastChild.textContent = r.you === null ? t("mine.watching") : yourTurn(r) ? t("mine.your_move") : count(r.view.moves.length, "move");
      li.append(what, button(t("mine.continue"), () => { openRoom(r.view.id); render(); }, "primary"));
      return li;
    });
    $("mine-card").hidden = !mine.length;
    $("mine").replaceChildren(...mine);
    if (!items.length) {
      list.replaceChildren(Object.assign(document.createElement("li"), { className: "muted", textContent: t("lobby.nothing_open_hint") }));
    } else list.replaceChildren(...items);
  }
}

function button(label, onClick, cls, aria) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = label;
  if (cls) b.className = cls;
  if (aria) b.setAttribute("aria-label", aria);
  b.addEventListener("click", onClick);
  return b;
}

function yourTurn(r) {
  const v = r.view;
  return v.status === "active" && r.you !== null && v.position.to_move === r.you;
}

/** The position to draw: the live one, or an earlier one for the replay -- both as the server
 * sent them (the live position; room.boards / game_record.boards for every earlier ply). */
function shownPosition(r) {
  const v = r.view;
  const ply = S.viewPly ?? v.moves.length;
  const cells = S.viewPly === null ? v.position.cells : cellsOf(v.boards[ply]);
  const before = ply > 0 ? cellsOf(v.boards[ply - 1]) : null;
  const { placed, flipped } = S.viewPly === null
    ? { placed: v.position.placed ?? null, flipped: v.position.flipped ?? [] }
    : changes(before, cells);
  // The winning four belongs to the last position only, live or replayed.
  const winning = ply === v.moves.length ? v.position.winning ?? [] : [];
  // Seats alternate plies (an Othello pass is a ply of its own).
  const pos = { cells, last: placed, flipped, winning, toMove: ply % 2 };
  return { pos, prev: before && { cells: before }, ply };
}

function renderGame(r) {
  const v = r.view;
  const info = gameInfo(v.game);
  const live = S.viewPly === null;
  const { pos, prev, ply } = shownPosition(r);
  const animate = S.drawn && S.drawn.id === v.id && S.drawn.round === v.round && S.drawn.ply === ply - 1;
  S.drawn = { id: v.id, ply, round: v.round };

  // Spectators are told so: the board answers no clicks for them.
  $("watching").hidden = r.you !== null || Boolean(r.record);

  // Players, with their clocks in a timed game.
  const counts = discCounts(pos.cells);
  const clock = shownClock(r, ply);
  $("players").replaceChildren(...v.seats.map((seat) => {
    const el = document.createElement("div");
    el.className = "player";
    const turn = v.status === "active" && (live ? v.position.to_move : pos.toMove) === seat.seat;
    if (turn) el.classList.add("turn");
    if (!seat.connected) el.classList.add("offline");
    if (seat.player) { el.dataset.player = seat.player.id; el.title = t("player.profile"); }
    const won = v.status === "finished" && v.result && v.result.winner === seat.seat;
    if (won) el.classList.add("winner");
    el.setAttribute("aria-label", t(turn ? "player.aria_to_move" : "player.aria", { colour: colourOf(seat), name: seatName(seat) }));
    const chip = Object.assign(document.createElement("span"), { className: `chip s${seat.seat} ${v.game}` });
    const who = document.createElement("div");
    who.className = "who";
    const sub = document.createElement("small");
    who.textContent = seat.kind === "ai" ? t("seat.computer") : seatName(seat);
    // The seat's rating in this game, as the server sent it (none for a guest, nor in replays).
    if (seat.rating) {
      const rated = Object.assign(document.createElement("span"), {
        className: "rating", textContent: ratingText(seat.rating),
        title: seat.kind === "ai"
          ? t(seat.rating.provisional ? "player.level_rating_guessed" : "player.level_rating")
          : t(seat.rating.provisional ? "player.rating_provisional" : "player.rating"),
      });
      who.append(" ", rated);
    }
    sub.textContent = `${colourOf(seat)}${r.you === seat.seat ? ` · ${t("player.you")}` : ""}${seat.kind === "ai" ? ` · ${seat.level}` : ""}`;
    who.append(sub);
    el.append(chip, who);
    if (won) el.append(Object.assign(document.createElement("span"), { className: "badge", textContent: t("player.winner") }));
    if (v.game === "othello") el.append(Object.assign(document.createElement("span"), { className: "count", textContent: counts[seat.seat] }));
    const left = clock ? clockLeft(clock, seat.seat) : null;
    if (left !== null) {
      const running = clock.running === seat.seat;
      const face = Object.assign(document.createElement("span"), {
        className: `clock${running ? " running" : ""}${left < 10000 ? " low" : ""}`, textContent: fmtClock(left),
      });
      face.dataset.seat = String(seat.seat);
      face.setAttribute("aria-label", t(running ? "player.clock_running" : "player.clock", { colour: colourOf(seat) }));
      el.append(face);
    }
    return el;
  }));

  // Board.
  const mine = live && !r.record && yourTurn(r) && r.sent === null && S.online;
  const legal = mine ? v.position.legal_moves.filter((m) => m !== "pass") : [];
  const board = $("board-wrap");
  // Redrawing replaces the cells: keep keyboard focus on the same cell.
  const focused = board.contains(document.activeElement) ? document.activeElement : null;
  const focusKey = focused && (focused.dataset.square || focused.dataset.col);
  const analysis = S.analysis && S.analysis.room === v.id && S.analysis.board ? S.analysis : null;
  if (analysis) {
    const cells = cellsOf(analysis.board);
    drawBoard(board, {
      game: v.game, pos: { cells, last: null, flipped: [], winning: [], toMove: analysis.to_move }, prev: null,
      legal: analysis.pending ? [] : analysis.values.map((mv) => mv.move).filter((m) => m !== "pass"),
      animate: false, side: analysis.to_move, onMove: tryMove,
    });
    board.firstChild.classList.add("analysing");
    markCells(board, v.game, cells, boardMarks(r, ply));
  } else {
    drawBoard(board, {
      game: v.game, pos, prev, legal, animate,
      side: r.you ?? 0,
      onMove: (m) => sendMove(r, m),
    });
    markCells(board, v.game, pos.cells, boardMarks(r, ply));
  }
  board.firstChild.classList.toggle("replaying", !live);
  if (focusKey) {
    const again = board.querySelector(`.cell[data-move="${focusKey}"]`) ||
      board.querySelector(`.cell[data-square="${focusKey}"], .cell[data-col="${focusKey}"]`);
    if (again) again.focus();
  }
  const flipped = isFlipped(r);
  board.classList.toggle("flipped", flipped);
  $("flip").setAttribute("aria-pressed", String(flipped));
  board.dataset.ply = String(ply);
  board.dataset.status = v.status;
  board.dataset.record = r.record ? "true" : "false";
  board.dataset.analysis = analysis && !analysis.pending ? `[${analysis.moves.join(",")}]` : "";
  renderExport(r);
  renderReview(r, ply);
  standings.showFor(v.status === "finished" ? gameIdOf(r) : null);

  renderStatus(r);
  renderOffers(r);

  // Share box while a friend is awaited.
  const share = v.status === "waiting" && r.you !== null && v.opponent !== "ai";
  $("share").hidden = !share;
  if (share) {
    $("share-link").value = `${location.origin}${location.pathname}#${v.id}`;
    $("share-code").textContent = v.id;
  }

  // Move list, two plies a row.
  const list = $("movelist");
  const rows = [];
  for (let i = 0; i < v.moves.length; i += 2) {
    const li = document.createElement("li");
    li.append(Object.assign(document.createElement("span"), { className: "n", textContent: `${i / 2 + 1}.` }));
    for (const j of [i, i + 1]) {
      if (j >= v.moves.length) break;
      const b = button(v.moves[j], () => { S.viewPly = j + 1 === v.moves.length ? null : j + 1; render(); }, "",
        t("moves.aria", { n: j + 1, who: info.players[j % 2], move: v.moves[j] }));
      b.prepend(Object.assign(document.createElement("span"), { className: `chip s${seatOfPly(v, j)} ${v.game}` }));
      const judged = S.reviews.get(gameIdOf(r))?.moves[j];
      if (judged && MARKS[judged.verdict]) {
        b.append(Object.assign(document.createElement("span"), { className: `verdict ${judged.verdict}`, textContent: MARKS[judged.verdict] }));
        b.setAttribute("aria-label", `${b.getAttribute("aria-label")}, ${tr("verdict.", judged.verdict)}`);
      }
      if (judged) b.dataset.verdict = judged.verdict ?? "unknown";
      if (j + 1 === ply) b.setAttribute("aria-current", "true");
      li.append(b);
    }
    rows.push(li);
  }
  list.replaceChildren(...rows);
  const cur = list.querySelector('[aria-current="true"]');
  if (cur) cur.scrollIntoView({ block: "nearest" });
  $("watchers").textContent = v.spectators ? t("rooms.watching", { n: v.spectators }) : "";
  $("ply-label").textContent = live ? t("moves.played", { n: v.moves.length }) : t("moves.viewing", { ply, n: v.moves.length });
  $("r-first").disabled = ply === 0;
  $("r-prev").disabled = ply === 0;
  $("r-next").disabled = live;
  $("r-last").disabled = live;

  // Actions.
  const seated = r.you !== null;
  $("resign").hidden = !(seated && v.status !== "finished");
  $("resign").disabled = v.status !== "active";
  // Until both sides have moved, the game can be aborted (left unscored) instead of resigned.
  const abortable = v.status === "active" && v.moves.length < ABORTABLE_PLIES;
  if (!resignArmed) $("resign").textContent = t(abortable ? "game.abort" : "game.resign");
  $("resign").dataset.abort = String(abortable);
  const rm = $("rematch");
  rm.hidden = !(seated && v.status === "finished" && !r.record && !r.aborted);
  const offer = v.rematch_offered_by;
  rm.disabled = offer === r.you;
  rm.textContent = t(offer === null || offer === undefined ? "game.rematch" : offer === r.you ? "game.rematch_offered" : "game.rematch_accept");
  rm.classList.toggle("primary", offer !== r.you);
  // Offered once the grace period is over (or when we do not know when it began, e.g. after
  // our own reconnect: the server then answers cannot_claim with the time left).
  // While their grace period runs the button counts down to when the claim is allowed.
  const opp = seated ? 1 - r.you : 0;
  const away = seated && v.status === "active" && v.seats[opp].kind === "human" && !v.seats[opp].connected;
  const wait = away ? Math.ceil((r.away[opp] - Date.now()) / 1000) : 0;
  $("claim").hidden = !away;
  $("claim").disabled = wait > 0;
  $("claim").textContent = wait > 0 ? t("game.claim_in", { s: wait }) : t("game.claim");
  $("lobby-btn").textContent = t(r.record ? "game.back" : seated && v.status !== "finished" ? "game.lobby" : "game.leave");
  // Against the computer a move (and its reply) may be taken back; people may agree a draw.
  const going = !r.record && v.status === "active" && seated;
  const moved = v.moves.some((_, j) => seatOfPly(v, j) === r.you);
  $("take-back").hidden = !(going && v.opponent === "ai");
  $("take-back").disabled = !moved;
  const drawOffer = v.draw_offered_by ?? null;
  const people = going && v.seats[opp].kind === "human";
  $("draw").hidden = !people;
  $("draw").disabled = drawOffer === r.you;
  $("draw").textContent = t(drawOffer === null ? "game.offer_draw" : drawOffer === r.you ? "game.draw_offered" : "game.draw_accept");
  $("draw").classList.toggle("primary", drawOffer !== null && drawOffer !== r.you);
  $("draw-decline").hidden = !(people && drawOffer !== null && drawOffer !== r.you);
  const back = S.returnTo.get(v.id);
  $("tournament-back").hidden = !back;
  $("tournament-back").textContent = t(back?.startsWith("#ladder/") ? "ladder.back" : "tournaments.back");
  // An arena's game: before your first move you may halve your clock for a bonus point.
  $("berserk").hidden = !(going && v.berserk_allowed && !moved && !(v.berserk || []).includes(r.you));
}

/** The export card of a replayed or just finished game: its text in the known formats, and downloads. */
function renderExport(r) {
  const ended = r.view.status === "finished" && r.finished?.id === `${r.view.id}-${r.view.round}`;
  const rec = r.record || (ended ? r.finished : null);
  $("export").hidden = !rec;
  if (!rec) return;
  const names = { columns: t("export.columns"), moves: t("export.moves"), ggf: "GGF" };
  const fmt = rec.game === "connect4" ? "columns" : "moves";
  $("export-label").textContent = names[fmt];
  $("export-text").textContent = rec.exports[fmt] || "(no moves)";
  const links = Object.entries(rec.downloads).map(([ext, href]) =>
    downloadLink(href, t("export.download", { ext }), t(ext === "ggf" ? "export.download_ggf" : "export.download_moves")));
  $("downloads").replaceChildren(...links);
}

/** Which seat played ply ``j``: the seats alternate, except that an Othello pass is a ply too. */
function seatOfPly(v, j) { return j % 2; }

function renderStatus(r) {
  const v = r.view;
  // The tab title says when it is your move, for a player who looks elsewhere meanwhile.
  document.title = `${yourTurn(r) && S.viewPly === null ? `${t("status.your_move_short")} · ` : ""}${gameInfo(v.game).title} · Discus`;
  const el = $("status");
  const info = gameInfo(v.game);
  el.className = "status";
  el.replaceChildren();
  if (S.viewPly !== null) {
    el.textContent = `${t("status.replaying", { ply: S.viewPly, n: v.moves.length })} `;
    el.append(button(t(r.record ? "status.final_position" : "status.back_to_live"), () => { S.viewPly = null; render(); }, "primary"));
    return;
  }
  if (!S.online && v.status !== "finished") {
    el.textContent = t("status.connection_lost");
    return;
  }
  if (v.status === "waiting") { el.textContent = t("status.waiting_opponent"); return; }
  if (v.status === "finished" && v.result) {
    const res = v.result;
    el.classList.add("over");
    let head;
    if (res.reason === "aborted") {
      el.textContent = t("status.aborted");
      el.dataset.result = "aborted";
      return;
    }
    if (res.winner === null) head = t("status.draw");
    else if (r.you === null) head = t("status.colour_wins", { who: info.players[res.winner] });
    else if (res.winner === r.you) { head = t("status.you_win"); el.classList.add("win"); }
    else { head = t("status.you_lose"); el.classList.add("loss"); }
    const loser = res.winner === null ? null : v.seats[1 - res.winner];
    const mine = loser && loser.seat === r.you;
    const who = loser && !mine ? seatName(loser) : "";
    // Why it ended: the loser's part is said of "you" or of them, each its own sentence.
    const because = (reason) => (loser ? ` — ${t(`reason.${reason}${mine ? "_you" : ""}`, { who })}` : "");
    const why = {
      end: v.game === "othello" ? ` — ${discCounts(v.position.cells).join("–")}` : ` — ${t(res.winner === null ? "reason.full" : "reason.four")}`,
      resigned: because("resigned"),
      left: because("left"),
      abandoned: because("abandoned"),
      agreed: ` — ${t("reason.agreed")}`,
      timeout: because("timeout"),
    }[res.reason] || "";
    el.textContent = t("status.game_over_head", { head }) + why;
    el.dataset.result = res.winner === null ? "draw" : String(res.winner);
    if (v.rematch_offered_by !== null && v.rematch_offered_by !== undefined && v.rematch_offered_by !== r.you && r.you !== null) {
      el.append(document.createElement("br"), Object.assign(document.createElement("span"), { className: "thinking", textContent: t("offer.rematch_to_you") }));
    }
    return;
  }
  const to = v.position.to_move;
  if (v.status === "finished" || to === null) { el.textContent = t("status.game_over"); return; }
  const seat = v.seats[to];
  if (seat.kind === "ai" && v.ai_thinking) {
    el.append(t("status.thinking", { who: seatName(seat) }), Object.assign(document.createElement("span"), { className: "dots" }));
    if (r.thinking) {
      el.append(" ", Object.assign(document.createElement("span"), {
        className: "thinking", textContent: thoughtText(v, r.thinking, to),
      }));
    }
    return;
  }
  if (r.you === to) {
    if (r.sent !== null) { el.textContent = t("status.sending"); return; }
    if (v.position.legal_moves.length === 1 && v.position.legal_moves[0] === "pass") {
      el.textContent = `${t("status.no_move")} `;
      el.append(button(t("status.pass"), () => sendMove(r, "pass"), "primary"));
      return;
    }
    el.textContent = t("status.your_move", { colour: colourOf(seat) });
    if (r.thought && r.thought.ply === v.moves.length - 1) {
      const ai = 1 - to;
      el.append(" ", Object.assign(document.createElement("span"), {
        className: "thinking", textContent: `· ${t("status.saw", { who: seatName(v.seats[ai]), what: thoughtText(v, r.thought, ai) })}`,
      }));
    }
    return;
  }
  if (!seat.connected) {
    const left = Math.ceil((r.away[to] - Date.now()) / 1000);
    el.textContent = r.you === null || left > 0 && r.away[to]
      ? t("status.away", { who: seatName(seat) }) + (r.you !== null && left > 0 ? ` (${t("common.seconds", { s: left })})` : "")
      : t("status.away_claim", { who: seatName(seat) });
    return;
  }
  el.textContent = r.you === null ? t("status.to_move", { colour: colourOf(seat) }) : t("status.waiting_for", { who: seatName(seat) });
}

/** An ai_thinking message in words: the search's depth, what its score means for whom (in
 * discs for Othello; a proven win as the moves it takes), and its size. */
function thoughtText(v, th, aiSeat) {
  const nodes = fmtNodes(th.nodes);
  if (th.score === null) return t("think.forced", { depth: th.depth, nodes });  // a forced move
  const mine = colourOf(v.seats[aiSeat]);
  const theirs = colourOf(v.seats[1 - aiSeat]);
  const lead = th.score > 0 ? mine : theirs;
  const n = Math.abs(th.score);
  let what;
  if (th.win_in !== null && th.win_in !== undefined) {
    const k = Math.abs(th.win_in);
    what = t("think.wins_in", { who: th.win_in > 0 ? mine : theirs, n: k });
  } else if (th.score === 0) {
    what = t(th.exact ? "think.draw" : "think.even");
  } else if (v.game === "othello") {
    what = t(th.exact ? "think.wins_by" : "think.discs_for", { who: lead, n });
  } else {
    what = t("think.plus_for", { who: lead, n });
  }
  return t(th.exact ? "think.line_solved" : "think.line", { depth: th.depth, what, nodes });
}

function fmtNodes(n) {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e3) return `${Math.round(n / 1e3)}k`;
  return String(n);
}

function sendMove(r, move) {
  if (!yourTurn(r) || r.sent !== null) return;
  r.sent = r.view.moves.length;
  r.sentRef = client.move(r.view.id, r.view.moves.length, move);
  render();
}

// --- controls -------------------------------------------------------------------------------

$("ai-form").addEventListener("change", (ev) => {
  if (ev.target.name === "game") fillLevels();
  if (ev.target.name === "level") showLevelNote();
  if (ev.target.name === "level") localStorage.setItem(`discus.level.${new FormData($("ai-form")).get("game")}`, ev.target.value);
});
$("ai-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const f = new FormData($("ai-form"));
  const seat = f.get("seat") === "random" ? null : Number(f.get("seat"));
  S.expectNew = true;
  const opponent = { kind: "ai", level: f.get("level") };
  if (f.get("evaluation") && !client.signedIn) opponent.evaluation = true;
  client.create(f.get("game"), opponent, seat, f.get("time_control"));
});
$("friend-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const kind = ev.submitter?.value || "friend";
  const f = new FormData($("friend-form"));
  S.expectNew = true;
  client.create(f.get("game"), { kind }, 0, f.get("time_control"));
});
$("code-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const code = $("code").value.trim().toUpperCase();
  if (!code) return;
  S.autoJoin = client.join(code);
  S.pendingShow = code;
});
$("name-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const name = $("name").value.trim();
  if (!name || name === S.me?.name) return;
  client.setName(name);
  // The name travels in hello: saying hello again with the resume token renames this player
  // (same id, same games and seats).
  client.resync();
  toast(t("toast.renamed", { name }), null, true);
});
$("refresh").addEventListener("click", () => client.listRooms());
$("home-link").addEventListener("click", (ev) => { ev.preventDefault(); goLobby(); });
$("lobby-btn").addEventListener("click", goLobby);
$("tournament-back").addEventListener("click", goBack);
$("t-lobby").addEventListener("click", goLobby);
$("l-lobby").addEventListener("click", goLobby);
$("flip").addEventListener("click", () => {
  const r = S.rooms.get(S.current);
  if (r) { toggleFlip(r); render(); }
});
// Resigning takes two clicks (the button asks once), without a blocking dialog.
let resignArmed = null;
$("resign").addEventListener("click", () => {
  const b = $("resign");
  const r = S.rooms.get(S.current);
  if (r && b.dataset.abort === "true") {
    // Leaving before both sides moved aborts the game (the server does not score it).
    r.aborted = true;
    client.leave(S.current);
    return;
  }
  if (resignArmed) {
    clearTimeout(resignArmed);
    resignArmed = null;
    b.textContent = t("game.resign");
    client.resign(S.current);
    return;
  }
  b.textContent = t("game.really_resign");
  resignArmed = setTimeout(() => { resignArmed = null; b.textContent = t("game.resign"); }, 4000);
});
$("rematch").addEventListener("click", () => {
  const r = S.rooms.get(S.current);
  if (!r) return;
  const offer = r.view.rematch_offered_by;
  if (offer !== null && offer !== undefined && offer !== r.you) client.acceptRematch(r.view.id);
  else client.offerRematch(r.view.id);
});
$("claim").addEventListener("click", () => client.claim(S.current));
$("take-back").addEventListener("click", () => client.takeBack(S.current));
$("draw").addEventListener("click", () => {
  const r = S.rooms.get(S.current);
  if (!r) return;
  const offer = r.view.draw_offered_by ?? null;
  if (offer !== null && offer !== r.you) client.answerDraw(r.view.id, true);
  else client.offerDraw(r.view.id);
});
$("draw-decline").addEventListener("click", () => client.answerDraw(S.current, false));
$("berserk").addEventListener("click", () => client.request({ type: "berserk", room: S.current }));
initPrefs($("sound"), $("theme"));
languageSwitch($("lang"));
$("copy-export").addEventListener("click", async () => {
  try { await navigator.clipboard.writeText($("export-text").textContent); $("copy-export").textContent = t("common.copied"); }
  catch { $("copy-export").textContent = t("common.select_copy"); }
  setTimeout(() => { $("copy-export").textContent = t("common.copy"); }, 2000);
});
$("copy-link").addEventListener("click", async () => {
  const input = $("share-link");
  try { await navigator.clipboard.writeText(input.value); $("copy-link").textContent = t("common.copied"); }
  catch { input.select(); document.execCommand?.("copy"); $("copy-link").textContent = t("common.copied"); }
  setTimeout(() => { $("copy-link").textContent = t("common.copy"); }, 2000);
});
function step(to) {
  const r = S.rooms.get(S.current);
  if (!r) return;
  const n = r.view.moves.length;
  const ply = Math.max(0, Math.min(n, to(S.viewPly ?? n, n)));
  S.viewPly = ply === n ? null : ply;
  render();
}
$("review-btn").addEventListener("click", () => {
  const r = S.current && S.rooms.get(S.current);
  if (!r) return;
  S.reviewing.set(gameIdOf(r), client.requestReview(gameIdOf(r)));
  render();
});
$("analyse-btn").addEventListener("click", () => {
  const r = S.current && S.rooms.get(S.current);
  if (!r) return;
  const ply = S.viewPly ?? r.view.moves.length;
  // A finished game's last position has no move: analyse the one before it.
  startAnalysis(r, r.view.moves.slice(0, ply === r.view.moves.length && ply > 0 ? ply - 1 : ply));
});
$("analysis-undo").addEventListener("click", () => {
  const a = S.analysis;
  const r = a && S.rooms.get(a.room);
  if (r && a.moves.length) startAnalysis(r, a.moves.slice(0, -1));
});
$("analysis-exit").addEventListener("click", () => { S.analysis = null; render(); });
$("r-first").addEventListener("click", () => step(() => 0));
$("r-prev").addEventListener("click", () => step((p) => p - 1));
$("r-next").addEventListener("click", () => step((p) => p + 1));
$("r-last").addEventListener("click", () => step((p, n) => n));
document.addEventListener("keydown", (ev) => {
  if ($("game").hidden || ev.target.closest?.("input, select")) return;
  // On a board with a move to play the keys are the board's; on one without (a game just
  // ended by a click there, a replay) they step through the moves as anywhere else.
  const grid = ev.target.closest?.(".grid");
  if (grid && grid.querySelector(".cell[data-move]") && ev.key !== "Home" && ev.key !== "End") return;
  if (/^[1-7]$/.test(ev.key) && !ev.altKey && !ev.ctrlKey && !ev.metaKey) {
    // Connect Four: a digit drops in that column from anywhere on the game view.
    $("board-wrap").querySelector(`.connect4 .cell[data-move="${ev.key}"]`)?.click();
    return;
  }
  if (ev.key === "ArrowLeft") step((p) => p - 1);
  else if (ev.key === "ArrowRight") step((p) => p + 1);
  else if (ev.key === "Home") step(() => 0);
  else if (ev.key === "End") step((p, n) => n);
});
// Count down an absent opponent's grace period.
setInterval(() => {
  const r = S.current && S.rooms.get(S.current);
  if (r && r.away.some((t) => t > 0) && r.view.status === "active" && S.viewPly === null) render();
}, 1000);
setInterval(tickClocks, 100);
// Open rooms change without events: refresh the list while the lobby is on screen.
setInterval(() => {
  if (!$("lobby").hidden && client.ready) { client.listRooms(); tournaments.refreshList(); }
}, 8000);

render();
client.connect();
