// The page's own preferences, kept in localStorage: sounds (with a mute switch) and light or
// dark. Sounds are made with WebAudio (short tones, no files to fetch); the last one played is
// written to <body data-sound> so a test can see which one the page chose.

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

function showSound(button) {
  const on = !muted();
  button.textContent = on ? "🔊" : "🔇";
  button.setAttribute("aria-pressed", String(on));
  button.setAttribute("aria-label", on ? "Sounds on (click to mute)" : "Sounds muted (click for sounds)");
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
  button.textContent = dark ? "☀️" : "🌙";
  button.setAttribute("aria-label", dark ? "Light mode" : "Dark mode");
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
