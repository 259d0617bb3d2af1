// The game review's pieces that need no page state: the value chart (a small SVG, no library),
// the verdict marks, and the marks drawn on board cells. app.js decides what to show.
import { t } from "./i18n.js";
import { svg } from "./dom.js";


/** The mark a verdict gets in the move list, as annotators write it ("" for a good move). */
export const MARKS = { inaccuracy: "?!", mistake: "?", blunder: "??" };


/**
 * The value over the game from the first player's side: values[i] before ply i (null where
 * unknown; the last is the result). ``ply`` is the position on screen; clicking a point calls
 * ``onPick(ply)``. Returns an <svg> with role img and a text label.
 */
export function valueChart(values, ply, onPick, colours) {
  const W = 280, H = 90, PAD = 4;
  const n = Math.max(1, values.length - 1);
  const known = values.filter((v) => v !== null);
  const top = Math.max(4, ...known.map((v) => Math.abs(v)));
  const x = (i) => PAD + (i * (W - 2 * PAD)) / n;
  const y = (v) => H / 2 - (v * (H / 2 - PAD)) / top;
  const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "value-chart", role: "img" });
  chart.setAttribute("aria-label", t("review.chart", { first: colours[0], second: colours[1] }));
  chart.append(svg("rect", { x: 0, y: 0, width: W, height: H / 2, class: "half s0" }));
  chart.append(svg("rect", { x: 0, y: H / 2, width: W, height: H / 2, class: "half s1" }));
  chart.append(svg("line", { x1: 0, y1: H / 2, x2: W, y2: H / 2, class: "axis" }));
  // One polyline per run of known values: an unknown value breaks the line.
  let run = [];
  const flush = () => {
    if (run.length) chart.append(svg("polyline", { points: run.join(" "), class: "line" }));
    run = [];
  };
  values.forEach((v, i) => { if (v === null) flush(); else run.push(`${x(i).toFixed(1)},${y(v).toFixed(1)}`); });
  flush();
  if (ply !== null && ply < values.length) {
    const v = values[ply] ?? 0;
    chart.append(svg("line", { x1: x(ply), y1: 0, x2: x(ply), y2: H, class: "cursor" }));
    chart.append(svg("circle", { cx: x(ply), cy: y(v), r: 3, class: "dot" }));
  }
  chart.addEventListener("click", (ev) => {
    const box = chart.getBoundingClientRect();
    const at = ((ev.clientX - box.left) / box.width) * W;
    onPick(Math.max(0, Math.min(n, Math.round(((at - PAD) * n) / (W - 2 * PAD)))));
  });
  return chart;
}

/** Where a move lands on the board: the cell index of a Connect Four column's lowest empty
 * hole in ``cells``, or of an Othello square; -1 if none. */
function cellOf(game, cells, move) {
  if (game === "othello") {
    if (!/^[a-h][1-8]$/.test(move)) return -1;
    return (Number(move[1]) - 1) * 8 + "abcdefgh".indexOf(move[0]);
  }
  const c = Number(move) - 1;
  for (let r = 5; r >= 0; r--) if (cells[r * 7 + c] === null) return r * 7 + c;
  return -1;
}

/** Put ``marks`` ({move: {text, cls, label}}) on the cells of a drawn board. */
export function markCells(root, game, cells, marks) {
  const grid = root.querySelector(".grid");
  if (!grid) return;
  for (const [move, mark] of Object.entries(marks)) {
    const index = cellOf(game, cells, move);
    const cell = index >= 0 ? grid.children[index] : null;
    if (!cell) continue;
    cell.classList.add(mark.cls);
    cell.dataset.mark = mark.text;
    cell.append(Object.assign(document.createElement("span"), { className: "cell-mark", textContent: mark.text }));
    cell.setAttribute("aria-label", `${cell.getAttribute("aria-label")}, ${mark.label}`);
  }
}

/** A value as a short signed number for a board cell (Connect Four: Pons' score). */
export function shortValue(v) {
  if (v.value === null) return "?";
  return v.value > 0 ? `+${v.value}` : String(v.value);
}
