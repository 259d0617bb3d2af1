// The admin page: log in with an admin token, tune levels, read the audit log, watch rooms,
// workers and the cache, run calibrations. Speaks the admin messages of docs/PROTOCOL.md
// ("Admin") over the same /ws as the game page. The token stays in sessionStorage (this tab).
// Its words go through the page's catalogues (i18n.js, keys under admin.); what the server
// holds (level names and descriptions, players' and bots' names, chat lines) is shown as sent
// and marked data-verbatim.

import { setUpAdminChat } from "./admin_chat.js";
import { setUpLadderLevels } from "./admin_ladder.js";
import { errorText, has, lang, languageSwitch, t, tr } from "./i18n.js";

const PROTOCOL_VERSION = 1;
const TOKEN_KEY = "discus.admin.token";
const FIELDS = [
  // [field, kind]: how a level's knob is edited and sent.
  ["order", "int"], ["description", "text"], ["max_depth", "int?"], ["soft_time", "float"],
  ["hard_time", "float"], ["nodes", "int?"], ["candidates", "int"], ["margin", "int"],
  ["rails", "bool"], ["selective", "bool"],
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

/** The server's own text (a level's name, a player's), kept as sent in any language. */
function verbatim(text, tag = "span") {
  const node = el(tag, { text });
  node.dataset.verbatim = "";
  return node;
}

/** A game's name in the page's language (the player page's words for it). */
function gameName(game) {
  return has(`game.${game}`) ? t(`game.${game}`) : game;
}

/** A refusal for the toast: the words, and the code for the operator to look up. */
function refusal(err) {
  return `${errorText(err)} (${err.code})`;
}

function toast(text) {
  const t = $("#toast");
  t.textContent = text;
  t.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.hidden = true; }, 5000);
}

function when(seconds) {
  return seconds == null ? "—" : new Date(seconds * 1000).toLocaleString(lang);
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
  c.textContent = t(s === "online" ? "conn.online" : s === "offline" ? "conn.reconnecting" : "conn.connecting");
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
    showLogin(errorText(err));
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
    if (onError) onError(msg); else toast(refusal(msg));
  },
  admin_levels(msg) { state.levels = msg; renderLevels(); },
  admin_level_edited(msg) {
    const row = document.querySelector(`#levels tr[data-level="${msg.after.name}"]`);
    if (row) { row.classList.add("saved"); setTimeout(() => row.classList.remove("saved"), 1600); }
    toast(t("admin.saved", { level: msg.after.name, version: msg.version }));
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
    $("#cal-text").textContent = t("admin.cal_started", { game: gameName(msg.game), levels: msg.levels.join(", "), total: msg.total });
    $("#cal-start").disabled = true;
  },
  admin_calibration_progress(msg) {
    $("#cal-status").hidden = false;
    $("#cal-progress").max = msg.total;
    $("#cal-progress").value = msg.done;
    const outcome = msg.result === 0 ? t("admin.cal_draw") : t("admin.cal_won", { level: msg.result > 0 ? msg.first : msg.second });
    $("#cal-text").textContent = t("admin.cal_progress", { done: msg.done, total: msg.total, first: msg.first, second: msg.second, outcome });
  },
  admin_calibration_finished(msg) {
    $("#cal-start").disabled = false;
    $("#cal-text").textContent = t("admin.cal_finished", { s: msg.run.seconds.toFixed(1) });
    renderRun(msg.run);
    send({ type: "admin_list_calibrations", limit: 20 });
  },
  admin_calibration_failed(msg) {
    $("#cal-start").disabled = false;
    $("#cal-text").textContent = t("admin.cal_failed", { why: msg.message });
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
    $("#bots-note").textContent = t("admin.bots_revoked", { names, n: msg.closed });
    send({ type: "admin_list_bots" });
  },
};

const chat = setUpAdminChat($("#desk"), send, toast);
Object.assign(HANDLERS, chat.handlers);
const ladder = setUpLadderLevels($("#ladder-levels"), send, () => state.game);
Object.assign(HANDLERS, ladder.handlers);

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
  seg.replaceChildren(el("legend", { class: "sr-only", text: t("lobby.game") }));
  for (const g of state.games) {
    const input = el("input", { type: "radio", name: "levels-game", value: g, checked: g === state.game,
      onchange: () => { state.game = g; renderLevels(); } });
    seg.append(el("label", {}, input, el("span", { text: gameName(g) })));
  }
  const sel = $("#cal-game");
  sel.replaceChildren(...state.games.map((g) => el("option", { value: g, text: gameName(g) })));
}

function cellInput(field, kind, value) {
  const attrs = { name: field, "data-field": field, "aria-label": t(`admin.field.${field}`) };
  if (kind === "bool") return el("input", { ...attrs, type: "checkbox", checked: !!value });
  if (kind === "text") return el("input", { ...attrs, type: "text", value: value ?? "", "data-verbatim": true });
  const step = kind === "float" ? "0.01" : "1";
  return el("input", { ...attrs, type: "number", step, value: value ?? "", placeholder: kind === "int?" ? t("admin.no_limit") : "" });
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
  return version >= 0 ? t("admin.version", { version }) : t("admin.built_in");
}

function renderLevels() {
  const body = $("#levels tbody");
  body.replaceChildren();
  if (!state.levels) return;
  $("#levels-version").textContent = versionText(state.levels.version);
  const game = state.levels.games.find((g) => g.game === state.game);
  if (!game) return;
  ladder.show(game.levels.map((level) => level.name));
  for (const level of game.levels) {
    const row = el("tr", { "data-level": level.name });
    row.append(verbatim(level.name, "th"));
    row.lastChild.setAttribute("scope", "row");
    for (const [field, kind] of FIELDS) {
      row.append(el("td", { class: field === "description" ? "desc" : "" }, cellInput(field, kind, level[field])));
    }
    const problems = el("tr", { class: "problems", hidden: true }, el("td", { colspan: FIELDS.length + 2 }));
    const save = el("button", { type: "button", text: t("admin.save"), "data-save": level.name,
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
  if (!Object.keys(changes).length) { toast(t("admin.unchanged", { level: level.name })); return; }
  send({ type: "admin_edit_level", game, level: level.name, changes }, (err) => {
    const list = el("ul");
    const detail = err.detail || {};
    for (const [field, why] of Object.entries(detail)) {
      const input = row.querySelector(`[data-field="${field}"]`);
      if (input) { input.setAttribute("aria-invalid", "true"); input.title = why; }
      // The reason is the server's sentence (it names the field's bounds), as sent.
      list.append(el("li", {}, `${fieldName(field)}: `, verbatim(why)));
    }
    if (!list.children.length) list.append(el("li", { text: errorText(err) }));
    problems.firstChild.replaceChildren(el("strong", { text: t("admin.not_saved", { code: err.code }) }), list);
    problems.hidden = false;
  });
}

function fieldName(field) {
  return tr("admin.field.", field);
}

// --- audit, rooms, stats --------------------------------------------------------------------------

function renderAudit(entries) {
  const body = $("#audit tbody");
  body.replaceChildren();
  for (const e of entries) {
    // Each change: the field's name in words, its values (a description too) as stored.
    const changes = el("td");
    e.changed.forEach((f, i) => changes.append(i ? "; " : "", `${fieldName(f)}: `,
      verbatim(`${JSON.stringify(e.before?.[f])} → ${JSON.stringify(e.after?.[f])}`)));
    if (!e.changed.length) changes.textContent = tr("admin.action.", e.action);
    body.append(el("tr", {},
      el("td", { text: when(e.at) }),
      el("td", {}, verbatim(e.actor_name || e.actor)),
      el("td", {}, `${gameName(e.game)} `, verbatim(e.level)),
      changes));
  }
  if (!entries.length) body.append(el("tr", {}, el("td", { colspan: 4, class: "muted", text: t("admin.audit_empty") })));
}

function renderBots(bots) {
  const body = $("#bots tbody");
  body.replaceChildren();
  for (const b of bots) {
    const revoke = b.revoked_at === null
      ? el("button", { type: "button", class: "danger", text: t("admin.revoke"), "aria-label": t("admin.revoke_aria", { name: b.name }) })
      : el("span");
    if (b.revoked_at === null) {
      revoke.addEventListener("click", () => {
        if (confirm(t("admin.revoke_confirm", { name: b.name }))) {
          send({ type: "admin_revoke_bot", bot: b.token_id });
        }
      });
    }
    body.append(el("tr", { "data-bot": b.name },
      el("td", {}, verbatim(b.name)),
      el("td", { text: when(b.created_at) }),
      el("td", { text: b.last_used_at === null ? t("admin.bot_never") : when(b.last_used_at) }),
      el("td", { text: String(b.connections) }),
      el("td", { text: b.revoked_at === null ? t("admin.bot_live") : t("admin.bot_revoked", { when: when(b.revoked_at) }) }),
      el("td", {}, revoke)));
  }
  if (!bots.length) body.append(el("tr", {}, el("td", { colspan: 6, class: "muted", text: t("admin.bots_empty") })));
}

/** A seat's cell: the computer and its level, or the player's name as sent (and whether away). */
function seatCell(seat) {
  if (seat.kind === "ai") return el("td", {}, `${t("seat.computer")} (`, verbatim(seat.level), ")");
  if (seat.kind === "empty") return el("td", { text: "—" });
  const cell = el("td", {}, verbatim(seat.player?.name ?? "?"));
  if (!seat.connected) cell.append(` ${t("admin.away")}`);
  return cell;
}

function renderRooms(msg) {
  $("#online").textContent = t("admin.online", { n: msg.players_online });
  const body = $("#rooms tbody");
  body.replaceChildren();
  for (const r of msg.rooms) {
    body.append(el("tr", {},
      el("td", {}, el("a", { href: `/#${r.id}`, text: r.id, "data-verbatim": true })),
      el("td", { text: gameName(r.game) }),
      el("td", {}, tr("admin.room_status.", r.status), r.ai_thinking ? ` · ${t("admin.ai_thinking")}` : "",
        ...(r.node ? [` · ${t("admin.node")} `, verbatim(r.node)] : [])),
      el("td", { class: "num", text: String(r.ply) }),
      seatCell(r.seats[0]),
      seatCell(r.seats[1]),
      el("td", { class: "num", text: String(r.spectators) }),
      el("td", { text: when(r.last_move_at) })));
  }
  if (!msg.rooms.length) body.append(el("tr", {}, el("td", { colspan: 8, class: "muted", text: t("admin.rooms_empty") })));
}

function pct(x) { return x == null ? "—" : `${(100 * x).toFixed(1)} %`; }
function secs(x) { return x == null ? "—" : t("common.seconds", { s: x.toFixed(3) }); }

function renderStats(msg) {
  const dl = $("#stats");
  dl.replaceChildren();
  const add = (k, v) => dl.append(el("dt", { text: t(`admin.stats.${k}`) }), el("dd", { text: v }));
  const pool = msg.stats.pool;
  if (pool) {
    add("workers", t("admin.stats.workers_busy", { busy: pool.busy, workers: pool.workers, ready: pool.ready }));
    add("queue", String(pool.queued));
    add("ai_moves", t("admin.stats.ai_moves_of", { jobs: pool.jobs, fallbacks: pool.fallbacks, cached: pool.from_cache }));
    add("move_time", `${secs(pool.move_seconds_p50)} / ${secs(pool.move_seconds_p99)}`);
    add("restarts", String(pool.restarts));
  } else {
    add("workers", t("admin.stats.no_workers"));
  }
  for (const [label, cache] of [["cache_here", msg.stats.cache], ["cache_all", msg.stats.shared_cache]]) {
    if (!cache) continue;
    add(label, t("admin.stats.lookups", { rate: pct(cache.hit_rate), n: cache.lookups }));
    for (const tier of cache.tiers) {
      dl.append(el("dt", { text: `· ${tr("admin.tier.", tier.tier)}` }),
        el("dd", { text: t("admin.stats.tier_hits", { rate: pct(tier.hit_rate), n: tier.hits }) }));
    }
  }
  if (!msg.stats.cache && !msg.stats.shared_cache) add("cache", t("admin.stats.none"));
  add("rooms", String(msg.rooms));
  add("players", String(msg.players_online));
  add("levels_version", msg.levels_version >= 0 ? String(msg.levels_version) : t("admin.built_in"));
}

// --- calibration ------------------------------------------------------------------------------

function renderRun(run) {
  const box = $("#cal-result");
  const pairs = el("table", { class: "datatable", id: "cal-results" },
    el("thead", {}, el("tr", {}, ...["pair", "wins", "draws", "losses", "score"].map((h) => el("th", { text: t(`admin.run.${h}`) })))),
    el("tbody", {}, ...run.pairs.map((p) => {
      const games = p.wins + p.draws + p.losses;
      return el("tr", {},
        el("td", {}, verbatim(p.a), ` ${t("common.vs")} `, verbatim(p.b)),
        el("td", { class: "num", text: String(p.wins) }), el("td", { class: "num", text: String(p.draws) }),
        el("td", { class: "num", text: String(p.losses) }),
        el("td", { class: "num", text: games ? `${(100 * (p.wins + p.draws / 2) / games).toFixed(0)} %` : "—" }));
    })));
  const ratings = run.ratings || [];
  const top = Math.max(1, ...ratings.map((r) => r.elo ?? 0));
  const elo = el("table", { class: "datatable", id: "cal-elo" },
    el("thead", {}, el("tr", {}, ...["level", "elo", "error", "games", "score", "cpu", ""].map((h) => el("th", { text: h && t(`admin.run.${h}`) })))),
    el("tbody", {}, ...ratings.map((r) => el("tr", { "data-level": r.level },
      el("td", {}, verbatim(r.level)),
      el("td", { class: "num", text: r.elo == null ? "—" : r.elo.toFixed(0) }),
      el("td", { class: "num", text: r.error == null ? "—" : r.error.toFixed(0) }),
      el("td", { class: "num", text: String(r.games) }),
      el("td", { class: "num", text: r.score.toFixed(1) }),
      el("td", { class: "num", text: r.cpu_per_move == null ? "—" : t("admin.run.cpu_value", { ms: (1000 * r.cpu_per_move).toFixed(0) }) }),
      el("td", {}, el("span", { class: "elo-bar", style: `width:${Math.max(2, 160 * Math.max(0, r.elo ?? 0) / top)}px` }))))));
  box.replaceChildren(
    el("p", { class: "muted small" }, t("admin.run.summary", {
      game: gameName(run.game), n: run.games_per_pair, pairs: t(`admin.pairs.${run.pair_mode}`), seed: run.seed,
      when: when(run.created_at) }), " ", t("admin.run.elo_from"), " ", ratings[0] ? verbatim(ratings[0].level) : t("admin.run.weakest"),
      " ", t("admin.run.elo_zero")),
    el("div", { class: "row" }, el("div", { class: "grow scroll" }, pairs), el("div", { class: "grow scroll" }, elo)));
}

function renderRuns(runs) {
  const list = $("#cal-runs");
  list.replaceChildren();
  for (const run of runs) {
    const elos = (run.ratings || []).map((r) => `${r.level} ${r.elo == null ? "—" : r.elo.toFixed(0)}`).join(" · ");
    const small = el("small", {}, `${when(run.created_at)}; `, elos ? verbatim(elos) : t("admin.run.no_ratings"));
    list.append(el("li", {},
      el("span", { class: "what" }, `${gameName(run.game)} — ${tr("admin.run_status.", run.status)}`, small),
      el("span", { class: "acts" }, el("button", { type: "button", text: t("admin.run.show"), onclick: () => renderRun(run) }))));
  }
  if (!runs.length) list.append(el("li", { class: "muted", text: t("admin.run.none") }));
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
    (err) => toast(refusal(err)));
});
$("#cal-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const names = $("#cal-levels").value.split(",").map((s) => s.trim()).filter(Boolean);
  send({
    type: "admin_start_calibration", game: $("#cal-game").value,
    levels: names.length ? names : null, games_per_pair: Number($("#cal-games").value),
    pairs: $("#cal-pairs").value, time_scale: Number($("#cal-scale").value),
  }, (err) => { $("#cal-start").disabled = false; toast(refusal(err)); });
});
setInterval(() => {
  if (!$("#desk").hidden) { send({ type: "admin_list_rooms" }); send({ type: "admin_get_stats" }); }
}, 5000);

languageSwitch($("#lang"));
connect();
