// The game view: the players and their clocks, the board (live, replayed, or the analysis
// board), the status line, the move list, the export card and the game's buttons. It draws the
// room on screen from S (state.js) and sends the player's moves and choices to the server.
import { drawBoard } from "./board.js";
import { MARKS, markCells } from "./review.js";
import { ratingText } from "./standings.js";
import { t, tr } from "./i18n.js";
import { button, downloadLink } from "./dom.js";
import {
  ABORTABLE_PLIES, S, cellsOf, changes, colourOf, discCounts, gameIdOf, gameInfo, seatName, yourTurn,
} from "./state.js";
import { clockLeft, fmtClock, shownClock, tickClocks } from "./clock.js";

const $ = (id) => document.getElementById(id);

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

/** Which seat played ply ``j``: the seats alternate, except that an Othello pass is a ply too. */
function seatOfPly(v, j) { return j % 2; }

/** An ai_thinking message in words: the search's depth, what its score means for whom (in
 * discs for Othello; a proven win as the moves it takes), and its size. */
function thoughtText(v, th, aiSeat) {
  const nodes = fmtNodes(th.nodes);
  if (th.book) return t("think.book");  // the opening book's move: no search ran
  // The position cache's answer: an earlier search's, none now (so no "0 nodes").
  const done = th.cached ? "_cached" : "";
  if (th.score === null) return t(`think.forced${done}`, { depth: th.depth, nodes });  // a forced move
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
  return t(`${th.exact ? "think.line_solved" : "think.line"}${done}`, { depth: th.depth, what, nodes });
}

function fmtNodes(n) {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e3) return `${Math.round(n / 1e3)}k`;
  return String(n);
}

/**
 * Wire the game view to ``client`` (net.js). ``render()`` draws the page again; ``analysis``
 * (analysis.js) draws the review card and the analysis board's marks, ``standings``
 * (standings.js) a finished game's rating change. Returns what app.js and rooms.js call.
 */
export function setUpGame(client, { render, analysis: { renderReview, boardMarks, tryMove }, standings }) {
  // Resigning takes two clicks (the button asks once), without a blocking dialog.
  let resignArmed = null;

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
      // The accessible name begins with the visible words, so a voice command names it.
      downloadLink(href, t("export.download", { ext }), t(ext === "ggf" ? "export.download_ggf" : "export.download_moves", { ext })));
    $("downloads").replaceChildren(...links);
  }

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
      if (r.waiting) {
        el.append(Object.assign(document.createElement("span"), {
          className: "busy", textContent: t("status.ai_busy", {
            who: seatName(seat), position: r.waiting.position, queued: r.waiting.queued,
            seconds: Math.max(1, Math.round(r.waiting.wait_seconds)),
          }),
        }));
        return;
      }
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

  function sendMove(r, move) {
    if (!yourTurn(r) || r.sent !== null) return;
    r.sent = r.view.moves.length;
    r.sentRef = client.move(r.view.id, r.view.moves.length, move);
    render();
  }

  // The game's buttons, and the keys that step through its moves.
  $("flip").addEventListener("click", () => {
    const r = S.rooms.get(S.current);
    if (r) { toggleFlip(r); render(); }
  });
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

  return { renderGame, renderStatus };
}
