// An outside bot for Node.js 18+, with nothing but fetch: registers, enters a match against the
// house's greedy bot, and plays it from its turn stream (Server-Sent Events).
//
//     node examples/outside_bot.mjs http://127.0.0.1:8000 [games]
//
// Each `turn` event carries the seat's view (legal actions, version), so one request a turn is
// enough: the action, sent with If-Match. A 412 means the turn has passed (its time ran out);
// the next turn event brings the next one. `game_over` and `match_over` say when it is done.
// Unknown event types are skipped, as the API's versioning policy asks.

const [base, gamesArg] = process.argv.slice(2);
const games = Number(gamesArg ?? 20);
const counts = { requests: 0, tooMany: 0, turns: 0, stale: 0, gamesOver: 0 };
const RANK_ORDER = [1, 2, 3, 4, 5, 6, 7, 10, 11, 12];
const rank = (card) => Number(card.slice(0, -1));

async function call(method, path, { body, token, ifMatch } = {}) {
  for (;;) {
    counts.requests += 1;
    const headers = { "Content-Type": "application/json" };
    if (token) headers.Authorization = `Bearer ${token}`;
    if (ifMatch !== undefined) headers["If-Match"] = `"${ifMatch}"`;
    const answer = await fetch(base + path, { method, headers, body: body && JSON.stringify(body) });
    if (answer.status !== 429) return answer;
    counts.tooMany += 1; // wait as the server says, then try again
    await new Promise((done) => setTimeout(done, 1000 * Number(answer.headers.get("Retry-After") ?? 1)));
  }
}

// The play whose rank takes the most table cards, else the lowest card; declare when offered.
function choose(view) {
  const legal = view.legal_actions;
  const declaration = legal.find((action) => action.type === "declare");
  if (declaration) return declaration;
  const plays = legal.filter((action) => action.type === "play");
  if (!plays.length) return legal[0];
  const onTable = (card) => view.table.filter((other) => rank(other) === rank(card)).length;
  return plays.reduce((best, action) => {
    const better = onTable(action.card) - onTable(best.card) || RANK_ORDER.indexOf(rank(best.card)) -
      RANK_ORDER.indexOf(rank(action.card));
    return better > 0 ? action : best;
  });
}

// Server-Sent Events from a fetch body: yields {event, id, data}; comments (keep-alives) are skipped.
async function* events(body) {
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const chunk of body) {
    buffered += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buffered.indexOf("\n\n")) >= 0) {
      const message = { event: "message", data: "" };
      for (const line of buffered.slice(0, end).split("\n")) {
        const [field, ...rest] = line.split(":");
        const value = rest.join(":").replace(/^ /, "");
        if (field === "event" || field === "id") message[field] = value;
        else if (field === "data") message.data += value;
      }
      buffered = buffered.slice(end + 2);
      if (message.data) yield message;
    }
  }
}

const started = Date.now();
const registered = await (await call("POST", "/bots", { body: { name: "Node bot", description: "fetch only" } })).json();
const token = registered.token;
// The stream opens before the match starts, so no turn comes before it.
const stream = await call("GET", "/bots/me/stream", { token });
const match = await (await call("POST", "/matches", {
  body: { bots: [registered.bot.entrant, "greedy"], games, rules: { preset: "simple" }, move_seconds: 10 },
})).json();

let over = null;
for await (const message of events(stream.body)) {
  const notice = JSON.parse(message.data);
  if (notice.match_id !== match.id) continue;
  if (message.event === "turn") {
    counts.turns += 1;
    const view = notice.view;
    if (!view.awaiting.includes(view.seat)) continue;
    const acted = await call("POST", `/games/${notice.game_id}/actions`, { body: choose(view), token, ifMatch: view.version });
    if (acted.status !== 200) counts.stale += 1; // 412: the turn passed; 409: the game ended
    else await acted.body.cancel();
  } else if (message.event === "game_over") {
    counts.gamesOver += 1;
  } else if (message.event === "match_over") {
    over = notice;
    break;
  }
}
const me = over.entrants[over.entrant];
console.log(JSON.stringify({
  match_id: match.id, games: over.games_done, games_over_events: counts.gamesOver, turns: counts.turns,
  requests: counts.requests, too_many_requests: counts.tooMany, stale: counts.stale, timeouts: me.timeouts,
  wins: me.wins, mean_ms_per_move: me.mean_ms_per_move, forfeited_by: over.forfeited_by,
  seconds: (Date.now() - started) / 1000,
}));
process.exit(0);
