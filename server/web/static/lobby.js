// The lobby: the forms that make a game (against the computer, with a friend, by a code), the
// player's name, the open rooms to join or watch, this page's games under way, the finished
// games to replay or download, and a note while the engines warm up.
import { clockLabel } from "./challenges.js";
import { t } from "./i18n.js";
import { button, downloadLink } from "./dom.js";
import { S, colourOf, count, gameInfo, mySeatIn, seatName, yourTurn } from "./state.js";
import { openRoom } from "./links.js";

const $ = (id) => document.getElementById(id);

/** A clock picker (a select.clock-choice): Untimed, then the server's time controls. */
export function fillClock(sel) {
  const keep = sel.value;
  sel.replaceChildren(Object.assign(document.createElement("option"), { value: "", textContent: t("clock.untimed") }),
    ...S.timeControls.map((c) => Object.assign(document.createElement("option"), {
      value: c.name, textContent: clockLabel(c),
    })));
  sel.value = keep;
}

export function fillClocks() {
  for (const sel of document.querySelectorAll("select.clock-choice")) fillClock(sel);
}

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

function fmtDate(seconds) {
  return new Date(seconds * 1000).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

export function fillLevels() {
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

/** Seconds an AI move would wait for a free engine from which the lobby says the computer is busy. */
const BUSY_SECONDS = 2;

function showLevelNote() {
  const chosen = $("ai-level").selectedOptions[0];
  $("level-note").textContent = chosen ? chosen.title : "";
}

/**
 * Wire the lobby to ``client`` (net.js). ``render()`` draws the page again, ``toast(text)``
 * says something briefly. Returns what app.js calls on messages and when it draws.
 */
export function setUpLobby(client, { render, toast }) {
  /** While the AI workers warm up (a first start compiles the engines), or while they are busy
   * (an AI move would wait BUSY_SECONDS or more for a free one), say so in the lobby and ask
   * again every few seconds until that passes. */
  function onStats(msg) {
    const pool = msg.pool;
    const warming = Boolean(pool && pool.ready < pool.workers);
    const busy = Boolean(pool && !warming && pool.wait_seconds !== null && pool.wait_seconds !== undefined
      && pool.wait_seconds >= BUSY_SECONDS);
    const note = $("engines-note");
    note.hidden = !warming && !busy;
    if (note.hidden) return;
    // A first start compiles the engines (a minute); a later one loads them (seconds).
    note.textContent = warming
      ? t(pool.compiling ? "lobby.engines_compiling" : "lobby.engines_loading",
        { ready: pool.ready, workers: pool.workers })
      : t("lobby.engines_busy", { seconds: Math.round(pool.wait_seconds), queued: pool.queued });
    clearTimeout(onStats.timer);
    onStats.timer = setTimeout(() => { if (S.online) client.stats(); }, warming ? 3000 : 10000);
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
    toast(t("toast.renamed", { name }));
  });
  $("refresh").addEventListener("click", () => client.listRooms());

  return { onStats, onGames, renderLobby, renderHistory };
}
