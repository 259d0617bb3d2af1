// The admin page's chat moderation: open the lobby's chat or a game's (both its channels),
// delete a line (it leaves every page that shows it), silence its author for a time or lift
// a silence. Lines are put on the page with textContent only, as written (data-verbatim), in
// any language. Protocol: docs/PROTOCOL.md, Chat.

import { has, lang, t } from "./i18n.js";

// Seconds of silence, each with its catalogue key (0 lifts a silence).
const DURATIONS = [["600", "admin.chat.for_600"], ["3600", "admin.chat.for_3600"], ["86400", "admin.chat.for_86400"],
  ["604800", "admin.chat.for_604800"], ["0", "admin.chat.lift"]];

function make(tag, props = {}, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

/** An element holding what a player wrote or is called: shown as sent, in any language. */
function verbatim(tag, props) {
  const node = make(tag, props);
  node.dataset.verbatim = "";
  return node;
}

/** Build the section inside ``desk``; ``send(msg)`` sends over the admin connection,
 * ``toast(text)`` tells the admin. Returns the handlers of the chat's server messages and
 * ``opened()``, to call after every admin_welcome. */
export function setUpAdminChat(desk, send, toast) {
  let gameId = null;  // the chat shown: a game id, or null for the lobby
  let lines = new Map();
  let names = new Map();  // player id -> name, for the silence note

  const game = make("input", { id: "chat-game", placeholder: t("admin.chat.game_placeholder"), autocomplete: "off", spellcheck: false });
  const open = make("button", { type: "submit", id: "chat-open", textContent: t("admin.chat.open"), className: "primary" });
  const form = make("form", { id: "chat-form", className: "row" },
    make("label", { className: "field grow" }, make("span", { textContent: t("admin.chat.game_id") }), " ", game), open);
  const duration = make("select", { id: "chat-silence-for" },
    ...DURATIONS.map(([value, key]) => make("option", { value, textContent: t(key) })));
  const shown = make("span", { id: "chat-shown", className: "muted small" });
  const list = make("ol", { id: "chat-lines", className: "chat-lines" });
  const section = make("section", { className: "card wide", id: "chat-admin" },
    make("div", { className: "row between" }, make("h2", { id: "h-chat", textContent: `${t("chat.title")} ` }, shown),
      make("label", { className: "field" }, make("span", { textContent: t("admin.chat.silence_for") }), " ", duration)),
    form, list);
  section.setAttribute("aria-labelledby", "h-chat");
  desk.append(section);

  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    gameId = game.value.trim() || null;
    send({ type: "get_chat", game_id: gameId });
  });

  function render() {
    if (gameId === null) shown.textContent = `— ${t("chat.lobby")}`;
    else shown.replaceChildren(`— ${t("admin.chat.game")} `, verbatim("span", { textContent: gameId }));
    const sorted = [...lines.values()].sort((a, b) => a.id - b.id);
    list.replaceChildren(...sorted.map((line) => {
      const who = verbatim("strong", { className: "chat-who", textContent: line.player.name, title: line.player.id });
      const channel = has(`chat.${line.channel}`) ? t(`chat.${line.channel}`) : line.channel;
      const where = make("span", { className: "muted small", textContent: ` ${channel} · ${new Date(line.at * 1000).toLocaleTimeString(lang)} ` });
      const text = verbatim("span", { className: "chat-text", textContent: line.text });
      const del = make("button", { type: "button", className: "danger", textContent: t("admin.chat.delete") });
      del.dataset.delete = line.id;
      del.addEventListener("click", () => send({ type: "admin_delete_chat", line: line.id }));
      const silence = make("button", { type: "button", textContent: t("admin.chat.silence") });
      silence.dataset.silence = line.player.id;
      silence.addEventListener("click", () => send({ type: "admin_silence_chat", player: line.player.id, seconds: Number(duration.value) }));
      const li = make("li", { className: "chat-line" }, who, where, text, " ", del, " ", silence);
      li.dataset.line = line.id;
      return li;
    }));
    if (!sorted.length) list.append(make("li", { className: "muted", textContent: t("admin.chat.empty") }));
  }

  return {
    /** After (re)login: the chat that was shown is opened on the new connection. */
    opened() { send({ type: "get_chat", game_id: gameId }); },
    handlers: {
      chat_history(msg) {
        if (msg.game_id !== gameId) return;
        lines = new Map(msg.lines.map((l) => [l.id, l]));
        for (const l of msg.lines) names.set(l.player.id, l.player.name);
        render();
      },
      chat_line(msg) {
        if (msg.line.game_id !== gameId) return;
        lines.set(msg.line.id, msg.line);
        names.set(msg.line.player.id, msg.line.player.name);
        render();
      },
      chat_deleted(msg) {
        if (lines.delete(msg.line)) render();
      },
      chat_silenced(msg) {
        const who = names.get(msg.player) || msg.player;
        toast(msg.until === null ? t("admin.chat.unsilenced", { who })
          : t("admin.chat.silenced", { who, until: new Date(msg.until * 1000).toLocaleString(lang) }));
      },
    },
  };
}
