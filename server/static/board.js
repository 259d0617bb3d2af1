// Draws one position of either game into a container. Every cell is a <button> with an
// aria-label so the board works by keyboard and screen reader; only playable cells are in the
// tab order. The caller passes what to show (cells the server sent, the cell last played and
// the cells it turned); this module keeps no game state and knows no rules of its own.

const SIDE_WORD = { connect4: ["red", "yellow"], othello: ["black", "white"] };

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
    : `column ${(index % 7) + 1}, row ${6 - Math.floor(index / 7)}`;
  const what = owner === null ? "empty" : SIDE_WORD[game][owner];
  return [where, what, ...extra].join(", ");
}

function disc(side, cls) {
  const d = document.createElement("span");
  d.className = `disc s${side}${cls ? " " + cls : ""}`;
  return d;
}

function connect4({ pos, prev, legal, side, animate, onMove }) {
  const board = document.createElement("div");
  board.className = "board connect4";
  const grid = document.createElement("div");
  grid.className = "grid";
  grid.setAttribute("role", "group");
  grid.setAttribute("aria-label", "Connect Four board, 7 columns by 6 rows");
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
      extra.push("legal move");
      const ghost = document.createElement("span");
      ghost.className = `disc-ghost s${side}`;
      cell.append(ghost);
    } else {
      cell.tabIndex = -1;
    }
    if (legal.includes(cell.dataset.col)) cell.classList.add("legal");
    else cell.setAttribute("aria-disabled", "true");
    if (i === pos.last) { cell.classList.add("last"); extra.push("last move"); }
    if (pos.winning && pos.winning.includes(i)) { cell.classList.add("win"); extra.push("winning four"); }
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
  // Arrow keys move between the playable columns.
  grid.addEventListener("keydown", (ev) => {
    if (ev.key !== "ArrowLeft" && ev.key !== "ArrowRight") return;
    const targets = [...grid.querySelectorAll(".cell[data-move]")];
    const at = targets.indexOf(document.activeElement);
    const next = targets[(at + (ev.key === "ArrowRight" ? 1 : -1) + targets.length) % targets.length];
    if (next) { next.focus(); ev.preventDefault(); }
  });
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
  grid.setAttribute("aria-label", "Othello board, a1 at the top left");
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
      extra.push("legal move");
    } else {
      cell.tabIndex = -1;
      cell.setAttribute("aria-disabled", "true");
    }
    if (i === pos.last) { cell.classList.add("last"); extra.push("last move"); }
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
  grid.addEventListener("keydown", (ev) => {
    const step = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -8, ArrowDown: 8 }[ev.key];
    if (!step) return;
    const targets = [...grid.querySelectorAll(".cell[data-move]")];
    const at = targets.indexOf(document.activeElement);
    const next = targets[(at + (step > 0 ? 1 : -1) + targets.length) % targets.length];
    if (next) { next.focus(); ev.preventDefault(); }
  });
  board.append(corner, files, ranks, grid);
  return board;
}
