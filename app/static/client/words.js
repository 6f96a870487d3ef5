// Game events in words, for the log; `names` gives each seat's name and `camps` each seat's camp.
import { cardName } from "./cards.js";
import { list, t } from "./i18n.js";

const cards = (shown) => list(shown.map(cardName));
const plus = (points) => `${points > 0 ? "+" : ""}${points}`;

// "ronda", "double ronda", "tringa": a declaration's kind in words; with its rank when shown.
export function declarationName(kind, rank) {
  const word = t(`declaration.${kind}`);
  return rank === null || rank === undefined ? word : t("declaration.of", { kind: word, rank });
}

// "a ronda of 5s": what a seat's hand declares, as the server says it (the view's `holding`).
export function holdingName(holding) {
  return holding ? declarationName(holding.kind, holding.rank) : "";
}

// A seat's name, told apart from every other seat's: three "greedy bot"s are "greedy bot #1",
// "#2" and "#3" (their seat numbers, counted from 1).
export function seatName(game, seat) {
  const info = game.seats[seat];
  const numbered = (s) => t("seat.numbered", { n: s + 1 });
  if (!info) return numbered(seat);
  const name = info.name || numbered(seat);
  const twins = game.seats.filter((other) => (other.name || numbered(other.seat)) === name).length;
  return twins > 1 ? `${name} #${seat + 1}` : name;
}

export function campName(game, camp) {
  const members = game.seats.filter((seat) => game.camps[seat.seat] === camp).map((seat) => seatName(game, seat.seat));
  return members.join(" & ") || t("camp.numbered", { n: camp + 1 });
}

const reason = (name) => {
  const key = `reason.${name}`;
  const word = t(key);
  return word === key ? name.replaceAll("_", " ") : word;
};

export function describe(event, game) {
  const who = (seat) => seatName(game, seat);
  const camp = (index) => campName(game, index);
  switch (event.type) {
    case "round_start": return t("event.round_start", { round: event.round + 1, dealer: who(event.dealer) });
    case "deal": return t(event.last_deal ? "event.deal_last" : "event.deal", { deal: event.deal + 1, stock: event.stock })
      + (event.hand ? ` ${t("event.deal_hand", { cards: cards(event.hand) })}` : "");
    case "play": return t("event.play", { who: who(event.seat), card: cardName(event.card) });
    case "drop": return t("event.drop", { card: cardName(event.card) });
    case "capture": return event.taken.length
      ? t(event.reason === "run" ? "event.capture_run" : "event.capture", { who: who(event.seat), cards: cards(event.taken), card: cardName(event.card) })
      : t("event.capture_nothing", { who: who(event.seat), card: cardName(event.card) });
    case "pile_formed": return t("event.pile_formed", { who: who(event.seat), cards: cards(event.cards) });
    case "pile_joined": return t("event.pile_joined", { who: who(event.seat), card: cardName(event.card), step: event.step });
    case "pile_collected": return t("event.pile_collected", { who: who(event.seat), cards: cards(event.cards) });
    case "declaration": return t("event.declaration", { who: who(event.seat), what: declarationName(event.kind, event.rank) });
    case "pass": return t("event.pass", { who: who(event.seat) });
    case "reveal": return t("event.reveal", {
      shown: event.declarations.map((d) => `${who(d.seat)} ${declarationName(d.kind, d.rank)}`).join("; ") || t("event.none") });
    case "declarations_resolved": return t("event.declarations_resolved", {
      awards: list(event.awards.map((a) => `${camp(a.camp)} ${plus(a.points)}`)) || t("event.nothing_awarded") });
    case "score": return t("event.score", { camp: camp(event.camp), points: plus(event.points), reason: reason(event.reason) });
    case "table_swept": return t("event.table_swept", { who: who(event.seat), cards: cards(event.cards) });
    case "round_end": return t("event.round_end", { round: event.round + 1, scores: event.scores.join(" – ") });
    case "game_over":
      if (event.reason === "aborted") return t("event.aborted", { who: who(event.seat) });
      if (event.reason === "forfeit") return t("event.forfeit", { who: who(event.seat), camp: camp(event.winner) });
      if (event.reason === "resigned") return t("event.resigned", { who: who(event.seat), camp: camp(event.winner) });
      if (event.reason === "declined") return t("result.declined");
      if (event.reason === "abandoned") return t("result.abandoned_why");
      return t("event.game_over", { camp: camp(event.winner), scores: event.scores.join(" – ") });
    case "turn_timeout": return t("event.turn_timeout", { who: who(event.seat), missed: event.missed ?? 1, bot: event.bot });
    case "seat_left": return t("event.seat_left", { who: who(event.seat), bot: event.bot });
    case "seat_taken": return t("event.seat_taken", { name: event.name, seat: event.seat + 1 });
    default: return event.type;
  }
}
