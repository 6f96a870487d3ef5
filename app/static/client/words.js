// Game events in words, for the log; `names` gives each seat's name and `camps` each seat's camp.
import { cardName } from "./cards.js";

const REASONS = {
  match: "a match", run: "a run", darba: "darba (same rank as the last card)", hbel: "hbel", joj_hbal: "joj hbal",
  streak_removed: "the streak passed on", missa: "missa (table cleared)", caida: "caída", bkhamsa: "caída ×3",
  bachra: "caída ×4", bwahed: "pile of 2", bkhemsa: "pile of 3", b3echra: "pile of 4", declaration: "declarations",
  undeclared_penalty: "an undeclared holding", dealer_last_card: "the dealer's last card", card_points: "cards captured beyond the share",
};

const cards = (list) => list.map(cardName).join(", ");

// "a ronda of 5s": what a seat's hand declares, as the server says it (the view's `holding`).
export function holdingName(holding) {
  return holding ? `a ${holding.kind.replace("_", " ")} of ${holding.rank}s` : "";
}

// A seat's name, told apart from every other seat's: three "greedy bot"s are "greedy bot #1",
// "#2" and "#3" (their seat numbers, counted from 1).
export function seatName(game, seat) {
  const info = game.seats[seat];
  if (!info) return `seat ${seat + 1}`;
  const name = info.name || `Seat ${seat + 1}`;
  const twins = game.seats.filter((other) => (other.name || `Seat ${other.seat + 1}`) === name).length;
  return twins > 1 ? `${name} #${seat + 1}` : name;
}

export function campName(game, camp) {
  const members = game.seats.filter((seat) => game.camps[seat.seat] === camp).map((seat) => seatName(game, seat.seat));
  return members.join(" & ") || `camp ${camp}`;
}

export function describe(event, game) {
  const who = (seat) => seatName(game, seat);
  const camp = (index) => campName(game, index);
  switch (event.type) {
    case "round_start": return `Round ${event.round + 1} begins; ${who(event.dealer)} deals.`;
    case "deal": return `Deal ${event.deal + 1}: ${event.stock} cards left in the stock${event.last_deal ? " (last deal)" : ""}.`
      + (event.hand ? ` Your hand: ${cards(event.hand)}.` : "");
    case "play": return `${who(event.seat)} plays the ${cardName(event.card)}.`;
    case "drop": return `The ${cardName(event.card)} stays on the table.`;
    case "capture": return event.taken.length
      ? `${who(event.seat)} takes ${cards(event.taken)} with the ${cardName(event.card)}${event.reason === "run" ? " (a run)" : ""}.`
      : `${who(event.seat)} captures with the ${cardName(event.card)}, taking no card from the table.`;
    case "pile_formed": return `${who(event.seat)} starts a pile: ${cards(event.cards)}.`;
    case "pile_joined": return `${who(event.seat)} adds the ${cardName(event.card)} to the pile (${event.step}).`;
    case "pile_collected": return `${who(event.seat)} collects the pile: ${cards(event.cards)}.`;
    case "declaration": return `${who(event.seat)} declares ${event.kind.replace("_", " ")}${event.rank ? ` of ${event.rank}s` : ""}.`;
    case "pass": return `${who(event.seat)} declares nothing.`;
    case "reveal": return `Declarations shown: ${event.declarations.map((d) => `${who(d.seat)} ${d.kind.replace("_", " ")} of ${d.rank}s`).join("; ") || "none"}.`;
    case "declarations_resolved": return `Declarations: ${event.awards.map((a) => `${camp(a.camp)} ${a.points > 0 ? "+" : ""}${a.points}`).join(", ") || "nothing awarded"}.`;
    case "score": return `${camp(event.camp)} ${event.points >= 0 ? "+" : ""}${event.points} for ${REASONS[event.reason] || event.reason.replaceAll("_", " ")}.`;
    case "table_swept": return `${who(event.seat)}, the last to capture, takes what is left: ${cards(event.cards)}.`;
    case "round_end": return `Round ${event.round + 1} ends. Scores: ${event.scores.join(" – ")}.`;
    case "game_over":
      if (event.reason === "aborted") return `Game aborted: ${who(event.seat)} never made a first move in time.`;
      if (event.reason === "forfeit") return `Game over: ${who(event.seat)} missed three turns in a row; ${camp(event.winner)} win by forfeit.`;
      return `Game over: ${camp(event.winner)} win${game.seats.filter((s) => game.camps[s.seat] === event.winner).length > 1 ? "" : "s"} ${event.scores.join(" – ")}.`;
    case "turn_timeout": return `${who(event.seat)} ran out of time (${event.missed ?? 1} in a row); the ${event.bot} bot played for them.`;
    case "seat_left": return `${who(event.seat)} left; the ${event.bot} bot plays the seat now.`;
    case "seat_taken": return `${event.name} takes seat ${event.seat + 1}.`;
    default: return event.type;
  }
}
