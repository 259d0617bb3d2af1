// The clocks of a timed game: the server's remaining times, counted down from when they
// arrived, and the running one redrawn between messages.
import { S } from "./state.js";

const $ = (id) => document.getElementById(id);

/** A room's clocks from a ClockView: remaining ms per seat as the server sent them, and the
 * moment (this page's own clock) they arrived; only the running seat's is counted down from
 * there, so the page never compares its clock with the server's. */
export function clockFrom(view) {
  return view ? { control: view.control, remaining: view.remaining_ms, running: view.running, at: performance.now() } : null;
}

export function clockLeft(c, seat) {
  const left = c.remaining[seat];
  if (left === null || left === undefined) return null;
  return seat === c.running ? Math.max(0, left - (performance.now() - c.at)) : left;
}

/** 3:05, and tenths under ten seconds (0:09.4). */
export function fmtClock(ms) {
  if (ms < 10000) return `0:0${(Math.floor(ms / 100) / 10).toFixed(1)}`;
  const s = Math.ceil(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/** The clocks to show for the room at ``ply``: live ones, or a replay's as stored after that ply. */
export function shownClock(r, ply) {
  const rec = r.record;
  if (rec) {
    if (!rec.time_control || !rec.clocks) return null;
    const initial = rec.time_control.initial_ms;
    const after = ply > 0 ? rec.clocks[ply - 1] : rec.seats.map((s) => (s.kind === "ai" ? null : initial));
    return { control: rec.time_control, remaining: after, running: null, at: 0 };
  }
  return S.viewPly === null ? r.clock : null;
}

/** Redraw the running clock of the game on screen (between messages, several times a second). */
export function tickClocks() {
  const r = S.current && S.rooms.get(S.current);
  if (!r || !r.clock || r.clock.running === null || S.viewPly !== null) return;
  const el = $("players").querySelector(`.clock[data-seat="${r.clock.running}"]`);
  if (!el) return;
  const left = clockLeft(r.clock, r.clock.running);
  el.textContent = fmtClock(left);
  el.classList.toggle("low", left < 10000);
}
