// Draws one position of either game into a container. Every cell is a <button> with an
// aria-label so the board works by keyboard and screen reader. One cell at a time is in the tab
// order (a "roving tabindex"): Tab enters the board on a playable cell, and the arrow keys move
// from there -- by column in Connect Four (keys 1-7 drop in a column), on the grid in Othello. The caller passes what to show (cells the server sent, the cell last played and
// the cells it turned); this module keeps no game state and knows no rules of its own.
import { t } from "./i18n.js";


/** Square name of an Othello cell index (a1 is top-left): notation, for labels. */
function squareName(index) {
  return "abcdefgh"[index % 8] + String(Math.floor(index / 8) + 1);
}

/** Where a disc shown for a playable Connect Four column sits: its lowest empty hole. */
function holeOf(cells, column) {
  const c = Number(column) - 1;
  for (let r = 5; r >= 0; r--) if (cells[r * 7 + c] === null) return r * 7 + c;
  return -1;
}

/**
 * opts: {game, pos: {cells, last (cell index or null), flipped (cell indices), winning (cell indices)}, prev, legal (notation list, [] when you may not move), side (the seat
 * whose hints to show), animate, onMove(notation)}
 */
export function drawBoard(root, opts) {
  const { game } = opts;
  root.replaceChildren(game === "connect4" ? connect4(opts) : othello(opts));
}

function cellLabel(game, index, owner, extra) {
  const where = game === "othello"
    ? squareName(index)
    : t("board.cell", { column: (index % 7) + 1, row: 6 - Math.floor(index / 7) });
  const what = t(owner === null ? "board.empty" : `board.${game}_${owner}`);
  return [where, what, ...extra.map((key) => t(key))].join(t("board.sep"));
}

function disc(side, cls) {
  const d = document.createElement("span");
  d.className = `disc s${side}${cls ? " " + cls : ""}`;
  return d;
}

/** The playable column nearest the centre (ties: the left one), where Tab enters the board. */
function centreMost(legal) {
  return [...legal].sort((a, b) => Math.abs(a - 4) - Math.abs(b - 4) || a - b)[0];
}

/** Keep one cell of ``grid`` in the tab order: the one with ``data-move`` ``first`` (or none),
 * and from then on whichever cell has focus, so Tab leaves and re-enters where you were. */
function rovingFocus(grid, first) {
  const start = first === undefined ? null : grid.querySelector(`.cell[data-move="${first}"]`);
  for (const cell of grid.children) cell.tabIndex = cell === start ? 0 : -1;
  grid.addEventListener("focusin", (ev) => {
    if (!ev.target.classList.contains("cell")) return;
    for (const cell of grid.children) cell.tabIndex = cell === ev.target ? 0 : -1;
  });
}

function connect4({ pos, prev, legal, side, animate, onMove }) {
  const board = document.createElement("div");
  board.className = "board connect4";
  const grid = document.createElement("div");
  grid.className = "grid";
  grid.setAttribute("role", "group");
  grid.setAttribute("aria-label", t("board.connect4"));
  const landing = new Map(legal.map((col) => [holeOf(pos.cells, col), col]));
  for (let i = 0; i < 42; i++) {
    const owner = pos.cells[i];
    const cell = document.createElement("button");
    cell.type = "button";
    cell.className = "cell";
    cell.dataset.col = String((i % 7) + 1);
    const extra = [];
    const col = landing.get(i);
    if (col !== undefined) {
      cell.classList.add("legal", "hint");
      cell.dataset.move = col;
      cell.style.setProperty("--hint-color", side === 0 ? "var(--red)" : "#b8860b");
      extra.push("board.legal");
      const ghost = document.createElement("span");
      ghost.className = `disc-ghost s${side}`;
      cell.append(ghost);
    }
    if (legal.includes(cell.dataset.col)) cell.classList.add("legal");
    else cell.setAttribute("aria-disabled", "true");
    if (i === pos.last) { cell.classList.add("last"); extra.push("board.last"); }
    if (pos.winning && pos.winning.includes(i)) { cell.classList.add("win"); extra.push("board.four"); }
    if (owner !== null) {
      const fresh = animate && i === pos.last && (!prev || prev.cells[i] === null);
      const d = disc(owner, fresh ? "drop" : "");
      if (fresh) {
        const row = Math.floor(i / 7) + 1;
        d.style.setProperty("--from", `${-row * 122}%`);
        d.style.setProperty("--fall", `${0.18 + 0.05 * row}s`);
      }
      cell.append(d);
    }
    cell.setAttribute("aria-label", cellLabel("connect4", i, owner, extra));
    grid.append(cell);
  }
  grid.addEventListener("click", (ev) => {
    const cell = ev.target.closest(".cell");
    if (cell && legal.includes(cell.dataset.col)) onMove(cell.dataset.col);
  });
  // Hovering anywhere in a column previews the disc where it would land.
  grid.addEventListener("pointerover", (ev) => {
    const cell = ev.target.closest(".cell");
    grid.querySelectorAll(".hover-target").forEach((c) => c.classList.remove("hover-target"));
    if (!cell) return;
    const target = grid.querySelector(`.cell[data-move="${cell.dataset.col}"]`);
    if (target) target.classList.add("hover-target");
  });
  grid.addEventListener("pointerleave", () => {
    grid.querySelectorAll(".hover-target").forEach((c) => c.classList.remove("hover-target"));
  });
  // Arrow keys move to the next playable column left or right (in column order, stopping at
  // the edge); a digit drops a disc in that column.
  grid.addEventListener("keydown", (ev) => {
    if (ev.altKey || ev.ctrlKey || ev.metaKey) return;
    if (/^[1-7]$/.test(ev.key)) {
      if (legal.includes(ev.key)) { onMove(ev.key); ev.preventDefault(); }
      return;
    }
    const dir = { ArrowLeft: -1, ArrowRight: 1 }[ev.key];
    if (!dir) return;
    const at = Number(document.activeElement?.dataset?.col || 4);
    const columns = legal.map(Number).filter((c) => (c - at) * dir > 0);
    if (columns.length) {
      const col = dir > 0 ? Math.min(...columns) : Math.max(...columns);
      grid.querySelector(`.cell[data-move="${col}"]`).focus();
    }
    ev.preventDefault();
  });
  rovingFocus(grid, centreMost(legal));
  const labels = document.createElement("div");
  labels.className = "col-labels";
  labels.setAttribute("aria-hidden", "true");
  for (let c = 1; c <= 7; c++) labels.append(Object.assign(document.createElement("span"), { textContent: c }));
  board.append(grid, labels);
  return board;
}

function othello({ pos, prev, legal, side, animate, onMove }) {
  const board = document.createElement("div");
  board.className = "board othello";
  const corner = document.createElement("span");
  const files = document.createElement("div");
  files.className = "files";
  files.setAttribute("aria-hidden", "true");
  for (const f of "abcdefgh") files.append(Object.assign(document.createElement("span"), { textContent: f }));
  const ranks = document.createElement("div");
  ranks.className = "ranks";
  ranks.setAttribute("aria-hidden", "true");
  for (let r = 1; r <= 8; r++) ranks.append(Object.assign(document.createElement("span"), { textContent: r }));
  const grid = document.createElement("div");
  grid.className = "grid";
  grid.setAttribute("role", "group");
  grid.setAttribute("aria-label", t("board.othello"));
  const legalSet = new Set(legal);
  const flipped = new Set(animate ? pos.flipped || [] : []);
  for (let i = 0; i < 64; i++) {
    const owner = pos.cells[i];
    const name = squareName(i);
    const cell = document.createElement("button");
    cell.type = "button";
    cell.className = "cell";
    cell.dataset.square = name;
    const extra = [];
    if (legalSet.has(name)) {
      cell.classList.add("legal", "hint", `s${side}h`);
      cell.dataset.move = name;
      extra.push("board.legal");
    } else {
      cell.setAttribute("aria-disabled", "true");
    }
    if (i === pos.last) { cell.classList.add("last"); extra.push("board.last"); }
    if (owner !== null) {
      let cls = "";
      if (flipped.has(i)) cls = "flip";
      else if (animate && i === pos.last && prev && prev.cells[i] === null) cls = "place";
      cell.append(disc(owner, cls));
    }
    cell.setAttribute("aria-label", cellLabel("othello", i, owner, extra));
    grid.append(cell);
  }
  grid.addEventListener("click", (ev) => {
    const cell = ev.target.closest(".cell");
    if (cell && legalSet.has(cell.dataset.square)) onMove(cell.dataset.square);
  });
  // Arrow keys move one square on the grid, stopping at the edges (Enter plays a legal one).
  grid.addEventListener("keydown", (ev) => {
    const step = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] }[ev.key];
    if (!step || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    const cells = [...grid.children];
    const at = Math.max(0, cells.indexOf(document.activeElement));
    const row = Math.min(7, Math.max(0, Math.floor(at / 8) + step[0]));
    const col = Math.min(7, Math.max(0, (at % 8) + step[1]));
    cells[row * 8 + col].focus();
    ev.preventDefault();
  });
  rovingFocus(grid, legal[0]);
  board.append(corner, files, ranks, grid);
  return board;
}
