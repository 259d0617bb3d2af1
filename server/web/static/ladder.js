// The engine ladder's page (#ladder/<game>): its rating list with error bars, a chart of the
// ratings over time, each entrant's head-to-head scores and latest games, and the games under
// way to watch. Everything is get_ladder's answer (docs/PROTOCOL.md, "The engine ladder"):
// the history the chart draws is the server's fit over the games in the order they finished.
import { t } from "./i18n.js";
import { button, el, svg } from "./dom.js";

const $ = (id) => document.getElementById(id);
const LINES = 8; // entrants drawn in the chart: the best rated ones




/** The colour of the k-th line of the chart, and of its entrant's swatch. */
function hue(k) { return `hsl(${(k * 137) % 360} 65% 48%)`; }

/**
 * Wire the ladder page to ``client`` (net.js). ``titleOf(game)`` names a game, ``watch(room)``
 * opens a room as a spectator, ``replay(gameId)`` a finished game. Returns what app.js calls.
 */
export function setUpLadder(client, { titleOf, watch, replay }) {
  let shown = null;    // the game whose ladder is on screen
  let ladder = null;   // its last ``ladder`` message
  let chosen = null;   // the entrant id whose games are shown

  const ask = () => { if (shown) client.request({ type: "get_ladder", game: shown }); };
  $("l-refresh").addEventListener("click", ask);

  /** An entrant as the page names it: a bot by its name, a level as the computer's. */
  const nameOf = (id) => {
    const e = ladder.entrants.find((x) => x.id === id);
    if (!e) return id;
    return e.level !== null && e.level !== undefined ? t("seat.computer_level", { level: e.level }) : e.name;
  };
  function entrantName(e) {
    const text = e.level !== null && e.level !== undefined ? t("seat.computer_level", { level: e.level })
      : t("seat.bot", { name: e.name });
    const span = el("span", text, "who");
    span.dataset.verbatim = "";
    return span;
  }

  /** One standard error either way around the rating, on the scale of the whole list. */
  function errorBar(e, low, high) {
    const W = 140, H = 14;
    const x = (v) => 4 + ((v - low) * (W - 8)) / Math.max(1, high - low);
    const bar = svg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "error-bar", role: "img" });
    bar.setAttribute("aria-label", t("ladder.error_aria", { rating: e.rating, error: e.error }));
    bar.append(svg("line", { x1: x(e.rating - e.error), x2: x(e.rating + e.error), y1: H / 2, y2: H / 2, class: "span" }));
    bar.append(svg("circle", { cx: x(e.rating), cy: H / 2, r: 3.5, class: "dot" }));
    return bar;
  }

  function renderList() {
    const rated = ladder.entrants.filter((e) => e.rating !== null);
    const low = Math.min(...rated.map((e) => e.rating - (e.error ?? 0)));
    const high = Math.max(...rated.map((e) => e.rating + (e.error ?? 0)));
    const head = el("tr");
    for (const key of ["tournaments.rank", "ladder.entrant", "tournaments.rating", "ladder.error", "tournaments.games", "tournaments.score"]) {
      head.append(el("th", t(key)));
    }
    let rank = 0;
    const rows = ladder.entrants.map((e) => {
      const tr = el("tr");
      tr.dataset.entrant = e.id;
      if (!e.active) tr.classList.add("withdrawn");
      if (e.id === chosen) tr.classList.add("you");
      const name = el("td");
      const shown = entrantName(e);
      // Its accessible name holds the words it shows ("Computer (beginner)"), as speech
      // input needs (WCAG 2.5.3).
      const pick = button("", () => { chosen = chosen === e.id ? null : e.id; render(); }, "link",
        t("ladder.games_of", { name: shown.textContent }));
      pick.append(shown);
      name.append(pick);
      if (e.engine) { // the program the bot said plays for it, as the program names itself
        const engine = el("span", ` ${e.engine.version ? `${e.engine.name} ${e.engine.version}` : e.engine.name}`, "tag muted engine");
        engine.dataset.verbatim = "";
        name.append(engine);
      }
      if (e.anchored) name.append(el("span", ` ${t("ladder.anchored")}`, "tag muted"));
      if (e.playing) name.append(el("span", ` ${t("tournaments.playing")}`, "tag"));
      if (!e.active) name.append(el("span", ` ${t("ladder.left")}`, "tag muted"));
      // An unrated entrant: what it waits for, so a bot's author knows the ladder works.
      if (e.waits_for) name.append(el("small", ` ${t(e.waits_for === "level" ? "ladder.waits_level" : "ladder.waits_game")}`, "muted waits"));
      const error = el("td", e.error === null ? "" : `±${e.error} `, "num error");
      if (e.rating !== null && e.error !== null) error.append(errorBar(e, low, high));
      tr.append(el("td", e.rating === null ? "–" : ++rank, "rank"), name,
        el("td", e.rating === null ? t("ladder.unrated") : e.rating, "num rating"), error,
        el("td", e.games, "num"), el("td", e.score, "num"));
      return tr;
    });
    $("l-list").replaceChildren(head, ...rows);
    if (!ladder.entrants.length) $("l-list").replaceChildren(el("caption", t("ladder.empty")));
  }

  /** The ratings after each point of ``history`` (x: games played), one line per entrant. */
  function renderChart() {
    const points = ladder.history || [];
    const box = $("l-chart");
    if (points.length < 2) {
      box.replaceChildren(el("p", t("ladder.chart_empty"), "muted"));
      return;
    }
    const ids = ladder.entrants.filter((e) => e.rating !== null).slice(0, LINES).map((e) => e.id);
    const W = 640, H = 220, PAD = 28;
    const values = points.flatMap((p) => ids.map((id) => p.ratings[id]).filter((v) => v !== undefined));
    const bottom = Math.min(...values), top = Math.max(...values, bottom + 1);
    const most = points.at(-1).played, least = points[0].played;
    const x = (n) => PAD + ((n - least) * (W - 2 * PAD)) / Math.max(1, most - least);
    const y = (v) => H - PAD - ((v - bottom) * (H - 2 * PAD)) / (top - bottom);
    const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "ladder-chart", role: "img" });
    chart.setAttribute("aria-label", t("ladder.chart_aria", { n: most }));
    ids.forEach((id, k) => {
      const line = points.filter((p) => p.ratings[id] !== undefined);
      if (!line.length) return;
      const poly = svg("polyline", {
        points: line.map((p) => `${x(p.played).toFixed(1)},${y(p.ratings[id]).toFixed(1)}`).join(" "),
        class: "line", stroke: hue(k),
      });
      poly.dataset.entrant = id;
      const title = svg("title", {});
      title.textContent = `${nameOf(id)}: ${line.at(-1).ratings[id]}`;
      poly.append(title);
      chart.append(poly);
    });
    for (const v of [top, bottom]) {
      const label = svg("text", { x: PAD - 4, y: y(v) + 3, class: "label" });
      label.textContent = String(Math.round(v));
      chart.append(label);
    }
    for (const n of [least, most]) {
      const label = svg("text", { x: x(n), y: H - 8, class: "label x" });
      label.textContent = String(n);
      chart.append(label);
    }
    const legend = el("ul", null, "legend");
    ids.forEach((id, k) => {
      const li = el("li");
      const swatch = el("span", null, "swatch");
      swatch.style.background = hue(k);
      const name = el("span", nameOf(id));
      name.dataset.verbatim = "";
      li.append(swatch, name);
      legend.append(li);
    });
    box.replaceChildren(chart, legend, el("p", t("ladder.chart_note"), "muted small"));
  }

  function renderEntrant() {
    const e = chosen && ladder.entrants.find((x) => x.id === chosen);
    $("l-entrant").hidden = !e;
    if (!e) return;
    $("h-l-entrant").replaceChildren(t("ladder.games_of_head"), " ", entrantName(e));
    const head = el("tr");
    for (const key of ["ladder.opponent", "standings.won", "standings.drawn", "standings.lost", "tournaments.score"]) head.append(el("th", t(key)));
    const rows = ladder.pairs.filter((p) => p.a === e.id || p.b === e.id).map((p) => {
      const mineA = p.a === e.id;
      const [w, d, l] = mineA ? [p.wins, p.draws, p.losses] : [p.losses, p.draws, p.wins];
      const other = ladder.entrants.find((x) => x.id === (mineA ? p.b : p.a));
      const tr = el("tr");
      tr.dataset.opponent = mineA ? p.b : p.a;
      const name = el("td");
      name.append(other ? entrantName(other) : el("span", mineA ? p.b : p.a));
      tr.append(name, el("td", w, "num"), el("td", d, "num"), el("td", l, "num"),
        el("td", `${w + d / 2}/${w + d + l}`, "num"));
      return tr;
    });
    $("l-h2h").replaceChildren(head, ...rows);
    const games = ladder.results.filter((g) => g.first === e.id || g.second === e.id);
    $("l-results").replaceChildren(...games.map((g) => {
      const li = el("li");
      const first = g.first === e.id;
      const score = first ? g.result : 1 - g.result;
      const what = el("div", null, "what");
      const line = el("strong", `${t("common.vs")} `);
      const other = el("span", nameOf(first ? g.second : g.first));
      other.dataset.verbatim = "";
      line.append(other);
      const outcome = t(score === 1 ? "recent.won" : score === 0 ? "recent.lost" : "recent.draw");
      what.append(line, el("small", `${outcome} · ${t(first ? "ladder.moved_first" : "ladder.moved_second")}`));
      li.dataset.result = String(score);
      li.append(what);
      if (g.game_id) {
        const acts = el("span", null, "acts");
        acts.append(button(t("history.replay"), () => replay(g.game_id), "", t("history.replay_aria", { id: g.game_id })));
        li.append(acts);
      }
      return li;
    }));
    if (!games.length) $("l-results").append(el("li", t("ladder.no_results"), "muted"));
  }

  function renderGames() {
    const list = $("l-games");
    list.replaceChildren(...ladder.games.map((g) => {
      const li = el("li");
      li.dataset.room = g.room;
      const what = el("div", null, "what");
      const line = el("strong", `${nameOf(g.first)} ${t("common.vs")} ${nameOf(g.second)}`);
      line.dataset.verbatim = "";
      what.append(line);
      if (g.opening) what.append(el("small", t("ladder.opening", { line: g.opening })));
      const acts = el("span", null, "acts");
      acts.append(button(t("rooms.watch"), () => watch(g.room), "", t("rooms.watch_aria", { id: g.room })));
      li.append(what, acts);
      return li;
    }));
    if (!ladder.games.length) list.append(el("li", t("ladder.nothing_under_way"), "muted"));
  }

  function render() {
    $("l-title").textContent = t("ladder.title", { game: titleOf(shown ?? "") });
    document.title = `${t("ladder.title", { game: titleOf(shown ?? "") })} · Discus`;
    if (!ladder || ladder.game !== shown) return;
    $("l-what").textContent = t("ladder.what", { clock: ladder.time_control, s: ladder.pace_seconds, n: ladder.played });
    renderList();
    renderChart();
    renderEntrant();
    renderGames();
  }

  return {
    /** Show ``game``'s ladder (app.js calls this when the link names it) and ask for it. */
    show(game) {
      if (shown !== game) { shown = game; chosen = null; ask(); }
    },
    hide() { shown = null; },
    onWelcome() { ask(); },
    onLadder(msg) { if (msg.game === shown) { ladder = msg; render(); } },
    render,
  };
}
