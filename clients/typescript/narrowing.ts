// A client narrows the Event union on `type`: each branch sees only its kind's fields.
import type { components } from "./ronda";

type Event = components["schemas"]["Event"];
type GameView = components["schemas"]["GameView"];

export function describe(event: Event): string {
  switch (event.type) {
    case "capture":
      return `seat ${event.seat} takes ${event.taken.join(" ")} with ${event.card}`;
    case "score":
      return `camp ${event.camp} scores ${event.points} (${event.reason})`;
    case "game_over":
      return `camp ${event.winner} wins, seed ${event.seed}`;
    default:
      return event.type;
  }
}

export function myTurn(view: GameView): boolean {
  return view.seat !== null && view.awaiting.includes(view.seat);
}
