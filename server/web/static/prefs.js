// The page's own preferences, kept in localStorage: sounds (with a mute switch) and light or
// dark. Sounds are made with WebAudio (short tones, no files to fetch); the last one played is
// written to <body data-sound> so a test can see which one the page chose.
import { t } from "./i18n.js";

const MUTE_KEY = "discus.mute";
const THEME_KEY = "discus.theme";

// Each sound: [frequency Hz, start s, length s] notes, quiet and short.
const TONES = {
  move: [[660, 0, 0.06]],
  turn: [[523, 0, 0.08], [784, 0.09, 0.12]],
  over: [[784, 0, 0.12], [659, 0.13, 0.12], [523, 0.26, 0.22]],
};

let audio = null;

function muted() { return localStorage.getItem(MUTE_KEY) === "1"; }

/** Play ``kind`` (move, turn, over) unless muted. Browsers allow sound only after the person
 * touched the page; before that the tones are skipped quietly. */
export function playSound(kind) {
  if (muted() || !TONES[kind]) return;
  document.body.dataset.sound = kind;
  try {
    audio ??= new AudioContext();
    if (audio.state === "suspended") audio.resume();
    const t0 = audio.currentTime;
    for (const [freq, start, length] of TONES[kind]) {
      const osc = audio.createOscillator();
      const gain = audio.createGain();
      osc.frequency.value = freq;
      gain.gain.setValueAtTime(0.08, t0 + start);
      gain.gain.exponentialRampToValueAtTime(0.0001, t0 + start + length);
      osc.connect(gain).connect(audio.destination);
      osc.start(t0 + start);
      osc.stop(t0 + start + length + 0.02);
    }
  } catch { /* no audio device: the game goes on silently */ }
}

// The switches' icons are drawn, not emoji (which show as empty boxes without an emoji font).
const ICONS = {
  sound: '<path d="M3 9h4l5-4v14l-5-4H3z"/><path d="M16 8.5a5 5 0 0 1 0 7M18.5 6a8.5 8.5 0 0 1 0 12" fill="none"/>',
  muted: '<path d="M3 9h4l5-4v14l-5-4H3z"/><path d="M16 9l6 6M22 9l-6 6" fill="none"/>',
  moon: '<path d="M20 14.5A8.5 8.5 0 0 1 9.5 4 8.5 8.5 0 1 0 20 14.5z"/>',
  sun: '<circle cx="12" cy="12" r="4.5"/><path d="M12 1.5v3M12 19.5v3M1.5 12h3M19.5 12h3M4.6 4.6l2.1 2.1M17.3 17.3l2.1 2.1M4.6 19.4l2.1-2.1M17.3 6.7l2.1-2.1" fill="none"/>',
};

function icon(name) {
  return `<svg class="svg-icon" data-icon="${name}" viewBox="0 0 24 24" width="20" height="20" aria-hidden="true" ` +
    `fill="currentColor" stroke="currentColor" stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round">${ICONS[name]}</svg>`;
}

function showSound(button) {
  const on = !muted();
  button.innerHTML = icon(on ? "sound" : "muted");
  button.setAttribute("aria-pressed", String(on));
  button.setAttribute("aria-label", t(on ? "prefs.sound_on" : "prefs.sound_muted"));
}

function effectiveTheme() {
  const chosen = localStorage.getItem(THEME_KEY);
  if (chosen === "dark" || chosen === "light") return chosen;
  return matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

function showTheme(button) {
  const chosen = localStorage.getItem(THEME_KEY);
  if (chosen) document.documentElement.dataset.theme = chosen;
  else delete document.documentElement.dataset.theme;
  const dark = effectiveTheme() === "dark";
  button.innerHTML = icon(dark ? "sun" : "moon");
  button.setAttribute("aria-label", t(dark ? "prefs.light" : "prefs.dark"));
}

/** Wire the sound and theme switches; the theme follows the system until the person picks. */
export function initPrefs(soundButton, themeButton) {
  showSound(soundButton);
  showTheme(themeButton);
  soundButton.addEventListener("click", () => {
    localStorage.setItem(MUTE_KEY, muted() ? "0" : "1");
    showSound(soundButton);
  });
  themeButton.addEventListener("click", () => {
    localStorage.setItem(THEME_KEY, effectiveTheme() === "dark" ? "light" : "dark");
    showTheme(themeButton);
  });
  matchMedia("(prefers-color-scheme: dark)").addEventListener?.("change", () => showTheme(themeButton));
}
