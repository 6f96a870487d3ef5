// The public HTTP API, as every client should call it: problem+json errors become Problems,
// a 429 waits as long as Retry-After says and tries again.

export class Problem extends Error {
  constructor(status, body) {
    super(body.detail || body.title || `HTTP ${status}`);
    this.status = status;
    this.code = body.code;
    this.body = body;
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export async function call(method, path, { body, token, version } = {}) {
  for (;;) {
    const headers = { Accept: "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (token) headers.Authorization = `Bearer ${token}`;
    if (version !== undefined) headers["If-Match"] = `"${version}"`;
    const response = await fetch(path, {
      method, headers, cache: "no-store", body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (response.status === 429) {
      await sleep(1000 * Number(response.headers.get("Retry-After") || 1));
      continue;
    }
    const data = await response.json().catch(() => ({}));
    if (!response.ok) throw new Problem(response.status, data);
    return data;
  }
}

export const get = (path, options) => call("GET", path, options);
export const post = (path, body, options = {}) => call("POST", path, { ...options, body });

// A game's whole event log as this viewer (`token`, or a spectator) may see it, page by page.
export async function allEvents(gameId, token) {
  const events = [];
  for (;;) {
    const page = await get(`/games/${gameId}/events?after=${events.at(-1)?.id ?? 0}&limit=2000`, { token });
    events.push(...page);
    if (page.length < 2000) return events;
  }
}

// A seat's token, kept so that a reload (or a shared device) returns to the game.
const seatKey = (gameId) => `ronda:seat:${gameId}`;

export function savedSeat(gameId) {
  try {
    return JSON.parse(localStorage.getItem(seatKey(gameId)));
  } catch {
    return null;
  }
}

export function saveSeat(gameId, seat, token) {
  localStorage.setItem(seatKey(gameId), JSON.stringify({ seat, token }));
}

export function forgetSeat(gameId) {
  localStorage.removeItem(seatKey(gameId));
}

export function playerName() {
  return localStorage.getItem("ronda:name") || "";
}

export function rememberName(name) {
  localStorage.setItem("ronda:name", name);
}

export async function claimSeat(gameId, seat, name) {
  rememberName(name);
  const claimed = await post(`/games/${gameId}/seats/${seat}`, { name: name || "Guest" });
  saveSeat(gameId, claimed.seat, claimed.token);
  return claimed;
}
