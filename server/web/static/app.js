// The page: the lobby, the game view (with the review and the analysis board) and the
// tournament and ladder pages, drawn from the state in state.js. Server messages update the
// state (through net.js) and every change re-renders the visible view. This module wires the
// views together: it hands each server message to its view, routes between the views by the
// link, and keeps the connection's and the page's own lines (the connection note, the toasts).

import { Client } from "./net.js";
import { initPrefs } from "./prefs.js";
import { setUpAccount } from "./account.js";
import { setUpStandings } from "./standings.js";
import { setUpChallenges } from "./challenges.js";
import { setUpChat } from "./chat.js";
import { setUpTournaments } from "./tournaments.js";
import { setUpLadder } from "./ladder.js";
import { errorText, languageSwitch, t } from "./i18n.js";
import { ABORTABLE_PLIES, S, gameInfo } from "./state.js";
import { openRoom, pageFromHash, replayFromHash, roomFromHash } from "./links.js";
import { fillClock, fillClocks, fillLevels, setUpLobby } from "./lobby.js";
import { setUpGame } from "./game.js";
import { setUpRooms } from "./rooms.js";
import { setUpAnalysis } from "./analysis.js";

const $ = (id) => document.getElementById(id);

const client = new Client(dispatch);
const inform = (text) => toast(text, null, true); // a toast that is news, not an error
const account = setUpAccount(client, inform);
const challenges = setUpChallenges(client, {
  titleOf: (game) => gameInfo(game).title, games: () => Object.values(S.games), me: () => S.me,
  fillClock, toast: inform,
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
  games: () => Object.values(S.games), watch: watchFrom, toast: inform,
  changed: () => { if ($("game").hidden) render(); }, // a push does not redraw a game on screen
});
const ladder = setUpLadder(client, {
  titleOf: (game) => gameInfo(game).title, watch: watchFrom,
  replay: (gameId) => { S.returnTo.set(gameId, location.hash); client.getGame(gameId); },
});

const analysis = setUpAnalysis(client, { render });
const gameView = setUpGame(client, { render, analysis, standings });
const rooms = setUpRooms(client, {
  render, renderStatus: gameView.renderStatus, toast: inform,
  startedBy: challenges.startedBy, playingIn: tournaments.playingIn,
});
const lobby = setUpLobby(client, { render, toast: inform });

// --- server events ---------------------------------------------------------------------------

function dispatch(event, msg) {
  switch (event) {
    case "status": return showConnection(msg);
    case "welcome": return onWelcome(msg);
    case "synced": return onSynced();
    case "rooms": S.open = msg; return lobby.renderLobby();
    case "room_state": return rooms.onRoomState(msg);
    case "move_made": return rooms.onMoveMade(msg);
    case "room_event": return rooms.onRoomEvent(msg);
    case "ai_thinking": return rooms.onThinking(msg);
    case "ai_waiting": return rooms.onWaiting(msg);
    case "game_over": return rooms.onGameOver(msg);
    case "error": return onError(msg);
    case "history": S.past = msg; return lobby.renderHistory(msg);
    case "game_record": return rooms.onRecord(msg);
    case "review": return analysis.onReview(msg.review);
    case "analysis": return analysis.onAnalysis(msg);
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
    case "stats": return lobby.onStats(msg);
    case "games": return lobby.onGames(msg);
    case "tournaments": return tournaments.onList(msg);
    case "tournament": case "round_tournament": return tournaments.onTournament(msg);
    case "ladder": return ladder.onLadder(msg);
    default: return undefined;
  }
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
        inform(t("toast.game_gone"));
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

function onError(msg) {
  S.expectNew = false;
  challenges.onError(msg);
  const saidBeside = tournaments.onError(msg); // a refused tournament: said beside its form
  chat.onError(msg);
  analysis.onError(msg);
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
  if (!saidBeside) toast(errorText(msg), msg.code);
  if (msg.code === "unknown_room" && roomFromHash()) { location.hash = ""; }
}

// --- navigation --------------------------------------------------------------------------------

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
    inform(t(abortable ? "leave.aborted" : "leave.resigned"));
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
  if (inGame) gameView.renderGame(S.rooms.get(S.current));
  else if (page?.kind === "tournament") { tournaments.show(page.id); tournaments.render(); }
  else if (page?.kind === "ladder") { ladder.show(page.id); ladder.render(); }
  else lobby.renderLobby();
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

// --- controls -------------------------------------------------------------------------------

$("home-link").addEventListener("click", (ev) => { ev.preventDefault(); goLobby(); });
$("lobby-btn").addEventListener("click", goLobby);
$("tournament-back").addEventListener("click", goBack);
$("t-lobby").addEventListener("click", goLobby);
$("l-lobby").addEventListener("click", goLobby);
initPrefs($("sound"), $("theme"));
languageSwitch($("lang"));
// Open rooms change without events: refresh the list while the lobby is on screen.
setInterval(() => {
  if (!$("lobby").hidden && client.ready) { client.listRooms(); tournaments.refreshList(); }
}, 8000);

render();
client.connect();
