// The client's words in the player's language: one catalogue per language (i18n/<code>.json, the
// same keys in each), chosen from the browser unless the player chose one here, then remembered.
// Arabic reads right to left: the page's `dir` follows the language. Presets' and levels' summaries
// come from the catalogue too (a preset added later: the server's words); a problem's detail stays
// as the server says it.
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

// `t("seat.open", { n: 2 })`: the words for a key, with its {placeholders} filled in. Right to left,
// each filled-in value is isolated (U+2068 … U+2069): a name or card in Latin letters, "greedy bot
// #4", reads as written inside the Arabic sentence instead of being reordered by it.
export function t(key, params = {}) {
  const text = words[key] ?? english[key] ?? key;
  const isolate = RIGHT_TO_LEFT.has(current) ? (value) => `\u2068${value}\u2069` : String;
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in params ? isolate(params[name]) : whole));
}

// Items read as a list in the player's language ("a, b" or, in Arabic, "a، b").
export const list = (items) => items.join(t("list.comma"));

// A preset's or a bot level's summary in the player's language (the server says it in English).
export const presetSummary = (preset) => t(`preset_summary.${preset.name}`) === `preset_summary.${preset.name}`
  ? preset.summary : t(`preset_summary.${preset.name}`);
export const levelSummary = (level) => t(`level_summary.${level.level}`) === `level_summary.${level.level}`
  ? level.summary : t(`level_summary.${level.level}`);
