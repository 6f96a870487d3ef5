// The Spanish deck, drawn here in SVG: oros (coins), copas (cups), espadas (swords), bastos (clubs);
// 1 to 7 show as many pips, 10 (sota), 11 (caballo) and 12 (rey) show their figure. The frame's
// breaks are the deck's "pinta" (none for oros, one for copas, two for espadas, three for bastos),
// so a suit reads from the edge of a fanned card as on a printed deck.

import { h } from "./dom.js";
import { t } from "./i18n.js";

const FIGURES = new Set([10, 11, 12]); // sota, caballo, rey
const INK = { o: "#8a6508", c: "#7a1c15", e: "#234a86", b: "#1f4d1c" };
const CLOTH = { o: "#e0b12f", c: "#c8372d", e: "#5b7fb8", b: "#3f8a3a" };

const SUIT_SYMBOLS = {
  o: `<circle cx="20" cy="20" r="15" fill="#e0b12f" stroke="#8a6508" stroke-width="2"/>
      <circle cx="20" cy="20" r="8" fill="none" stroke="#8a6508" stroke-width="2"/>
      <circle cx="20" cy="20" r="2.5" fill="#8a6508"/>`,
  c: `<path d="M8 7 H32 C32 19 27 24 22 25 V31 H28 V35 H12 V31 H18 V25 C13 24 8 19 8 7 Z"
        fill="#c8372d" stroke="#7a1c15" stroke-width="1.5"/>
      <path d="M11 10 H29" stroke="#f2c14e" stroke-width="2"/>`,
  e: `<path d="M20 3 L23 9 V27 H17 V9 Z" fill="#9fb4d0" stroke="#234a86" stroke-width="1.5"/>
      <rect x="10" y="27" width="20" height="3.5" rx="1.5" fill="#234a86"/>
      <rect x="18" y="30" width="4" height="6" fill="#6b4a1f"/><circle cx="20" cy="37.5" r="2" fill="#234a86"/>`,
  b: `<path d="M24 4 C29 5 30 10 27 13 L17 36 C16 38 12 37 13 34 L21 11 C19 8 20 3 24 4 Z"
        fill="#3f8a3a" stroke="#1f4d1c" stroke-width="1.5"/>
      <circle cx="22" cy="16" r="1.8" fill="#1f4d1c"/><circle cx="19" cy="24" r="1.8" fill="#1f4d1c"/>`,
};

// Where the pips of 1 to 7 sit on a 50 × 75 face, as on a printed deck.
const PIPS = {
  1: [[25, 37.5]],
  2: [[25, 20], [25, 55]],
  3: [[25, 16], [25, 37.5], [25, 59]],
  4: [[16, 20], [34, 20], [16, 55], [34, 55]],
  5: [[16, 18], [34, 18], [25, 37.5], [16, 57], [34, 57]],
  6: [[16, 16], [34, 16], [16, 37.5], [34, 37.5], [16, 59], [34, 59]],
  7: [[16, 14], [34, 14], [25, 26], [16, 38], [34, 38], [16, 60], [34, 60]],
};
const PIP_SIZE = 14;

// The figures: a page standing, a rider on his horse, a crowned king; each in the suit's cloth,
// holding the suit's sign.
const FIGURE_BODIES = {
  10: (cloth, ink) => `<circle cx="22" cy="21" r="5" fill="#f1d2b0" stroke="${ink}"/>
      <path d="M17 18 Q22 11 27 18 Z" fill="${ink}"/>
      <path d="M15 29 H29 L32 54 H12 Z" fill="${cloth}" stroke="${ink}"/>
      <path d="M16 54 V66 M28 54 V66" stroke="${ink}" stroke-width="3"/>
      <path d="M29 31 L35 38" stroke="${ink}" stroke-width="2.5"/>`,
  11: (cloth, ink) => `<path d="M9 44 Q12 36 24 38 L33 36 L38 26 L43 28 L41 34 L36 44 Q34 52 24 52 Q13 52 9 44 Z"
        fill="#a9754a" stroke="${ink}"/>
      <path d="M13 50 L11 66 M18 52 L18 66 M30 52 L31 66 M35 48 L38 66" stroke="${ink}" stroke-width="2.5"/>
      <circle cx="23" cy="19" r="4.5" fill="#f1d2b0" stroke="${ink}"/>
      <path d="M18 25 H28 L29 40 H17 Z" fill="${cloth}" stroke="${ink}"/>
      <path d="M28 28 L34 22" stroke="${ink}" stroke-width="2.5"/>`,
  12: (cloth, ink) => `<path d="M17 15 L19 10 L22 14 L25 9 L28 14 L31 10 L33 15 Z" fill="#e0b12f" stroke="${ink}"/>
      <circle cx="25" cy="20" r="5" fill="#f1d2b0" stroke="${ink}"/>
      <path d="M21 23 Q25 30 29 23 Z" fill="#eee" stroke="${ink}" stroke-width=".6"/>
      <path d="M15 29 H35 L40 66 H10 Z" fill="${cloth}" stroke="${ink}"/>
      <path d="M25 29 V66" stroke="#e0b12f" stroke-width="2"/>
      <path d="M34 32 L39 36" stroke="${ink}" stroke-width="2.5"/>`,
};
const HELD = { 10: [32, 30, 12], 11: [30, 9, 12], 12: [35, 28, 12] }; // x, y, size of the sign held

// One <symbol> per suit, in the page once: every pip is a <use> of it.
const sprite = document.createElementNS("http://www.w3.org/2000/svg", "svg");
sprite.setAttribute("aria-hidden", "true");
sprite.classList.add("sprite");
sprite.innerHTML = Object.entries(SUIT_SYMBOLS)
  .map(([suit, body]) => `<symbol id="suit-${suit}" viewBox="0 0 40 40">${body}</symbol>`).join("")
  + `<defs><pattern id="back-weave" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
      <rect width="6" height="6" fill="#8c2a22"/><rect width="3" height="6" fill="#a83a30"/></pattern></defs>`;
document.body.prepend(sprite);

export const rankOf = (card) => Number(card.slice(0, -1));
export const suitOf = (card) => card.slice(-1);

// "11 (caballo) of oros", in the player's language (suits and figures by their names there).
export function cardName(card) {
  const rank = rankOf(card);
  const named = FIGURES.has(rank) ? t("card.figure", { rank, figure: t(`figure.${rank}`) }) : rank;
  return t("card.name", { rank: named, of_suit: t(`suit_of.${suitOf(card)}`) });
}

const use = (suit, x, y, size) => `<use href="#suit-${suit}" x="${x - size / 2}" y="${y - size / 2}" width="${size}" height="${size}"/>`;

// The frame, broken by the pinta: the gaps at the top and bottom edges say the suit.
function frame(suit) {
  const gaps = { o: 0, c: 1, e: 2, b: 3 }[suit];
  const breaks = Array.from({ length: gaps }, (_, i) => 21 + i * 4);
  const edge = (y) => breaks.length
    ? [5, ...breaks.flatMap((x) => [x, x + 2]), 45].reduce((path, x, i) => path + (i % 2 ? `L${x} ${y}` : `M${x} ${y}`), "")
    : `M5 ${y}L45 ${y}`;
  return `<path d="${edge(4)}${edge(71)}M5 4V71M45 4V71" fill="none" stroke="${INK[suit]}" stroke-width="1"/>`;
}

const faces = new Map();
function face(card) {
  if (faces.has(card)) return faces.get(card);
  const [rank, suit] = [rankOf(card), suitOf(card)];
  const middle = FIGURE_BODIES[rank]
    ? FIGURE_BODIES[rank](CLOTH[suit], INK[suit]) + use(suit, ...HELD[rank])
    : PIPS[rank].map(([x, y]) => use(suit, x, y, rank === 1 ? 26 : PIP_SIZE)).join("");
  const corner = `font-family="system-ui, sans-serif" font-weight="700" font-size="9" fill="${INK[suit]}"`;
  const svg = `<svg class="face" viewBox="0 0 50 75" aria-hidden="true">${frame(suit)}${middle}
    <text x="8" y="12" text-anchor="middle" ${corner}>${rank}</text>
    <text x="42" y="69" text-anchor="middle" transform="rotate(180 42 66)" ${corner}>${rank}</text></svg>`;
  faces.set(card, svg);
  return svg;
}

// A card as a button when `onPick` is given (a legal move), else as a picture.
export function cardElement(card, { onPick, legal = false, fresh = false } = {}) {
  const element = document.createElement(onPick ? "button" : "div");
  element.className = `card suit-${suitOf(card)}${legal ? " legal" : ""}${fresh ? " fresh" : ""}`;
  element.dataset.card = card;
  element.title = cardName(card);
  // The name a screen reader gives is the card's words; the drawing is a picture of them.
  element.innerHTML = `${face(card)}<span class="visually-hidden">${cardName(card)}</span>`;
  if (onPick) element.addEventListener("click", () => onPick(card));
  else if (!legal) element.tabIndex = -1;
  return element;
}

const BACK = `<svg class="face" viewBox="0 0 50 75" aria-hidden="true"><rect x="1" y="1" width="48" height="73" rx="4" fill="#f7efe0"/>
  <rect x="4" y="4" width="42" height="67" rx="2" fill="url(#back-weave)" stroke="#5c1710" stroke-width="1.2"/>
  <circle cx="25" cy="37.5" r="9" fill="#f7efe0" stroke="#5c1710" stroke-width="1.2"/>
  <path d="M25 30 L31 37.5 L25 45 L19 37.5 Z" fill="#e0b12f" stroke="#5c1710"/></svg>`;

export function cardBack() {
  const element = document.createElement("div");
  element.className = "card back";
  element.setAttribute("aria-hidden", "true");
  element.innerHTML = BACK;
  return element;
}

export function cardRow(cards, options) {
  const row = document.createElement("div");
  row.className = "cards";
  for (const card of cards) row.append(cardElement(card, options?.(card)));
  return row;
}

// The middle of the felt, as the table and the replay both draw it: a heading with the stock's
// count, the cards laid (each given `laid(card)`'s options) or "empty", `between` (the cards just
// taken), then the pile.
export function tableParts({ table, pile, stock_count: stock }, { laid, between = null } = {}) {
  return [
    h("h2", {}, t("table.table"), " ", h("span", { class: "stock" }, `· ${t("table.stock", { n: stock })}`)),
    table.length ? Object.assign(cardRow(table, laid), { id: "table-cards" }) : h("p", { class: "empty" }, t("table.empty")),
    between,
    pile.length ? h("div", {}, h("h3", {}, t("table.pile")), cardRow(pile)) : null,
  ];
}
