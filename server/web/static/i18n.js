// The page's words, through one mechanism: every visible string is a key of the message
// catalogues in i18n/*.json (English and Japanese), looked up with t(key, params). The language
// is the one chosen with the switch (kept in this browser), else the first of the browser's
// languages the page has, else English. Static text in the HTML carries data-i18n attributes
// and is translated once at load; a change of language reloads the page.

export const LANGUAGES = { en: "English", ja: "日本語" };
const STORE = "discus.lang";

function pick() {
  const kept = localStorage.getItem(STORE);
  if (kept && kept in LANGUAGES) return kept;
  for (const tag of navigator.languages || [navigator.language || "en"]) {
    const base = String(tag).toLowerCase().split("-")[0];
    if (base in LANGUAGES) return base;
  }
  return "en";
}

async function load(lang) {
  const res = await fetch(`i18n/${lang}.json`);
  if (!res.ok) throw new Error(`no catalogue for ${lang}`);
  return res.json();
}

export const lang = pick();
const english = await load("en");
const catalogue = lang === "en" ? english : await load(lang).catch(() => english);
const plurals = new Intl.PluralRules(lang);

/** The text of ``key`` in the page's language, ``{name}`` replaced from ``params``; a key whose
 * entry is an object of plural forms ({one, other}) picks one by ``params.n``. An unknown key is
 * shown as itself (and said on the console) so a missing entry is seen, never hidden. */
export function t(key, params = {}) {
  let entry = catalogue[key] ?? english[key];
  if (entry === undefined) { console.warn(`i18n: no entry for ${key}`); return key; }
  if (typeof entry === "object") entry = entry[plurals.select(Number(params.n))] ?? entry.other;
  return entry.replace(/\{(\w+)\}/g, (all, name) => (name in params ? String(params[name]) : all));
}

/** Whether the catalogues have ``key``. */
export function has(key) {
  return key in catalogue || key in english;
}

/** ``text`` from the server (a colour, a game's title) in the page's language when the
 * catalogue has it under ``prefix`` + text, else as sent. */
export function tr(prefix, text) {
  const key = prefix + text;
  return has(key) ? t(key) : text;
}

/** A wait of ``seconds`` as people say it: seconds under a minute and a half, then minutes
 * (rounded up), then hours and minutes (as the server's own English says it). */
export function waitText(seconds) {
  const s = Math.max(1, Math.ceil(seconds));
  if (s < 90) return t("wait.seconds", { n: s });
  const minutes = Math.ceil(s / 60);
  if (minutes < 90) return t("wait.minutes", { n: minutes });
  return t("wait.hours", { h: Math.floor(minutes / 60), m: String(minutes % 60).padStart(2, "0") });
}

/** A refusal (an error message) in words: the server's own English (it may carry details), or
 * in another language the catalogue's sentence for its code where it has one, with the wait
 * the server gave (``detail.retry_after``) said in full, never "a little" for an hour. */
export function errorText(msg) {
  if (lang === "en" || !has(`error.${msg.code}`)) return msg.message;
  const wait = msg.detail?.retry_after;
  if (typeof wait !== "number") return t(`error.${msg.code}`);
  if (has(`error.${msg.code}_in`)) return t(`error.${msg.code}_in`, { wait: waitText(wait) });
  return `${t(`error.${msg.code}`)}${t("error.retry_in", { wait: waitText(wait) })}`;
}

const ATTRS = ["title", "aria-label", "placeholder"];

/** Translate the marked elements under ``root``: data-i18n sets the text, data-i18n-title,
 * data-i18n-aria-label and data-i18n-placeholder the attributes. */
export function translate(root = document) {
  for (const el of root.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  for (const attr of ATTRS) {
    for (const el of root.querySelectorAll(`[data-i18n-${attr}]`)) el.setAttribute(attr, t(el.getAttribute(`data-i18n-${attr}`)));
  }
}

/** Fill the language switch ``select``: the page's language chosen, a change kept and applied. */
export function languageSwitch(select) {
  select.replaceChildren(...Object.entries(LANGUAGES).map(([code, name]) =>
    Object.assign(document.createElement("option"), { value: code, textContent: name, selected: code === lang })));
  select.addEventListener("change", () => {
    localStorage.setItem(STORE, select.value);
    location.reload();
  });
}

document.documentElement.lang = lang;
translate();
