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

// A player's notices and an app's webhooks narrow on `type` too (issue 62, 6).
type PlayerNotice = components["schemas"]["PlayerNotice"];
type WebhookPayload = components["schemas"]["WebhookPayload"];
type TournamentStreamMessage = components["schemas"]["TournamentStreamMessage"];

export function onNotice(notice: PlayerNotice): string {
  switch (notice.type) {
    case "your_turn":
      return `play game ${notice.game_id} at version ${notice.version} before ${notice.deadline ?? "no deadline"}`;
    case "game_over":
      return `${notice.won ? "won" : "lost"}: ${notice.outcome.reason}, ${notice.scores.join("-")}`;
    case "rematch_offered":
      return `${notice.asked_by.name} asks for game ${notice.game_id}`;
    default:
      return notice.type;
  }
}

export function onWebhook(payload: WebhookPayload): string {
  switch (payload.type) {
    case "matched":
      return `${payload.data.player_id} seated at ${payload.data.seat} of ${payload.data.game_id}`;
    case "endpoint_disabled":
      return `disabled: ${payload.data.url}`;
    default:
      return `${payload.type} at ${payload.timestamp}`;
  }
}

export function onTournament(message: TournamentStreamMessage): number {
  return message.event === "round" ? message.data.pairings.length : message.data.standings.length;
}

// A field with a server default may be left out (openapi-typescript, its default options).
export const quickGame: components["schemas"]["CreateGameRequest"] = { players: 2 };
export const ticket: components["schemas"]["TicketRequest"] = { players: 2, rules: { preset: "classic" } };
