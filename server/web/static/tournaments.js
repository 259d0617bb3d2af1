// Tournaments in the page: the lobby's list and its form to make one, and a tournament's own
// page (#tournament/<id>): when it starts or ends, its standings, the buttons to join, pause or
// withdraw, its games under way to watch, the podium at the end; for a Swiss or round-robin
// its round, the boards, tie-breaks and the crosstable with its CSV.
//
// The standings are only what the server sends: the answer to each tournament message, then
// its pushes to the players (docs/PROTOCOL.md, "Tournaments"). The page never asks again on a
// timer; only the countdown ticks here, from the times the server gave.
import { errorText, t } from "./i18n.js";
import { button, el } from "./dom.js";
import { clockLabel } from "./challenges.js";

const $ = (id) => document.getElementById(id);
const MADE_KEY = "discus.tournaments.made";
const TOP = 3;



/** A player's name as the page shows one (a bot says so): their own data, never translated. */
function who(player) {
  const span = el("span", player.bot ? t("seat.bot", { name: player.name }) : player.name, "who");
  span.dataset.verbatim = "";
  span.dataset.player = player.id;
  return span;
}

/** 1:05:09, 4:59, 0:07: time left, from whole seconds. */
export function fmtLeft(seconds) {
  const s = Math.max(0, Math.ceil(seconds));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = String(s % 60).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
}

/** A half point as people write it: 2½, ½, 3. */
function points(x) {
  const whole = Math.floor(x);
  const half = x - whole >= 0.5;
  return half ? `${whole || ""}½` : String(whole);
}

/** The CSV the server sends as rows of cells (RFC 4180: a quoted cell may hold commas, and
 * "" is a quote in it; a bot's name may have both). */
function parseCsv(text) {
  const rows = [];
  let row = [], cell = "", quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted && c === '"' && text[i + 1] === '"') { cell += '"'; i++; }
    else if (c === '"') quoted = !quoted;
    else if (quoted || (c !== "," && c !== "\n" && c !== "\r")) cell += c;
    else if (c === ",") { row.push(cell); cell = ""; }
    else if (c === "\n") { rows.push([...row, cell]); row = []; cell = ""; }
  }
  if (cell || row.length) rows.push([...row, cell]);
  return rows;
}

/**
 * Wire tournaments to ``client`` (net.js). ``titleOf(game)`` names a game, ``me()`` is this
 * player's PlayerView, ``controls()`` the time controls of welcome, ``watch(room)`` opens a
 * room as a spectator, ``toast(text)`` says something briefly, ``changed()`` asks app.js to
 * draw again. Returns what app.js calls on messages and when it draws.
 */
export function setUpTournaments(client, { titleOf, me, controls, games, watch, toast, changed }) {
  const known = new Map(); // id -> the last tournament or round_tournament message about it
  let listed = [];         // TournamentView[] of the list's pages asked for since its first
  let nextOffset = null;   // where the list's next page begins (null: no more)
  let asked = [];          // the offsets of the pages asked for and not answered yet, in order

  /** Ask for the list's page at ``offset``: 0 starts the list again, a later one adds to it. */
  function askList(offset = 0) {
    asked.push(offset);
    client.request(offset ? { type: "list_tournaments", offset } : { type: "list_tournaments" });
  }
  let shown = null;        // the id whose page is on screen, or null
  let creating = null;     // the name of the tournament asked for: its answer opens its page
  let createRef = null;    // the id of that request: an error naming it is said beside the form
  let missing = null;      // an id the server said it has no tournament for
  let listedAt = 0;        // performance.now() when the list came (its countdowns count from it)

  const made = () => new Set(JSON.parse(localStorage.getItem(MADE_KEY) || "[]"));
  const remember = (id) => {
    const ids = [...made(), id].slice(-50);
    localStorage.setItem(MADE_KEY, JSON.stringify(ids));
  };

  // --- the lobby: list and form --------------------------------------------------------------

  function kindName(kind) { return t(`kind.${kind}`); }

  function statusText(v, now = Date.now() / 1000) {
    if (v.status === "finished") return t("tournaments.finished");
    if (v.status === "upcoming") return t("tournaments.starts_in_time", { left: fmtLeft(v.starts_at - now) });
    if (v.kind === "arena") return t("tournaments.ends_in_time", { left: fmtLeft(v.ends_at - now) });
    return t("tournaments.running");
  }

  function describe(v) {
    const control = controls().find((c) => c.name === v.time_control);
    const parts = [kindName(v.kind), titleOf(v.game), control ? clockLabel(control) : v.time_control];
    if (v.official) parts.unshift(t("tournaments.official"));
    if (v.rounds) parts.push(t("tournaments.n_rounds", { n: v.rounds }));
    parts.push(t("tournaments.n_players", { n: v.players }));
    if (v.rated === false) parts.push(t("tournaments.casual")); // rated is the default: unsaid
    return parts.join(" · ");
  }

  /** A row of the list for ``v``: its name and terms, a button that opens it. */
  function listRow(v) {
    const li = el("li");
    li.dataset.tournament = v.id;
    const what = el("div", null, "what");
    const name = el("strong", v.name);
    name.dataset.verbatim = "";
    what.append(name, el("small", "", "terms"));
    const acts = el("span", null, "acts");
    acts.append(button(t("tournaments.open"), () => open(v.id), "", t("tournaments.open_aria", { name: v.name })));
    li.append(what, acts);
    return li;
  }

  /** Bring ``li`` up to ``v``, writing only what changed (a row is never rebuilt). */
  function patchRow(li, v) {
    const set = (node, text) => { if (node.textContent !== text) node.textContent = text; };
    li.dataset.status = v.status;
    set(li.querySelector("strong"), v.name);
    set(li.querySelector(".terms"), `${describe(v)} · ${statusText(v)}`);
    li.querySelector("button").classList.toggle("primary", v.status !== "finished");
  }

  /** Draw the list in place: rows are kept by the tournament's id and patched, new ones added
   * and gone ones removed, so an update every second never rebuilds what a pointer is on. */
  function renderList() {
    const list = $("tournament-list");
    if (!listed.length) {
      if (list.children.length !== 1 || !list.firstElementChild.classList.contains("muted")) {
        list.replaceChildren(el("li", t("tournaments.none"), "muted"));
      }
      return;
    }
    const rows = new Map();
    for (const li of list.children) if (li.dataset.tournament) rows.set(li.dataset.tournament, li);
    const wanted = listed.map((v) => {
      const li = rows.get(v.id) ?? listRow(v);
      patchRow(li, v);
      return li;
    });
    const keep = new Set(wanted);
    for (const li of [...list.children]) if (!keep.has(li)) li.remove();
    wanted.forEach((li, k) => { if (list.children[k] !== li) list.insertBefore(li, list.children[k] ?? null); });
  }

  function fillForm() {
    const sel = $("tournament-clock");
    const keep = sel.value;
    sel.replaceChildren(...controls().map((c) => Object.assign(document.createElement("option"), {
      value: c.name, textContent: clockLabel(c),
    })));
    if (keep) sel.value = keep;
    else if (controls().some((c) => c.name === "3+2")) sel.value = "3+2";
    const signedIn = client.signedIn;
    $("tournament-form").hidden = !signedIn;
    $("tournament-guest-note").hidden = signedIn;
    const links = $("ladder-links");
    links.replaceChildren(...games().map((g) => {
      const a = el("a", t("ladder.open", { game: titleOf(g.name) }), "button");
      a.href = `#ladder/${g.name}`;
      a.dataset.ladder = g.name;
      return a;
    }));
  }

  function kindChanged() {
    const kind = new FormData($("tournament-form")).get("kind");
    $("tournament-minutes-field").hidden = kind !== "arena";
    $("tournament-minutes").required = kind === "arena";
    $("tournament-rounds-field").hidden = kind !== "swiss";
    $("tournament-private-row").hidden = kind !== "arena";
  }

  /** Say beside the form why the server refused it (empty ``text``: nothing to say). */
  function refuse(text) {
    $("tournament-refusal").textContent = text;
    $("tournament-refusal").hidden = !text;
  }

  $("tournament-form").addEventListener("change", kindChanged);
  $("tournament-form").addEventListener("input", () => refuse(""));
  $("tournament-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    refuse("");
    const f = new FormData($("tournament-form"));
    const kind = f.get("kind");
    const common = {
      game: f.get("game"), name: String(f.get("name")).trim(), time_control: f.get("time_control"),
      starts_in: Number(f.get("starts_in")), rated: f.get("rated") === "on",
    };
    creating = common.name;
    if (kind === "arena") {
      createRef = client.request({ type: "create_tournament", ...common, minutes: Number(f.get("minutes")),
        private: f.get("private") === "on" });
    } else {
      const msg = { type: "create_round_tournament", kind, ...common };
      if (kind === "swiss") msg.rounds = Number(f.get("rounds"));
      createRef = client.request(msg);
    }
  });
  /** Why a creation was refused, in the page's language; a bad field is named by its label. */
  function refusalText(msg) {
    const why = errorText(msg);
    const field = msg.code === "bad_message" && msg.detail?.field;
    const input = field && $("tournament-form").elements.namedItem(field);
    const label = input instanceof Element ? input.closest("label")?.querySelector("span")?.textContent : null;
    return label ? t("tournaments.refused_field", { field: label, why }) : why;
  }
  $("tournaments-refresh").addEventListener("click", () => askList());
  $("tournaments-more").addEventListener("click", () => { if (nextOffset !== null) askList(nextOffset); });

  // --- a tournament's page -------------------------------------------------------------------

  function open(id) {
    const hash = `#tournament/${id}`;
    if (location.hash !== hash) location.hash = hash; // app.js routes here again on hashchange
  }

  let watching = null;      // the tournament this connection asked for: the server pushes it here

  /** Show ``id``'s page (app.js calls this when the link names it). Its state is asked for
   * once unless this player is in it: the server then pushes every change of it to this
   * connection (as to its players) until another is asked for or the page is left. */
  function show(id) {
    if (shown !== id && (!known.has(id) || mine(known.get(id)) === null)) {
      // Not greeted yet: the welcome asks (once, so the server is not asked twice).
      if (client.ready) client.request({ type: "get_tournament", tournament: id });
      watching = id;
    }
    shown = id;
  }

  /** The page is left: its pushes are no longer wanted. */
  function hide() {
    shown = null;
    if (watching !== null) {
      watching = null;
      client.request({ type: "unwatch_tournament" });
    }
  }

  /** This player's row of a message, as the server sent it (an arena) or found by id. */
  function mine(msg) {
    if (!msg) return null;
    if (msg.type === "tournament") return msg.you;
    const id = me()?.id;
    return msg.standings.find((r) => r.player.id === id) || null;
  }

  function onMessage(msg) {
    const id = msg.tournament.id;
    const fresh = !known.has(id);
    // A player who also watches gets the watchers' frame (no own row) as well as its own.
    const before = known.get(id);
    if (msg.type === "tournament" && msg.you === null && before?.you
        && before.you.player.id === me()?.id) msg = { ...msg, you: before.you };
    known.set(id, msg);
    const i = listed.findIndex((v) => v.id === id);
    if (i >= 0) listed[i] = msg.tournament;
    if (creating !== null && fresh && msg.tournament.name === creating) {
      creating = createRef = null;
      remember(id);
      $("tournament-create").open = false;
      $("tournament-name").value = "";
      open(id);
    }
    changed();
  }

  let joined = null;       // the tournament this page last asked to join (until paused or withdrawn)

  function act(type) {
    if (!shown) return;
    if (type === "join_tournament") joined = shown;
    else if (type !== "start_tournament" && joined === shown) joined = null;
    client.request({ type, tournament: shown });
  }
  $("t-join").addEventListener("click", () => act("join_tournament"));
  $("t-pause").addEventListener("click", () => act("pause_tournament"));
  $("t-withdraw").addEventListener("click", () => act("withdraw_tournament"));
  $("t-start").addEventListener("click", () => act("start_tournament"));
  $("t-copy").addEventListener("click", async () => {
    const link = `${location.origin}${location.pathname}#tournament/${shown}`;
    try { await navigator.clipboard.writeText(link); toast(t("common.copied")); } catch { toast(link); }
  });

  function headRow(keys) {
    const tr = el("tr");
    for (const key of keys) tr.append(el("th", t(key)));
    return tr;
  }

  function arenaRow(r, you) {
    const tr = el("tr");
    tr.dataset.player = r.player.id;
    if (you) tr.classList.add("you");
    if (r.status !== "active") tr.classList.add(r.status);
    const name = el("td");
    name.append(who(r.player));
    if (r.on_fire) {
      const fire = el("span", " 🔥", "fire");
      fire.title = t("tournaments.on_fire");
      fire.setAttribute("aria-label", t("tournaments.on_fire"));
      name.append(fire);
    }
    if (r.playing) name.append(el("span", ` ${t("tournaments.playing")}`, "tag"));
    // Why a free player waits: nobody else free, or only the one just met (then for how long).
    if (r.waiting === "rematch") name.append(el("small", ` ${t("tournaments.waiting_rematch", { s: Math.ceil(r.rematch_in ?? 0) })}`, "muted waiting"));
    else if (r.waiting === "opponent") name.append(el("small", ` ${t("tournaments.waiting_opponent")}`, "muted waiting"));
    if (r.status !== "active") name.append(el("span", ` ${t(`tournaments.status_${r.status}`)}`, "tag muted"));
    const sheet = el("td", r.sheet.join(" "), "sheet");
    tr.append(el("td", r.rank, "rank"), name, el("td", r.rating, "num"), sheet, el("td", r.games, "num"),
      el("td", r.score, "num score"));
    return tr;
  }

  function roundRow(r) {
    const tr = el("tr");
    tr.dataset.player = r.player.id;
    if (r.player.id === me()?.id) tr.classList.add("you");
    if (r.withdrawn) tr.classList.add("withdrawn");
    const name = el("td");
    name.append(who(r.player));
    if (r.withdrawn) name.append(el("span", ` ${t("tournaments.status_withdrawn")}`, "tag muted"));
    tr.append(el("td", r.rank, "rank"), name, el("td", r.rating, "num"), el("td", points(r.score), "num score"),
      el("td", points(r.buchholz), "num"), el("td", points(r.sonneborn_berger), "num"));
    return tr;
  }

  function renderStandings(msg, you) {
    const table = $("t-standings");
    if (msg.type === "tournament") {
      const rows = [headRow(["tournaments.rank", "tournaments.player", "tournaments.rating", "tournaments.sheet",
        "tournaments.games", "tournaments.score"])];
      rows.push(...msg.standings.map((r) => arenaRow(r, you && r.player.id === you.player.id)));
      // Your own row under the top ones when you are further down.
      if (you && !msg.standings.some((r) => r.player.id === you.player.id)) {
        rows.push(Object.assign(el("tr", null, "gap"), { innerHTML: "<td colspan=6>…</td>" }), arenaRow(you, true));
      }
      table.replaceChildren(...rows);
    } else {
      table.replaceChildren(headRow(["tournaments.rank", "tournaments.player", "tournaments.rating",
        "tournaments.score", "tournaments.buchholz", "tournaments.sonneborn_berger"]), ...msg.standings.map(roundRow));
    }
    if (!msg.standings.length) table.replaceChildren(Object.assign(el("caption", t("tournaments.nobody")), {}));
  }

  function renderPodium(msg) {
    const over = msg.tournament.status === "finished" && msg.standings.length > 0;
    $("t-podium").hidden = !over;
    if (!over) return;
    $("t-podium-list").replaceChildren(...msg.standings.slice(0, TOP).map((r) => {
      const li = el("li", null, `place p${r.rank}`);
      li.dataset.player = r.player.id;
      li.append(el("span", t(`tournaments.place_${Math.min(r.rank, TOP)}`), "medal"), who(r.player),
        el("span", t("tournaments.points", { n: msg.type === "tournament" ? r.score : points(r.score) }), "muted"));
      return li;
    }));
  }

  function gameItem(first, second, room, extra = "") {
    const li = el("li");
    if (room) li.dataset.room = room;
    const what = el("div", null, "what");
    const line = el("strong");
    line.append(who(first), ` ${t("common.vs")} `, second ? who(second) : t("tournaments.bye"));
    what.append(line);
    if (extra) what.append(el("small", extra));
    li.append(what);
    if (room) {
      const acts = el("span", null, "acts");
      acts.append(button(t("rooms.watch"), () => watch(room), "", t("rooms.watch_aria", { id: room })));
      li.append(acts);
    }
    return li;
  }

  function resultText(result) {
    if (result === null || result === undefined) return t("tournaments.in_play");
    return result === 1 ? "1–0" : result === 0 ? "0–1" : "½–½";
  }

  function renderGames(msg) {
    const list = $("t-games");
    if (msg.type === "tournament") {
      $("h-t-games").textContent = t("tournaments.games_now");
      list.replaceChildren(...msg.games.map((g) => gameItem(g.first, g.second, g.room)));
    } else {
      $("h-t-games").textContent = msg.round ? t("tournaments.round_boards", { n: msg.round }) : t("tournaments.boards");
      list.replaceChildren(...msg.boards.map((b) =>
        gameItem(b.first, b.second, b.result === null ? b.room : null, b.second ? resultText(b.result) : "")));
    }
    if (!list.children.length) list.append(el("li", t("tournaments.no_games"), "muted"));
  }

  function renderCrosstable(msg) {
    const over = msg.type === "round_tournament" && msg.tournament.status === "finished" && msg.crosstable;
    $("t-cross").hidden = !over;
    if (!over) return;
    const [head, ...rows] = parseCsv(msg.crosstable);
    // Names as the standings have them: the CSV's are guarded for spreadsheets (a name
    // beginning with = + - @ gets a leading '), which the page must not show.
    const names = new Map(msg.standings.map((r) => [String(r.rank), r.player.name]));
    const rounds = head.length - 6; // rank, name, rating, the rounds, score, buchholz, sonneborn_berger
    const th = el("tr");
    th.append(el("th", t("tournaments.rank")), el("th", t("tournaments.player")), el("th", t("tournaments.rating")));
    for (let k = 1; k <= rounds; k++) th.append(el("th", t("tournaments.round_short", { n: k })));
    th.append(el("th", t("tournaments.score")), el("th", t("tournaments.buchholz")), el("th", t("tournaments.sonneborn_berger")));
    $("t-crosstable").replaceChildren(th, ...rows.map((cells) => {
      const tr = el("tr");
      cells.forEach((c, k) => {
        const td = el("td", k === 1 ? names.get(cells[0]) ?? c : c, k === 1 ? "" : "num");
        if (k === 1) td.dataset.verbatim = "";
        tr.append(td);
      });
      return tr;
    }));
    const link = $("t-csv");
    if (link.dataset.csv !== msg.crosstable) {
      if (link.href.startsWith("blob:")) URL.revokeObjectURL(link.href);
      link.href = URL.createObjectURL(new Blob([msg.crosstable], { type: "text/csv" }));
      link.dataset.csv = msg.crosstable;
    }
    link.download = `${msg.tournament.name.replace(/[^\w-]+/g, "-")}-crosstable.csv`;
  }

  function renderActions(msg, you) {
    const v = msg.tournament;
    const over = v.status === "finished" || (v.kind === "arena" && v.ends_at <= Date.now() / 1000);
    const arena = v.kind === "arena";
    const entered = you !== null && (arena ? you.status !== "withdrawn" : !you.withdrawn);
    const active = you !== null && (arena ? you.status === "active" : !you.withdrawn);
    // Guests watch: where a Join button would be, the page says how to sign up instead.
    const joinable = !over && !(arena ? active : entered || v.status !== "upcoming");
    $("t-join").hidden = !joinable || !client.signedIn;
    $("t-guest-join").hidden = !joinable || client.signedIn;
    $("t-join").textContent = t(you && (arena ? you.status !== "active" : you.withdrawn) ? "tournaments.rejoin" : "tournaments.join");
    $("t-pause").hidden = over || !arena || !active;
    $("t-withdraw").hidden = over || !entered;
    $("t-start").hidden = arena || v.status !== "upcoming" || !made().has(v.id);
    $("t-copy").hidden = over;
    let line = "";
    if (you && arena) {
      line = t("tournaments.you_arena", { rank: you.rank, score: you.score, n: you.games });
      if (you.status_reason === "no_show") {
        line += ` · ${t(`tournaments.no_show_${you.status}`, { n: you.no_shows })}`;
      } else if (you.status !== "active") line += ` · ${t(`tournaments.status_${you.status}`)}`;
    } else if (you) {
      line = t("tournaments.you_round", { rank: you.rank, score: points(you.score), n: you.score });
    }
    $("t-you").textContent = line;
  }

  function countdown() {
    const msg = shown && known.get(shown);
    if (!msg) return;
    const v = msg.tournament;
    let text = statusText(v);
    if (v.kind !== "arena" && v.status === "running") text = t("tournaments.round_of", { n: msg.round, of: v.rounds ?? "?" });
    if (v.kind === "arena" && v.status === "running" && v.ends_at <= Date.now() / 1000) text = t("tournaments.last_games");
    $("t-countdown").textContent = text;
    $("t-countdown").dataset.status = v.status;
  }

  /** Draw the page of the tournament on screen. */
  function render() {
    const msg = shown && known.get(shown);
    $("t-name").textContent = msg ? msg.tournament.name : missing === shown ? t("error.unknown_tournament") : "…";
    $("t-actions").hidden = !msg;
    if (!msg) {
      for (const id of ["t-podium", "t-cross"]) $(id).hidden = true;
      for (const id of ["t-what", "t-countdown", "t-you"]) $(id).textContent = "";
      $("t-standings").replaceChildren();
      $("t-games").replaceChildren();
      return;
    }
    document.title = `${msg.tournament.name} · Discus`;
    $("t-what").textContent = describe(msg.tournament);
    const you = mine(msg);
    $("tournament").dataset.status = msg.tournament.status;
    $("tournament").dataset.kind = msg.tournament.kind;
    countdown();
    renderActions(msg, you);
    renderPodium(msg);
    renderStandings(msg, you);
    renderGames(msg);
    renderCrosstable(msg);
    // One line per finished game (Othello GGF; Connect Four players, result, columns).
    $("t-games-file").href = `/tournaments/${encodeURIComponent(msg.tournament.id)}/games.txt`;
  }

  setInterval(() => {
    if (shown && !$("tournament").hidden) countdown();
    if (!$("lobby").hidden && listed.length && performance.now() - listedAt > 900) renderList();
  }, 1000);

  return {
    onWelcome() {
      fillForm();
      kindChanged();
      asked = []; // answers to asks before a reconnection never come
      askList();
      if (shown) {
        client.request({ type: "get_tournament", tournament: shown });
        watching = shown;
      }
    },
    onList(msg) {
      const offset = asked.shift() ?? 0;
      listed = offset ? [...listed, ...msg.tournaments.filter((v) => !listed.some((w) => w.id === v.id))]
        : msg.tournaments;
      nextOffset = msg.next_offset ?? null;
      $("tournaments-more").hidden = nextOffset === null;
      listedAt = performance.now();
      renderList();
    },
    onTournament: onMessage,
    /** Returns true when the error was a refused creation, said beside the form. */
    onError(msg) {
      if (msg.code === "unknown_tournament" && shown && !known.has(shown)) { missing = shown; changed(); }
      if (createRef === null || msg.ref !== createRef) return false;
      creating = createRef = null;
      refuse(refusalText(msg));
      return true;
    },
    /** Ask for the list again (the lobby comes on screen). */
    refreshList() { askList(); },
    show,
    hide,
    render,
    /** The tournament this player plays in now (entered and not paused or withdrawn, not
     * over), so a room it is paired into is shown at once; null if none. */
    playingIn() {
      // Just joined: the pairing's room may come before the answer that says so.
      const asked = joined && known.get(joined);
      if (asked && asked.tournament.status !== "finished") return joined;
      for (const [id, msg] of known) {
        const v = msg.tournament;
        const you = mine(msg);
        if (v.status === "finished" || !you) continue;
        if (msg.type === "tournament" ? you.status === "active" : !you.withdrawn) return id;
      }
      return null;
    },
  };
}
