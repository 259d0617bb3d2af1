// The page's links: what the address names (a room, a replay, a tournament's or the ladder's
// page), and putting a room on screen under its own link.
import { S } from "./state.js";

export function roomFromHash() {
  const m = /^#(?:\/room\/)?([\w-]{1,32})$/.exec(location.hash);
  return m ? m[1] : null;
}

/** The game id of a replay link (#replay/<id>), or null. */
export function replayFromHash() {
  const m = /^#replay\/([\w-]{1,64})$/.exec(location.hash);
  return m ? m[1] : null;
}

/** Room codes are typed in any case (the server matches them so): compare them that way. */
export function sameCode(a, b) {
  return a !== null && b !== null && a.toUpperCase() === b.toUpperCase();
}

export function openRoom(id, hash = id) {
  if (location.hash !== `#${hash}`) history.replaceState(null, "", `#${hash}`);
  if (S.current !== id) { S.current = id; S.viewPly = null; S.drawn = null; S.analysis = null; }
}

/** A tournament's or a ladder's page named by the link (#tournament/<id>, #ladder/<game>). */
export function pageFromHash() {
  const m = /^#(tournament|ladder)\/([\w-]{1,64})$/.exec(location.hash);
  return m ? { kind: m[1], id: m[2] } : null;
}
