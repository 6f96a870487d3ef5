// Cards that travel: a card played slides from its hand (or its seat) to the table, cards taken
// (and the viewer's card that took them) sweep to the taker's seat. The page is drawn anew on every change, so each move is a FLIP: the
// cards' places are read before the new page is drawn, and each card is sent from its old place
// to its new one. Under prefers-reduced-motion nothing moves.
const TRAVEL_MS = 380;
const SWEEP_MS = 520;

const still = () => matchMedia("(prefers-reduced-motion: reduce)").matches;

// Where each card on the table or in the hand is now, with a copy to draw its sweep from.
export function cardPlaces() {
  const places = new Map();
  for (const element of document.querySelectorAll("#table-cards > .card, #hand .card[data-card]")) {
    places.set(element.dataset.card, { rect: element.getBoundingClientRect(), copy: element.cloneNode(true),
      onTable: !!element.closest("#table-cards") });
  }
  return places;
}

const centre = (rect) => ({ x: rect.left + rect.width / 2, y: rect.top + rect.height / 2 });

function travel(element, from) {
  const to = element.getBoundingClientRect();
  const [a, b] = [centre(from), centre(to)];
  element.animate([{ transform: `translate(${a.x - b.x}px, ${a.y - b.y}px)` }, { transform: "none" }],
    { duration: TRAVEL_MS, easing: "cubic-bezier(.2,.7,.3,1)" });
}

function sweep(place, toward) {
  const ghost = place.copy;
  Object.assign(ghost.style, { position: "fixed", left: `${place.rect.left}px`, top: `${place.rect.top}px`,
    width: `${place.rect.width}px`, height: `${place.rect.height}px`, margin: 0, zIndex: 20, pointerEvents: "none" });
  ghost.classList.add("sweeping");
  document.body.append(ghost);
  const [a, b] = [centre(place.rect), centre(toward)];
  ghost.animate([{ transform: "none", opacity: 1 }, { transform: `translate(${b.x - a.x}px, ${b.y - a.y}px) scale(.45)`, opacity: 0.2 }],
    { duration: SWEEP_MS, easing: "ease-in" }).finished.then(() => ghost.remove(), () => ghost.remove());
}

// After the page is drawn: `before` from cardPlaces(), `lastMover` the seat of the last play in the
// log, `me` the viewer's seat. A card gone from the hand is the viewer's own move, drawn as soon as
// the server answers it, before the stream brings its events.
export function moveCards(before, lastMover, me) {
  if (still() || !before.size) return;
  const held = new Set([...document.querySelectorAll("#hand .card[data-card]")].map((element) => element.dataset.card));
  const mine = [...before].some(([card, place]) => !place.onTable && !held.has(card));
  const seatBox = document.querySelector(`.seat[data-seat="${mine ? me : lastMover}"]`);
  const fromSeat = seatBox?.getBoundingClientRect();
  const onTable = new Set();
  for (const element of document.querySelectorAll("#table-cards > .card")) {
    const card = element.dataset.card;
    onTable.add(card);
    const was = before.get(card);
    if (was && !was.onTable) travel(element, was.rect); // from the hand to the table
    else if (!was && fromSeat) travel(element, fromSeat); // another seat's card
  }
  if (!seatBox) return;
  for (const [card, place] of before) { // taken, the card that took them too: to the taker's pile
    if (!onTable.has(card) && !held.has(card)) sweep(place, fromSeat);
  }
}
