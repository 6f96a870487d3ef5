// The client's words in the player's language: one catalogue per language (i18n/<code>.json, the
// same keys in each), chosen from the browser unless the player chose one here, then remembered.
// Arabic reads right to left: the page's `dir` follows the language. Words from the server (a
// preset's summary, a problem's detail) stay as the server says them.
export const LANGUAGES = { en: "English", fr: "Français", ar: "العربية", es: "Español" };
const RIGHT_TO_LEFT = new Set(["ar"]);
const CHOSEN_KEY = "ronda:language";

let words = {};
let english = {};
let current = "en";

export function chosenLanguage() {
  const kept = localStorage.getItem(CHOSEN_KEY);
  if (kept in LANGUAGES) return kept;
  const asked = (navigator.languages || [navigator.language]).map((tag) => tag.toLowerCase().split("-")[0]);
  return asked.find((code) => code in LANGUAGES) || "en";
}

const catalogue = (code) => fetch(`/static/client/i18n/${code}.json`).then((response) => response.json());

export async function loadLanguage(code = chosenLanguage()) {
  [english, words] = await Promise.all([catalogue("en"), code === "en" ? null : catalogue(code)]);
  words ??= english;
  current = code;
  document.documentElement.lang = code;
  document.documentElement.dir = RIGHT_TO_LEFT.has(code) ? "rtl" : "ltr";
  for (const element of document.querySelectorAll("[data-i18n]")) element.textContent = t(element.dataset.i18n);
}

export const language = () => current;

// A time of day as the player's language writes it (`moment`: what Date takes).
export const timeOfDay = (moment) => new Date(moment).toLocaleTimeString(current);

// Kept for the next visits; the page is drawn again in it.
export function chooseLanguage(code) {
  localStorage.setItem(CHOSEN_KEY, code);
  location.reload();
}

// `t("seat.open", { n: 2 })`: the words for a key, with its {placeholders} filled in.
export function t(key, params = {}) {
  const text = words[key] ?? english[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in params ? String(params[name]) : whole));
}
