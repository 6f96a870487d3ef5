// The public HTTP API, as every client should call it: problem+json errors become Problems,
// a 429 waits as long as Retry-After says and tries again.
import { t } from "./i18n.js";

export class Problem extends Error {
  constructor(status, body) {
    super(body.detail || body.title || `HTTP ${status}`);
    this.status = status;
    this.code = body.code;
    this.body = body;
  }
}

export function errorText(error) {
  if (error instanceof TypeError) return "the server could not be reached (is the network down?)"; // fetch's own failure
  return error.code ? `${error.message} (${error.code})` : String(error.message || error);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export async function call(method, path, options = {}) {
  return (await request(method, path, options)).data;
}

// A page of a listing: its items, and the listing's place from X-Pagination (page, total_pages...).
export async function getPage(path, options = {}) {
  const { data, headers } = await request("GET", path, options);
  return { items: data, pagination: JSON.parse(headers.get("X-Pagination") || "{}") };
}

async function request(method, path, { body, token, version } = {}) {
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
    const data = response.status === 204 ? null : await response.json().catch(() => ({}));
    if (!response.ok) throw new Problem(response.status, data);
    return { data, headers: response.headers };
  }
}

export const get = (path, options) => call("GET", path, options);
export const post = (path, body, options = {}) => call("POST", path, { ...options, body });

// A game's event log after event `after` (the whole log by default) as this viewer (`token`, or a
// spectator) may see it, page by page.
export async function eventsAfter(gameId, token, after = 0) {
  const events = [];
  for (;;) {
    const page = await get(`/games/${gameId}/events?after=${events.at(-1)?.id ?? after}&limit=2000`, { token });
    events.push(...page);
    if (page.length < 2000) return events;
  }
}

export async function claimSeat(gameId, seat, name, token) {
  return post(`/games/${gameId}/seats/${seat}`, { name: name || t("name.guest") }, { token });
}
