// The admin page: log in with an admin token, tune levels, read the audit log, watch rooms,
// workers and the cache, run calibrations. Speaks the admin messages of docs/PROTOCOL.md
// ("Admin") over the same /ws as the game page. The token stays in sessionStorage (this tab).

import { setUpAdminChat } from "./admin_chat.js";

const PROTOCOL_VERSION = 1;
const TOKEN_KEY = "discus.admin.token";
const FIELDS = [
  // [field, kind]: how a level's knob is edited and sent.
  ["order", "int"], ["description", "text"], ["max_depth", "int?"], ["soft_time", "float"],
  ["hard_time", "float"], ["nodes", "int?"], ["candidates", "int"], ["margin", "int"],
  ["rails", "bool"],
];

const $ = (sel) => document.querySelector(sel);
const state = { ws: null, retry: 0, games: [], levels: null, game: null, nextId: 1, pending: {} };

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (v === true) node.setAttribute(k, "");
    else if (v !== false && v != null) node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

function toast(text) {
  const t = $("#toast");
  t.textContent = text;
  t.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.hidden = true; }, 5000);
}

function when(seconds) {
  return seconds == null ? "—" : new Date(seconds * 1000).toLocaleString();
}

// --- connection ----------------------------------------------------------------------------

function connect() {
  const url = new URL("/ws", location.href);
  url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(url);
  state.ws = ws;
  setConn("connecting");
  ws.onopen = () => ws.send(JSON.stringify({ type: "hello", version: PROTOCOL_VERSION, name: "admin page" }));
  ws.onmessage = (ev) => { if (state.ws === ws) receive(JSON.parse(ev.data)); };
  ws.onclose = () => {
    if (state.ws !== ws) return;
    setConn("offline");
    const delay = Math.min(15000, 500 * 2 ** state.retry++);
    setTimeout(connect, delay);
  };
}

function setConn(s) {
  const c = $("#conn");
  c.dataset.state = s;
  c.textContent = s === "online" ? "online" : s === "offline" ? "offline — reconnecting" : "connecting…";
}

function send(msg, onError) {
  msg.id = state.nextId++;
  if (onError) state.pending[msg.id] = onError;
  if (state.ws && state.ws.readyState === WebSocket.OPEN) state.ws.send(JSON.stringify(msg));
  return msg.id;
}

function login(token) {
  send({ type: "admin_login", token }, (err) => {
    sessionStorage.removeItem(TOKEN_KEY);
    showLogin(err.message);
  });
}

function receive(msg) {
  const handler = HANDLERS[msg.type];
  if (handler) handler(msg);
}

const HANDLERS = {
  welcome() {
    state.retry = 0;
    setConn("online");
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) login(token); else showLogin("");
  },
  admin_welcome(msg) {
    state.games = msg.games;
    $("#who").textContent = `${msg.admin.name}`;
    $("#login").hidden = true;
    $("#desk").hidden = false;
    $("#logout").hidden = false;
    if (!state.game) state.game = msg.games[0];
    buildGamePickers();
    refreshAll();
    chat.opened();
  },
  error(msg) {
    const onError = state.pending[msg.ref];
    delete state.pending[msg.ref];
    if (onError) onError(msg); else toast(`${msg.message} (${msg.code})`);
  },
  admin_levels(msg) { state.levels = msg; renderLevels(); },
  admin_level_edited(msg) {
    const row = document.querySelector(`#levels tr[data-level="${msg.after.name}"]`);
    if (row) { row.classList.add("saved"); setTimeout(() => row.classList.remove("saved"), 1600); }
    toast(`${msg.after.name}: saved (version ${msg.version}); it counts from the next AI move`);
    // Every edit bumps the levels' version: show the new one here and in the figures.
    if (state.levels) state.levels.version = msg.version;
    $("#levels-version").textContent = versionText(msg.version);
    send({ type: "admin_list_audit", limit: 50 });
    send({ type: "admin_get_stats" });
  },
  admin_audit(msg) { renderAudit(msg.entries); },
  admin_rooms(msg) { renderRooms(msg); },
  admin_stats(msg) { renderStats(msg); },
  admin_calibration_started(msg) {
    $("#cal-status").hidden = false;
    $("#cal-progress").max = msg.total;
    $("#cal-progress").value = 0;
    $("#cal-text").textContent = `${msg.game}: ${msg.levels.join(", ")} — 0 of ${msg.total} games`;
    $("#cal-start").disabled = true;
  },
  admin_calibration_progress(msg) {
    $("#cal-status").hidden = false;
    $("#cal-progress").max = msg.total;
    $("#cal-progress").value = msg.done;
    const outcome = msg.result === 0 ? "draw" : `${msg.result > 0 ? msg.first : msg.second} won`;
    $("#cal-text").textContent = `${msg.done} of ${msg.total} games — last: ${msg.first} vs ${msg.second}, ${outcome}`;
  },
  admin_calibration_finished(msg) {
    $("#cal-start").disabled = false;
    $("#cal-text").textContent = `finished in ${msg.run.seconds.toFixed(1)} s`;
    renderRun(msg.run);
    send({ type: "admin_list_calibrations", limit: 20 });
  },
  admin_calibration_failed(msg) {
    $("#cal-start").disabled = false;
    $("#cal-text").textContent = `failed: ${msg.message}`;
  },
  admin_calibrations(msg) { renderRuns(msg.runs); },
  admin_bots(msg) { renderBots(msg.bots); },
  admin_bot_created(msg) {
    $("#bot-token").hidden = false;
    $("#bot-token-name").textContent = msg.bot.name;
    $("#bot-token-value").value = msg.token;
    $("#bot-token-value").select();
    $("#bot-name").value = "";
    send({ type: "admin_list_bots" });
  },
  admin_bot_revoked(msg) {
    const names = msg.bots.map((b) => b.name).join(", ");
    $("#bots-note").textContent = `revoked ${names}; ${msg.closed} connection${msg.closed === 1 ? "" : "s"} closed`;
    send({ type: "admin_list_bots" });
  },
};

const chat = setUpAdminChat($("#desk"), send, toast);
Object.assign(HANDLERS, chat.handlers);

function showLogin(error) {
  $("#login").hidden = false;
  $("#desk").hidden = true;
  $("#logout").hidden = true;
  $("#who").textContent = "";
  $("#login-error").textContent = error || "";
}

function refreshAll() {
  send({ type: "admin_list_levels" });
  send({ type: "admin_list_audit", limit: 50 });
  send({ type: "admin_list_rooms" });
  send({ type: "admin_get_stats" });
  send({ type: "admin_list_calibrations", limit: 20 });
  send({ type: "admin_list_bots" });
}

// --- levels ----------------------------------------------------------------------------------

function buildGamePickers() {
  const seg = $("#levels-game");
  seg.replaceChildren(el("legend", { class: "sr-only", text: "Game" }));
  for (const g of state.games) {
    const input = el("input", { type: "radio", name: "levels-game", value: g, checked: g === state.game,
      onchange: () => { state.game = g; renderLevels(); } });
    seg.append(el("label", {}, input, el("span", { text: g === "connect4" ? "Connect Four" : g === "othello" ? "Othello" : g })));
  }
  const sel = $("#cal-game");
  sel.replaceChildren(...state.games.map((g) => el("option", { value: g, text: g })));
}

function cellInput(field, kind, value) {
  const attrs = { name: field, "data-field": field, "aria-label": field.replace("_", " ") };
  if (kind === "bool") return el("input", { ...attrs, type: "checkbox", checked: !!value });
  if (kind === "text") return el("input", { ...attrs, type: "text", value: value ?? "" });
  const step = kind === "float" ? "0.01" : "1";
  return el("input", { ...attrs, type: "number", step, value: value ?? "", placeholder: kind === "int?" ? "none" : "" });
}

function readInput(input, kind) {
  if (kind === "bool") return input.checked;
  if (kind === "text") return input.value;
  const raw = input.value.trim();
  if (raw === "") return kind === "int?" ? null : "";
  const n = Number(raw);
  return Number.isNaN(n) ? raw : n;
}

function versionText(version) {
  return version >= 0 ? `version ${version}` : "built-in (no database)";
}

function renderLevels() {
  const body = $("#levels tbody");
  body.replaceChildren();
  if (!state.levels) return;
  $("#levels-version").textContent = versionText(state.levels.version);
  const game = state.levels.games.find((g) => g.game === state.game);
  if (!game) return;
  for (const level of game.levels) {
    const row = el("tr", { "data-level": level.name });
    row.append(el("th", { scope: "row", text: level.name }));
    for (const [field, kind] of FIELDS) {
      row.append(el("td", { class: field === "description" ? "desc" : "" }, cellInput(field, kind, level[field])));
    }
    const problems = el("tr", { class: "problems", hidden: true }, el("td", { colspan: FIELDS.length + 2 }));
    const save = el("button", { type: "button", text: "Save", "data-save": level.name,
      onclick: () => saveLevel(game.game, level, row, problems) });
    row.append(el("td", {}, save));
    body.append(row, problems);
  }
}

function saveLevel(game, level, row, problems) {
  const changes = {};
  for (const [field, kind] of FIELDS) {
    const input = row.querySelector(`[data-field="${field}"]`);
    input.removeAttribute("aria-invalid");
    input.removeAttribute("title");
    const value = readInput(input, kind);
    if (value !== level[field]) changes[field] = value;
  }
  problems.hidden = true;
  if (!Object.keys(changes).length) { toast(`${level.name}: nothing changed`); return; }
  send({ type: "admin_edit_level", game, level: level.name, changes }, (err) => {
    const list = el("ul");
    const detail = err.detail || {};
    for (const [field, why] of Object.entries(detail)) {
      const input = row.querySelector(`[data-field="${field}"]`);
      if (input) { input.setAttribute("aria-invalid", "true"); input.title = why; }
      list.append(el("li", { text: `${field}: ${why}` }));
    }
    if (!list.children.length) list.append(el("li", { text: err.message }));
    problems.firstChild.replaceChildren(el("strong", { text: `Not saved (${err.code}):` }), list);
    problems.hidden = false;
  });
}

// --- audit, rooms, stats --------------------------------------------------------------------------

function renderAudit(entries) {
  const body = $("#audit tbody");
  body.replaceChildren();
  for (const e of entries) {
    const changes = e.changed.map((f) => `${f}: ${JSON.stringify(e.before?.[f])} → ${JSON.stringify(e.after?.[f])}`);
    body.append(el("tr", {},
      el("td", { text: when(e.at) }),
      el("td", { text: e.actor_name || e.actor }),
      el("td", { text: `${e.game} ${e.level}` }),
      el("td", { text: changes.join("; ") || e.action })));
  }
  if (!entries.length) body.append(el("tr", {}, el("td", { colspan: 4, class: "muted", text: "No changes yet." })));
}

function renderBots(bots) {
  const body = $("#bots tbody");
  body.replaceChildren();
  for (const b of bots) {
    const revoke = b.revoked_at === null
      ? el("button", { type: "button", class: "danger", text: "Revoke", "aria-label": `Revoke bot ${b.name}` })
      : el("span");
    if (b.revoked_at === null) {
      revoke.addEventListener("click", () => {
        if (confirm(`Revoke ${b.name}? Its connections close now and its token stops working.`)) {
          send({ type: "admin_revoke_bot", bot: b.token_id });
        }
      });
    }
    body.append(el("tr", { "data-bot": b.name },
      el("td", { text: b.name }),
      el("td", { text: when(b.created_at) }),
      el("td", { text: b.last_used_at === null ? "never" : when(b.last_used_at) }),
      el("td", { text: String(b.connections) }),
      el("td", { text: b.revoked_at === null ? "live" : `revoked ${when(b.revoked_at)}` }),
      el("td", {}, revoke)));
  }
  if (!bots.length) body.append(el("tr", {}, el("td", { colspan: 6, class: "muted", text: "No bots yet." })));
}

function seatText(seat) {
  if (seat.kind === "ai") return `AI (${seat.level})`;
  if (seat.kind === "empty") return "—";
  return `${seat.player?.name ?? "?"}${seat.connected ? "" : " (away)"}`;
}

function renderRooms(msg) {
  $("#online").textContent = `${msg.players_online} online`;
  const body = $("#rooms tbody");
  body.replaceChildren();
  for (const r of msg.rooms) {
    body.append(el("tr", {},
      el("td", {}, el("a", { href: `/#${r.id}`, text: r.id })),
      el("td", { text: r.game }),
      el("td", { text: r.status + (r.ai_thinking ? " · AI thinking" : "")
                       + (r.node ? ` · node ${r.node}` : "") }),
      el("td", { class: "num", text: String(r.ply) }),
      el("td", { text: seatText(r.seats[0]) }),
      el("td", { text: seatText(r.seats[1]) }),
      el("td", { class: "num", text: String(r.spectators) }),
      el("td", { text: when(r.last_move_at) })));
  }
  if (!msg.rooms.length) body.append(el("tr", {}, el("td", { colspan: 8, class: "muted", text: "No rooms." })));
}

function pct(x) { return x == null ? "—" : `${(100 * x).toFixed(1)} %`; }
function secs(x) { return x == null ? "—" : `${x.toFixed(3)} s`; }

function renderStats(msg) {
  const dl = $("#stats");
  dl.replaceChildren();
  const add = (k, v) => dl.append(el("dt", { text: k }), el("dd", { text: v }));
  const pool = msg.stats.pool;
  if (pool) {
    add("Workers", `${pool.busy} busy of ${pool.workers} (${pool.ready} ready)`);
    add("Queue", String(pool.queued));
    add("AI moves", `${pool.jobs} (${pool.fallbacks} fallback, ${pool.from_cache} from cache)`);
    add("Move time p50 / p99", `${secs(pool.move_seconds_p50)} / ${secs(pool.move_seconds_p99)}`);
    add("Worker restarts", String(pool.restarts));
  } else {
    add("Workers", "none (quick moves only)");
  }
  for (const [label, cache] of [["Cache (this server)", msg.stats.cache], ["Cache (all servers)", msg.stats.shared_cache]]) {
    if (!cache) continue;
    add(label, `${pct(cache.hit_rate)} of ${cache.lookups} lookups`);
    for (const t of cache.tiers) add(`· ${t.tier}`, `${pct(t.hit_rate)} (${t.hits} hits)`);
  }
  if (!msg.stats.cache && !msg.stats.shared_cache) add("Cache", "none");
  add("Rooms", String(msg.rooms));
  add("Players online", String(msg.players_online));
  add("Levels version", msg.levels_version >= 0 ? String(msg.levels_version) : "built-in");
}

// --- calibration ------------------------------------------------------------------------------

function renderRun(run) {
  const box = $("#cal-result");
  const pairs = el("table", { class: "datatable", id: "cal-pairs" },
    el("thead", {}, el("tr", {}, ...["Pair", "W", "D", "L", "Score"].map((h) => el("th", { text: h })))),
    el("tbody", {}, ...run.pairs.map((p) => {
      const games = p.wins + p.draws + p.losses;
      return el("tr", {},
        el("td", { text: `${p.a} vs ${p.b}` }),
        el("td", { class: "num", text: String(p.wins) }), el("td", { class: "num", text: String(p.draws) }),
        el("td", { class: "num", text: String(p.losses) }),
        el("td", { class: "num", text: games ? `${(100 * (p.wins + p.draws / 2) / games).toFixed(0)} %` : "—" }));
    })));
  const ratings = run.ratings || [];
  const top = Math.max(1, ...ratings.map((r) => r.elo ?? 0));
  const elo = el("table", { class: "datatable", id: "cal-elo" },
    el("thead", {}, el("tr", {}, ...["Level", "Elo", "± s.e.", "Games", "Score", ""].map((h) => el("th", { text: h })))),
    el("tbody", {}, ...ratings.map((r) => el("tr", { "data-level": r.level },
      el("td", { text: r.level }),
      el("td", { class: "num", text: r.elo == null ? "—" : r.elo.toFixed(0) }),
      el("td", { class: "num", text: r.error == null ? "—" : r.error.toFixed(0) }),
      el("td", { class: "num", text: String(r.games) }),
      el("td", { class: "num", text: r.score.toFixed(1) }),
      el("td", {}, el("span", { class: "elo-bar", style: `width:${Math.max(2, 160 * Math.max(0, r.elo ?? 0) / top)}px` }))))));
  box.replaceChildren(
    el("p", { class: "muted small", text: `${run.game}, ${run.games_per_pair} games per pair (${run.pair_mode}), seed ${run.seed}, ${when(run.created_at)} — Elo relative to ${ratings[0]?.level ?? "the weakest"} (0); wins/draws/losses from the first level's side` }),
    el("div", { class: "row" }, el("div", { class: "grow scroll" }, pairs), el("div", { class: "grow scroll" }, elo)));
}

function renderRuns(runs) {
  const list = $("#cal-runs");
  list.replaceChildren();
  for (const run of runs) {
    const elos = (run.ratings || []).map((r) => `${r.level} ${r.elo == null ? "—" : r.elo.toFixed(0)}`).join(" · ");
    list.append(el("li", {},
      el("span", { class: "what" }, `${run.game} — ${run.status}`, el("small", { text: `${when(run.created_at)}; ${elos || "no ratings"}` })),
      el("span", { class: "acts" }, el("button", { type: "button", text: "Show", onclick: () => renderRun(run) }))));
  }
  if (!runs.length) list.append(el("li", { class: "muted", text: "No calibration yet." }));
}

// --- wiring -------------------------------------------------------------------------------------

$("#login-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const token = $("#token").value.trim();
  if (!token) return;
  sessionStorage.setItem(TOKEN_KEY, token);
  $("#login-error").textContent = "";
  login(token);
});
$("#logout").addEventListener("click", () => {
  sessionStorage.removeItem(TOKEN_KEY);
  state.ws?.close();
});
$("#audit-refresh").addEventListener("click", () => send({ type: "admin_list_audit", limit: 50 }));
$("#rooms-refresh").addEventListener("click", () => send({ type: "admin_list_rooms" }));
$("#stats-refresh").addEventListener("click", () => send({ type: "admin_get_stats" }));
$("#bots-refresh").addEventListener("click", () => send({ type: "admin_list_bots" }));
$("#bot-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  send({ type: "admin_create_bot", name: $("#bot-name").value.trim() },
    (err) => toast(`${err.message} (${err.code})`));
});
$("#cal-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const names = $("#cal-levels").value.split(",").map((s) => s.trim()).filter(Boolean);
  send({
    type: "admin_start_calibration", game: $("#cal-game").value,
    levels: names.length ? names : null, games_per_pair: Number($("#cal-games").value),
    pairs: $("#cal-pairs").value, time_scale: Number($("#cal-scale").value),
  }, (err) => { $("#cal-start").disabled = false; toast(`${err.message} (${err.code})`); });
});
setInterval(() => {
  if (!$("#desk").hidden) { send({ type: "admin_list_rooms" }); send({ type: "admin_get_stats" }); }
}, 5000);

connect();
