// Cards of the Spanish deck, drawn in SVG: oros (coins), copas (cups), espadas (swords), bastos (clubs).

export const SUITS = { o: "oros", c: "copas", e: "espadas", b: "bastos" };
const FIGURES = { 10: "sota", 11: "caballo", 12: "rey" };

const SUIT_SVG = {
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

export const rankOf = (card) => Number(card.slice(0, -1));
export const suitOf = (card) => card.slice(-1);

export function cardName(card) {
  const rank = rankOf(card);
  return `${FIGURES[rank] ? `${rank} (${FIGURES[rank]})` : rank} of ${SUITS[suitOf(card)]}`;
}

// A card as a button when `onPick` is given (a legal move), else as a picture.
export function cardElement(card, { onPick, legal = false, fresh = false } = {}) {
  const element = document.createElement(onPick ? "button" : "div");
  element.className = `card suit-${suitOf(card)}${legal ? " legal" : ""}${fresh ? " fresh" : ""}`;
  element.dataset.card = card;
  element.title = cardName(card);
  // The name a screen reader gives is the card's words; the corner numbers are pictures.
  element.innerHTML = `<span class="rank" aria-hidden="true">${rankOf(card)}</span>
    <svg viewBox="0 0 40 40" aria-hidden="true">${SUIT_SVG[suitOf(card)]}</svg>
    <span class="rank bottom" aria-hidden="true">${rankOf(card)}</span><span class="visually-hidden">${cardName(card)}</span>`;
  if (onPick) element.addEventListener("click", () => onPick(card));
  else if (!legal) element.tabIndex = -1;
  return element;
}

export function cardBack() {
  const element = document.createElement("div");
  element.className = "card back";
  element.setAttribute("aria-hidden", "true");
  return element;
}

export function cardRow(cards, options) {
  const row = document.createElement("div");
  row.className = "cards";
  for (const card of cards) row.append(cardElement(card, options?.(card)));
  return row;
}
