// The few element builders the page's modules share, so each view builds its nodes the same
// way: text only ever through textContent (nothing a player wrote is parsed as HTML).

const SVG_NS = "http://www.w3.org/2000/svg";

/** An element with ``text`` (if any) as its text and ``cls`` as its class. */
export function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

/** A button (not a submit button) calling ``onClick``; ``aria`` names it where the text
 * alone would not. */
export function button(text, onClick, cls = "", aria = "") {
  const b = el("button", text, cls);
  b.type = "button";
  if (aria) b.setAttribute("aria-label", aria);
  b.addEventListener("click", onClick);
  return b;
}

/** A link that downloads ``href`` (a file the server serves), shown as a button. */
export function downloadLink(href, label, aria) {
  const a = Object.assign(document.createElement("a"), { href, textContent: label, className: "button" });
  a.setAttribute("download", "");
  if (aria) a.setAttribute("aria-label", aria);
  return a;
}

/** An SVG element with ``attrs``. */
export function svg(name, attrs) {
  const node = document.createElementNS(SVG_NS, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}
