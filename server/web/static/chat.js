// Chat: a panel in the game view (the players' and the spectators' chats of the game on
// screen, as tabs) and one in the lobby. Lines are plain text and are only ever put on the page
// with textContent, never as HTML. Muting is this browser's: a muted player's lines are hidden
// (whom you muted is kept in localStorage); the server still sends them.
//
// The protocol (docs/PROTOCOL.md, Chat): "get_chat" opens a chat on this connection and is
// answered by "chat_history"; "chat" says a line; "chat_line" and "chat_deleted" follow.
import { t } from "./i18n.js";

const MUTED_KEY = "discus.chat.muted";
const CHANNEL_NAMES = { players: "chat.players", spectators: "chat.spectators", lobby: "chat.lobby" };

function el(tag, props = {}, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

function loadMuted() {
  try { return new Set(JSON.parse(localStorage.getItem(MUTED_KEY) || "[]")); } catch { return new Set(); }
}

/** One panel: a heading with channel tabs, the lines, a form to say one. */
function panel(id, title, wide) {
  const tabs = el("div", { className: "chat-tabs", role: "tablist" });
  const list = el("ol", { className: "chat-lines", id: `${id}-lines` });
  list.setAttribute("aria-live", "polite");
  list.setAttribute("aria-label", title);
  const input = el("input", { id: `${id}-input`, maxLength: 300, autocomplete: "off", placeholder: t("chat.placeholder") });
  input.setAttribute("aria-label", t("chat.message"));
  const send = el("button", { type: "submit", textContent: t("chat.send") });
  const form = el("form", { className: "row chat-form" }, input, send);
  const note = el("p", { className: "muted small chat-note", hidden: true });
  const unmute = el("button", { type: "button", className: "link small", hidden: true });
  const head = el("h2", { className: "row between" }, el("span", { textContent: title }), unmute);
  const section = el("section", { className: `card chat${wide ? " wide" : ""}`, id }, head, tabs, list, note, form);
  section.setAttribute("aria-label", title);
  return { section, tabs, list, input, form, note, unmute, send };
}

/** Wire the chat panels to ``client`` (net.js). ``me()`` is this player's PlayerView. */
export function setUpChat(client, { me }) {
  const chats = new Map();   // game id (or "" for the lobby) -> {channel, lines: Map id -> line, open}
  const muted = loadMuted();
  let limits = null;         // welcome.limits.chat
  let shown = null;          // key of the chat on screen, or null
  let tab = null;            // channel tab chosen on screen
  let shownGame = undefined; // the game id shown, to pick the default tab again on a change

  const game = panel("game-chat", t("chat.title"), false);
  const lobby = panel("lobby-chat", t("chat.lobby_title"), true);
  document.querySelector("#game .side")?.append(game.section);
  document.getElementById("lobby")?.append(lobby.section);

  const keyOf = (gameId) => gameId ?? "";
  const chatOf = (gameId) => {
    const key = keyOf(gameId);
    if (!chats.has(key)) chats.set(key, { channel: null, lines: new Map(), open: false });
    return chats.get(key);
  };

  function saveMuted() { localStorage.setItem(MUTED_KEY, JSON.stringify([...muted])); }

  function lineItem(line) {
    const who = el("span", { className: "chat-who", textContent: line.player.name });
    const text = el("span", { className: "chat-text", textContent: line.text });
    const at = new Date(line.at * 1000);
    const li = el("li", { className: "chat-line" }, who, text);
    li.dataset.line = line.id;
    li.dataset.player = line.player.id;
    li.title = at.toLocaleTimeString();
    if (me() && line.player.id !== me().id) {
      const mute = el("button", { type: "button", className: "chat-mute link small", textContent: t("chat.mute") });
      mute.setAttribute("aria-label", t("chat.mute_aria", { name: line.player.name }));
      mute.addEventListener("click", () => { muted.add(line.player.id); saveMuted(); render(); });
      li.append(mute);
    }
    return li;
  }

  function render() {
    const key = shown;
    for (const p of [game, lobby]) p.list.replaceChildren();
    if (key === null) return;
    const p = key === "" ? lobby : game;
    const chat = chats.get(key);
    const channels = chat ? [...new Set([chat.channel, ...[...chat.lines.values()].map((l) => l.channel)])].filter(Boolean) : [];
    // Tabs in a game: the channel you write in, and the other one, which you read only as an
    // admin (or in a replay of a game you played): otherwise it is shown as closed to you.
    p.tabs.replaceChildren();
    p.tabs.hidden = key === "";
    if (key !== "" && chat?.channel) {
      if (!channels.includes(tab)) tab = chat.channel;
      for (const channel of ["players", "spectators"]) {
        const open = channels.includes(channel);
        const b = el("button", { type: "button", className: "chat-tab", textContent: t(CHANNEL_NAMES[channel]), disabled: !open });
        b.setAttribute("role", "tab");
        b.setAttribute("aria-selected", String(channel === tab));
        b.dataset.channel = channel;
        if (!open) b.title = t(channel === "players" ? "chat.players_only" : "chat.spectators_only");
        b.addEventListener("click", () => { tab = channel; render(); });
        p.tabs.append(b);
      }
    }
    const lines = chat ? [...chat.lines.values()].sort((a, b) => a.id - b.id) : [];
    const visible = lines.filter((l) => (key === "" || l.channel === tab) && !muted.has(l.player.id));
    p.list.replaceChildren(...visible.map(lineItem));
    p.list.scrollTop = p.list.scrollHeight;
    const hidden = lines.length - lines.filter((l) => !muted.has(l.player.id)).length;
    p.unmute.hidden = muted.size === 0;
    p.unmute.textContent = hidden ? t("chat.unmute_hidden", { n: hidden }) : t("chat.unmute");
    // Writing: in your own channel; in the lobby, accounts only unless the server allows guests.
    const guestInLobby = key === "" && !client.signedIn && !(limits && limits.guests_in_lobby);
    const writable = chat?.open && (key === "" || tab === chat.channel) && !guestInLobby;
    p.input.disabled = !writable;
    p.send.disabled = !writable;
    p.note.hidden = !guestInLobby;
    p.note.textContent = guestInLobby ? t("chat.guest_note") : "";
  }

  for (const p of [game, lobby]) {
    p.form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const text = p.input.value.trim();
      if (!text || shown === null) return;
      client.request({ type: "chat", game_id: shown === "" ? null : shown, text });
      p.input.value = "";
    });
    p.unmute.addEventListener("click", () => { muted.clear(); saveMuted(); render(); });
  }

  return {
    /** Every (re)connect: chats are opened again on the new connection when shown. */
    onWelcome(msg) {
      limits = msg.limits.chat || null;
      if (limits) for (const p of [game, lobby]) p.input.maxLength = limits.max_chars;
      for (const chat of chats.values()) chat.open = false;
      const again = shown;
      shown = null;
      if (again !== null) this.show(again === "" ? null : again, chats.get(again).seat);
    },
    /** The chat of ``gameId`` (null: the lobby's) is on screen now, for a player in ``seat``
     * (null: watching); opened if it was not, and again when the seat changed (a spectator
     * who took a seat talks with the players from then on: the server says where). */
    show(gameId, seat = null) {
      const key = keyOf(gameId);
      const chat = chatOf(gameId);
      if (chat.seat !== seat) { chat.seat = seat; chat.open = false; }
      if (key === shown && (chat.open || !client.ready)) return; // on screen already
      if (gameId !== shownGame) { tab = null; shownGame = gameId; }
      shown = key;
      if (!chat.open && client.ready) {
        chat.open = true;
        chat.ref = client.request({ type: "get_chat", game_id: gameId });
      }
      render();
    },
    /** A refused request: a chat that could not be opened is asked for again next time. */
    onError(msg) {
      for (const [key, chat] of chats) {
        if (chat.ref === undefined || chat.ref !== msg.ref) continue;
        chat.open = false;
        chat.ref = undefined;
        if (key === shown) shown = null;
      }
    },
    receive(msg) {
      if (msg.type === "chat_history") {
        const chat = chatOf(msg.game_id);
        chat.channel = msg.channel;
        chat.open = true;
        chat.lines = new Map(msg.lines.map((l) => [l.id, l]));
      } else if (msg.type === "chat_line") {
        chatOf(msg.line.game_id).lines.set(msg.line.id, msg.line);
      } else if (msg.type === "chat_deleted") {
        chatOf(msg.game_id).lines.delete(msg.line);
      }
      render();
    },
  };
}
