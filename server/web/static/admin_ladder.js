// The admin page's engine-ladder levels: which AI levels of the chosen game are on its
// ladder, one checkbox each. Ticking one enters the level (enter_ladder with its name),
// unticking takes it off (leave_ladder); a level taken off stays off. A ladder has its game's
// default level from the start, so a bot is rated by its first games (docs/BOTS.md).
// Protocol: docs/PROTOCOL.md, "The engine ladder"; `discus ladder levels` does the same.

import { t } from "./i18n.js";

/** Fill ``box`` (a fieldset) for the game ``game()`` names; ``send(msg)`` sends over the
 * admin connection. Returns the ``ladder`` message's handler and ``show(levels)``, to call
 * with the game's level names whenever they or the chosen game change. */
export function setUpLadderLevels(box, send, game) {
  let names = [];
  let on = new Set();

  function render() {
    const legend = Object.assign(document.createElement("legend"), { textContent: t("admin.ladder_levels") });
    box.replaceChildren(legend);
    for (const name of names) {
      const input = Object.assign(document.createElement("input"), { type: "checkbox", checked: on.has(name) });
      input.dataset.ladderLevel = name;
      input.addEventListener("change", () => {
        input.disabled = true;  // until the ladder's answer redraws the box
        send({ type: input.checked ? "enter_ladder" : "leave_ladder", game: game(), entrant: name });
      });
      const label = document.createElement("label");
      const text = Object.assign(document.createElement("span"), { textContent: name });
      text.dataset.verbatim = "";  // a level's name, as the server holds it
      label.append(input, " ", text);
      box.append(label);
    }
    if (names.length && !on.size) box.append(Object.assign(document.createElement("span"), {
      className: "muted small", textContent: ` ${t("admin.ladder_none")}` }));
  }

  return {
    handlers: {
      ladder(msg) {
        if (msg.game !== game()) return;
        on = new Set(msg.entrants.filter((e) => e.level && e.active).map((e) => e.level));
        render();
      },
    },
    show(levels) {
      names = levels;
      render();
      send({ type: "get_ladder", game: game() });
    },
  };
}
