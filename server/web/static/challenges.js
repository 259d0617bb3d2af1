// Challenges in the page: the offers addressed to this player (a panel that stays until each
// is answered) and the challenges this player sent (waiting, then accepted or declined), plus
// the two ways to send one (the lobby's "Challenge a player" card, a profile's Challenge box).
//
// The server keeps every challenge (server/challenges/) and sends nothing when one expires
// (an hour after it was made) or is forgotten by a restart. So the page drops an offer when
// answering it is refused as unknown_challenge, when a reconnect's re-sent offers leave it out
// (welcome clears the list; the standing ones follow the room states), or an hour after it
// arrived (it was made no later than that, so it has expired by then).
import { t } from "./i18n.js";
import { button, el } from "./dom.js";

const $ = (id) => document.getElementById(id);
const HOUR_MS = 3600 * 1000;



/** A time control as the pickers and offers show it: "3+2 (3 min + 2 s a move)". */
export function clockLabel(c) {
  return t("clock.label", { name: c.name, min: c.initial_ms / 60000, s: c.increment_ms / 1000 });
}

function seatWords(seat) { return t(seat === 0 ? "challenge.you_first" : "challenge.you_second"); }

/** The other seat's player id of a RoomView, for the player sitting in ``you``. */
function opponentId(room, you) {
  const other = room.seats[1 - you];
  return other && other.player ? other.player.id : null;
}

/**
 * Wire challenges to ``client`` (net.js). ``titleOf(game)`` names a game, ``games()`` lists
 * the GameInfo of welcome, ``me()`` is this player's PlayerView, ``fillClock(select)`` fills a
 * clock picker as the create-room forms have it, ``toast(text)`` says something briefly.
 * Returns what app.js calls on messages.
 */
export function setUpChallenges(client, { titleOf, games, me, fillClock, toast }) {
  const incoming = new Map(); // challenge id -> {offer, at, answering: request id or null}
  const sent = new Map();     // challenge id -> {msg: challenge_sent, at, declined: message or null}

  function what(game, control, seat) {
    return `${titleOf(game)} · ${control ? clockLabel(control) : t("challenge.untimed")} · ${seatWords(seat)}`;
  }

  function offerItem(id, entry) {
    const { offer } = entry;
    const li = el("li", null, "offer");
    li.dataset.challenge = id;
    const text = el("div", null, "what");
    const who = el("strong", offer.challenger.bot ? t("seat.bot", { name: offer.challenger.name }) : offer.challenger.name);
    text.append(who, t("challenge.challenges_you"), el("small", what(offer.game, offer.time_control, offer.seat), "terms"));
    const busy = entry.answering !== null;
    const names = { name: offer.challenger.name, game: titleOf(offer.game) };
    const yes = button(t("challenge.accept"), () => answer(id, true), "primary", t("challenge.accept_aria", names));
    const no = button(t("challenge.decline"), () => answer(id, false), "", t("challenge.decline_aria", names));
    yes.disabled = no.disabled = busy;
    const acts = el("span", null, "acts");
    acts.append(yes, no);
    li.append(text, acts);
    return li;
  }

  function sentItem(id, entry) {
    const { msg, declined } = entry;
    const li = el("li", null, declined ? "sent declined" : "sent");
    li.dataset.challenge = id;
    const text = el("div", null, "what");
    if (declined) {
      const reason = declined.reason.trim();
      text.append(el("strong", declined.by.name),
        t(reason ? "challenge.declined_because" : "challenge.declined", { game: titleOf(msg.game), reason }));
    } else {
      text.append(t("challenge.waiting_before"), el("strong", msg.to.name), t("challenge.waiting_after"),
        el("small", what(msg.game, msg.time_control, msg.seat), "terms"));
    }
    // Hiding a waiting challenge does not withdraw it (the protocol has no way to): it stands
    // on the server until answered or expired, and its game still starts if accepted.
    const hide = button(t(declined ? "challenge.ok" : "challenge.hide"), () => { sent.delete(id); render(); }, "",
      declined ? t("challenge.dismiss") : t("challenge.hide_aria", { name: msg.to.name }));
    const acts = el("span", null, "acts");
    acts.append(hide);
    li.append(text, acts);
    return li;
  }

  function render() {
    const items = [...[...incoming].map(([id, e]) => offerItem(id, e)),
      ...[...sent].map(([id, e]) => sentItem(id, e))];
    $("challenges").hidden = items.length === 0;
    $("challenge-list").replaceChildren(...items);
    $("challenges-title").textContent = incoming.size
      ? t("challenges.for_you", { n: incoming.size })
      : t("challenges.title");
  }

  function answer(id, accept) {
    const entry = incoming.get(id);
    if (!entry || entry.answering !== null) return;
    if (accept) {
      entry.answering = client.acceptChallenge(id);
    } else {
      // Declining has no answer unless refused: it is done once sent.
      client.declineChallenge(id);
      incoming.delete(id);
    }
    render();
  }

  /** ``seat``: "0" (you move first), "1" (second) or anything else (random). */
  function send(player, game, control, seat) {
    if (!player) return;
    client.challenge(player, game, control, seat === "0" ? 0 : seat === "1" ? 1 : null);
  }

  // The panel floats over the page's end: the page gets room below its last card, so the
  // panel covers nothing when scrolled to the bottom.
  new ResizeObserver(([entry]) => {
    const high = entry.target.hidden ? 0 : entry.target.getBoundingClientRect().height;
    document.body.style.paddingBottom = high ? `${Math.ceil(high) + 16}px` : "";
  }).observe($("challenges"));

  // The lobby's card: a name, a game, a clock.
  $("challenge-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const f = new FormData($("challenge-form"));
    send(String(f.get("player") || "").trim(), f.get("game"), f.get("time_control"), f.get("seat"));
  });

  // Offers and waiting challenges older than an hour have expired on the server.
  setInterval(() => {
    const stale = Date.now() - HOUR_MS;
    let changed = false;
    for (const map of [incoming, sent]) {
      for (const [id, e] of map) if (e.at < stale && !e.declined) { map.delete(id); changed = true; }
    }
    if (changed) render();
  }, 60_000);

  return {
    /** A (re)connection: the offers still standing come again after the room states. */
    onWelcome() { incoming.clear(); render(); },
    onOffer(msg) {
      incoming.set(msg.challenge, { offer: msg, at: Date.now(), answering: null });
      render();
    },
    onSent(msg) {
      sent.set(msg.challenge, { msg, at: Date.now(), declined: null });
      $("challenge-player").value = "";
      render();
    },
    onDeclined(msg) {
      const entry = sent.get(msg.challenge);
      if (entry) entry.declined = msg;
      else toast(t(msg.reason ? "challenge.toast_declined_because" : "challenge.toast_declined", { name: msg.by.name, reason: msg.reason }));
      render();
    },
    /** A refused answer: an offer the server no longer has goes; any other leaves it standing. */
    onError(msg) {
      for (const [id, e] of incoming) {
        if (e.answering === null || e.answering !== msg.ref) continue;
        if (msg.code === "unknown_challenge") incoming.delete(id); else e.answering = null;
        render();
      }
    },
    /**
     * Whether a room_state of a room the page did not know is the game of a challenge, which
     * then goes from the panel: "you" (accepted on this page), "they" (yours, accepted by
     * them), "elsewhere" (an offer accepted on another page of this player), or null.
     */
    startedBy(msg) {
      const room = msg.room;
      const you = msg.you;
      if (you === null || room.opponent !== "friend") return null;
      const them = opponentId(room, you);
      const match = (game, seat, other) => game === room.game && seat === you && other === them;
      // The offer answered here first, then any other of the same terms.
      const offers = [...incoming].sort(([, a], [, b]) => (b.answering !== null) - (a.answering !== null));
      for (const [id, e] of offers) {
        if (match(e.offer.game, e.offer.seat, e.offer.challenger.id)) {
          incoming.delete(id);
          render();
          return e.answering !== null ? "you" : "elsewhere";
        }
      }
      for (const [id, e] of sent) {
        if (!e.declined && match(e.msg.game, e.msg.seat, e.msg.to.id)) {
          sent.delete(id);
          render();
          return "they";
        }
      }
      return null;
    },
    /** The profile dialog's box to challenge ``player`` (none on your own profile). */
    profileBox(player, done) {
      const mine = me();
      if (mine && mine.id === player.id) return null;
      const form = el("form", null, "challenge-box");
      form.setAttribute("aria-label", t("challenge.player", { name: player.name }));
      const gameField = el("label", t("lobby.game"), "field");
      const pick = el("select");
      pick.name = "game";
      for (const g of games()) pick.append(Object.assign(el("option", titleOf(g.name)), { value: g.name }));
      gameField.append(pick);
      const clockField = el("label", t("lobby.clock"), "field");
      const clock = el("select", null, "clock-choice");
      clock.name = "time_control";
      fillClock(clock);
      clockField.append(clock);
      const seatField = el("label", t("lobby.side"), "field");
      const seat = el("select");
      seat.name = "seat";
      for (const [value, text] of [["random", t("lobby.random")], ["0", t("lobby.first")], ["1", t("lobby.second")]]) {
        seat.append(Object.assign(el("option", text), { value }));
      }
      seatField.append(seat);
      const go = el("button", t("challenge.player", { name: player.name }), "primary");
      go.type = "submit";
      form.append(gameField, clockField, seatField, go);
      form.addEventListener("submit", (ev) => {
        ev.preventDefault();
        send(player.id, pick.value, clock.value, seat.value);
        done();
      });
      return form;
    },
  };
}
