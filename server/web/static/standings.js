// Ratings in the page: the rating change at game over, and a dialog that shows a game's
// leaderboard or a player's profile (ratings, a small SVG rating chart, scores against the
// AI levels, recent games to replay). app.js hands it the messages; it asks net.js for more.
import { t } from "./i18n.js";
import { el, svg } from "./dom.js";

const $ = (id) => document.getElementById(id);



/** A rating as people read it: whole points, "?" while provisional (as lichess marks it). */
export function ratingText(r) { return `${Math.round(r.rating)}${r.provisional ? "?" : ""}`; }

function plural(n, what) { return t(`count.${what}`, { n }); }

function signed(delta) {
  const d = Math.round(delta);
  return d > 0 ? `+${d}` : d < 0 ? `−${-d}` : "±0";
}

/**
 * The rating after each rated game (games: profile.history of one game, oldest first), with
 * its ±rd band, from the rating before the first of them: an <svg> with role img. Drawn like
 * review.js's value chart, no library.
 */
export function ratingChart(games) {
  const W = 320, H = 120, PAD = 6;
  // The line starts at the rating before the first game shown (no deviation known there).
  const points = [{ rating: games[0].rating - games[0].delta, rd: 0, delta: 0 }, ...games];
  const n = points.length - 1;
  const lows = points.map((p) => p.rating - p.rd), highs = points.map((p) => p.rating + p.rd);
  const bottom = Math.min(...lows), top = Math.max(...highs, bottom + 1);
  const x = (i) => PAD + (i * (W - 2 * PAD)) / n;
  const y = (v) => H - PAD - ((v - bottom) * (H - 2 * PAD)) / (top - bottom);
  const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "rating-chart", role: "img" });
  const last = points.at(-1);
  chart.setAttribute("aria-label",
    t("standings.chart", { n: games.length, now: Math.round(last.rating) }));
  const band = [...points.map((p, i) => `${x(i).toFixed(1)},${y(p.rating + p.rd).toFixed(1)}`),
    ...points.map((p, i) => `${x(i).toFixed(1)},${y(p.rating - p.rd).toFixed(1)}`).reverse()];
  chart.append(svg("polygon", { points: band.join(" "), class: "band" }));
  chart.append(svg("polyline", {
    points: points.map((p, i) => `${x(i).toFixed(1)},${y(p.rating).toFixed(1)}`).join(" "),
    class: "line",
  }));
  points.forEach((p, i) => {
    if (i === 0) return; // the start is no game
    const dot = svg("circle", { cx: x(i), cy: y(p.rating), r: 2.5, class: "dot" });
    const title = svg("title", {});
    title.textContent = `${Math.round(p.rating)} (${signed(p.delta)})`;
    dot.append(title);
    chart.append(dot);
  });
  for (const v of [top, bottom]) {
    const label = svg("text", { x: W - PAD, y: v === top ? PAD + 8 : H - PAD - 2, class: "label" });
    label.textContent = String(Math.round(v));
    chart.append(label);
  }
  return chart;
}

/**
 * Wire the ratings to ``client`` (net.js). ``titleOf(game)`` names a game; ``replay(id)``
 * opens a stored game; ``profileBox(player, close)``, if given, makes an element shown at the
 * top of a player's profile (or null), which may call ``close()`` to close the dialog.
 * Returns what app.js calls on messages and when it draws a game.
 */
export function setUpStandings(client, titleOf, replay, profileBox = null) {
  const dialog = $("standings");
  const body = $("standings-body");
  const changes = new Map(); // game id -> rating_change
  let showing = null;        // the game id whose change #rating-change shows

  const openBoard = (game) => { client.getLeaderboard(game); };
  const openProfile = (player) => { client.getProfile(player); };
  const show = (heading) => {
    $("standings-title").textContent = heading;
    if (!dialog.open) dialog.showModal();
  };
  const playerLink = (player) => {
    const b = el("button", player.bot ? t("seat.bot", { name: player.name }) : player.name, "link");
    b.type = "button";
    b.dataset.player = player.id;
    b.addEventListener("click", () => openProfile(player.id));
    return b;
  };

  $("standings-close").addEventListener("click", () => dialog.close());
  for (const b of document.querySelectorAll("[data-leaderboard]")) {
    b.addEventListener("click", () => openBoard(b.dataset.leaderboard));
  }
  $("my-profile").addEventListener("click", () => openProfile(null));
  // A player's name anywhere it carries data-player (the seats of a game) opens the profile.
  document.addEventListener("click", (ev) => {
    const who = ev.target.closest?.("#players [data-player]");
    if (who) openProfile(who.dataset.player);
  });

  function renderChange() {
    const out = $("rating-change");
    const change = showing && changes.get(showing);
    out.hidden = !change;
    if (!change) return;
    out.textContent = t("standings.change", { game: titleOf(change.game), before: ratingText(change.before),
      after: ratingText(change.after), delta: signed(change.delta) });
    out.className = `rating-change ${change.delta >= 0 ? "up" : "down"}`;
    out.dataset.delta = String(change.delta);
  }

  function onLeaderboard(msg) {
    body.replaceChildren();
    const list = el("ol", null, "leaders");
    list.setAttribute("aria-label", t("standings.leaderboard", { game: titleOf(msg.game) }));
    for (const entry of msg.players) {
      const li = el("li");
      li.dataset.player = entry.player.id;
      li.append(el("span", `${entry.rank}.`, "rank"), playerLink(entry.player),
        el("span", ratingText(entry.rating), "rating"),
        el("span", plural(entry.rating.games, "game"), "muted small"));
      if (entry.rating.provisional) li.classList.add("provisional");
      list.append(li);
    }
    if (!msg.players.length) body.append(el("p", t("standings.nobody"), "muted"));
    body.append(list);
    const note = el("p", t("standings.provisional_note"), "muted small provisional-note");
    note.append(msg.levels.map((lv) =>
      t(lv.calibrated ? "standings.level" : "standings.level_guessed", { name: lv.name, rating: Math.round(lv.rating) })).join(t("board.sep")));
    body.append(note);
    show(t("standings.leaderboard", { game: titleOf(msg.game) }));
  }

  function onProfile(msg) {
    body.replaceChildren();
    body.dataset.player = msg.player.id;
    const box = profileBox && profileBox(msg.player, () => dialog.close());
    if (box) body.append(box);
    const rated = msg.kind === "account" || msg.kind === "bot";
    if (!msg.ratings.length) {
      body.append(el("p", t(rated ? "standings.no_games" : "standings.guest"), "muted"));
    }
    for (const r of msg.ratings) {
      const section = el("section", null, "profile-game");
      section.dataset.game = r.game;
      section.append(el("h3", `${titleOf(r.game)} ${ratingText(r)}`),
        el("p", `±${Math.round(r.rd)} · ${plural(r.games, "rated_game")}`, "muted small"));
      const points = msg.history.filter((p) => p.game === r.game);
      if (points.length) section.append(ratingChart(points));
      body.append(section);
    }
    if (msg.levels.length) {
      const table = el("table", null, "level-scores");
      table.append(Object.assign(el("caption", t("standings.vs_computer")), {}));
      const head = el("tr");
      for (const h of ["lobby.game", "lobby.level", "standings.won", "standings.drawn", "standings.lost"]) head.append(el("th", t(h)));
      table.append(head);
      for (const s of msg.levels) {
        const tr = el("tr");
        for (const v of [titleOf(s.game), s.level, s.wins, s.draws, s.losses]) tr.append(el("td", String(v)));
        table.append(tr);
      }
      body.append(table);
    }
    if (msg.recent.length) {
      body.append(el("h3", t("standings.recent")));
      const list = el("ul", null, "recent");
      for (const g of msg.recent) {
        const li = el("li");
        const seat = g.seats.find((s) => s.player && s.player.id === msg.player.id);
        const res = g.result;
        const outcome = t(!res || res.reason === "aborted" ? "recent.aborted"
          : res.winner === null ? "recent.draw" : seat && res.winner === seat.seat ? "recent.won" : "recent.lost");
        const what = el("span", `${titleOf(g.game)} ${t("common.vs")} `);
        for (const s of g.seats.filter((x) => x !== seat)) {
          what.append(s.kind === "ai" ? t("seat.computer_level", { level: s.level }) : s.player ? playerLink(s.player) : "?");
        }
        what.append(` · ${outcome}`);
        li.append(what);
        const b = el("button", t("history.replay"));
        b.type = "button";
        b.setAttribute("aria-label", t("history.replay_aria", { id: g.id }));
        b.addEventListener("click", () => { dialog.close(); replay(g.id); });
        li.append(b);
        list.append(li);
      }
      body.append(list);
    }
    show(msg.player.bot ? t("seat.bot", { name: msg.player.name }) : msg.player.name);
  }

  return {
    onRatingChange(msg) { changes.set(msg.game_id, msg); renderChange(); },
    onLeaderboard,
    onProfile,
    /** The game on screen (its stored id, or null): shows its rating change if it had one. */
    showFor(gameId) { showing = gameId; renderChange(); },
  };
}
