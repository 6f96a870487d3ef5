// A bot's handling of its stream, written against each generated client: the messages narrow on
// `event`, and each branch sees its own payload's fields, typed (tsc --strict compiles this).
import { client } from "./generated/hey-api/client.gen";
import { playAction } from "./generated/hey-api/sdk.gen";
import type { BotStreamMessage, GameStreamMessage } from "./generated/hey-api/types.gen";
import * as orval from "./generated/orval/ronda";

client.setConfig({ baseUrl: "http://127.0.0.1:8000", auth: () => "rbot.example.token" });

export async function onNotice(message: BotStreamMessage): Promise<string> {
  switch (message.event) {
    case "turn": {
      const { game_id, version, view } = message.data;
      const answer = await playAction({ path: { game_id }, headers: { "If-Match": `"${version}"` },
                                        body: view.legal_actions[0] });
      return answer.data ? `now at version ${answer.data.game.version}` : `refused: ${answer.error?.code}`;
    }
    case "game_over":
      return `game ${message.data.game_id} won by camp ${message.data.view.winner}`;
    case "match_over": {
      const me = message.data.entrants[message.data.entrant];
      return `match ${message.data.match_id}: ${me.wins} wins, ${me.timeouts} timeouts`;
    }
  }
}

export function onGameMessage(message: GameStreamMessage): string {
  return message.event === "snapshot" ? `${message.data.hand?.length ?? 0} cards in hand` : message.data.type;
}

export async function onNoticeWithOrval(message: orval.BotStreamMessage): Promise<number | null> {
  if (message.event !== "turn") return null;
  const answer = await orval.playAction(message.data.game_id, message.data.view.legal_actions[0],
                                        { "If-Match": `"${message.data.version}"` });
  return answer.status;
}

// Notices, webhooks and a tournament's stream narrow on their discriminators in both clients.
import type { PlayerNotice, WebhookPayload, TournamentStreamMessage, CreateGameRequest } from "./generated/hey-api/types.gen";

export function onPlayerNotice(notice: PlayerNotice): string {
  return notice.type === "ticket_expired" ? `ticket ${notice.ticket_id}: ${notice.why}` : notice.type;
}

export function onWebhook(payload: WebhookPayload): string {
  return payload.type === "seat_taken" ? `${payload.data.name} sat at ${payload.data.taken_seat}` : payload.type;
}

export function onTournament(message: TournamentStreamMessage | orval.TournamentStreamMessage): string {
  return message.event === "standings" ? `revision ${message.data.revision}` : `round ${message.data.round}`;
}

export const quickGame: CreateGameRequest & orval.CreateGameRequest = { players: 2 };
