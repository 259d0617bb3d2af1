// The review of a finished game (request_review: a chart of the values, each move's verdict)
// and the analysis board (analyse: any position of the game, every legal move valued, moves
// tried on it). What the server sends is kept in S.reviews and S.analysis; game.js draws the
// board with the marks below.
import { MARKS, shortValue, valueChart } from "./review.js";
import { t, tr } from "./i18n.js";
import { button } from "./dom.js";
import { S, gameIdOf, gameInfo } from "./state.js";

const $ = (id) => document.getElementById(id);

/** A finished analysis position's result in words, from seat 0's side's ``value``. */
function resultText(game, value) {
  if (value === 0) return t("analysis.over_draw");
  const colours = gameInfo(game).players;
  const who = colours[value > 0 ? 0 : 1];
  const n = Math.abs(value);
  return game === "othello" ? t("analysis.over_wins_by", { who, n }) : t("analysis.over_wins", { who });
}

/** A value's label as the server words it (ai/review.py's ``label``: "win in 7", "loss in 3",
 * "draw", "won", "lost", "unknown", Othello's "+6" or "+6 exact") in the page's language. */
function labelText(label) {
  if (!label) return "";
  let m = /^(win|loss) in (\d+)$/.exec(label);
  if (m) return t(`label.${m[1]}_in`, { n: Number(m[2]) });
  m = /^([+-]?\d+) exact$/.exec(label);
  if (m) return t("label.exact", { value: m[1] });
  m = /^([+-]?\d+) book$/.exec(label);  // the opening book's value, not a search's
  if (m) return t("label.book", { value: m[1] });
  return tr("label.", label);
}

/**
 * Wire the review card and the analysis board to ``client`` (net.js); ``render()`` draws the
 * page again. Returns what app.js calls on messages and what game.js calls when it draws.
 */
export function setUpAnalysis(client, { render }) {
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

  function tryMove(move) {
    const a = S.analysis;
    if (!a || a.pending) return;
    const r = S.rooms.get(a.room);
    if (r) startAnalysis(r, [...a.moves, move]);
  }

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

  return {
    onReview,
    onAnalysis,
    /** A refused review or analysis: let it be asked again. */
    onError(msg) {
      for (const [id, ref] of S.reviewing) if (ref === msg.ref) S.reviewing.delete(id);
      if (S.analysis && S.analysis.ref === msg.ref) {
        // Back to the position shown before (the board stays usable), or off if there was none.
        S.analysis = S.analysis.before;
        render();
      }
    },
    renderReview,
    boardMarks,
    tryMove,
  };
}
