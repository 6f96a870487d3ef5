// What this browser remembers: each game's seat and token (so a reload returns to the seat), the
// player's name, and the player (their token acts for all their seats, from any device).
import { claimSeat, get, post } from "./api.js";
import { t } from "./i18n.js";

const PLAYER_KEY = "ronda:player";

export function savedPlayer() {
  try {
    return JSON.parse(localStorage.getItem(PLAYER_KEY));
  } catch {
    return null;
  }
}

function savePlayer(player, token) {
  localStorage.setItem(PLAYER_KEY, JSON.stringify({ id: player.id, name: player.name, token }));
  rememberName(player.name);
}

// The player this browser plays as: the one kept, or a new one with this name (asked once).
export async function ensurePlayer(name) {
  const kept = savedPlayer();
  if (kept) return kept;
  const created = await post("/players", { name: name || t("name.player") });
  savePlayer(created.player, created.token);
  return savedPlayer();
}

// Continue on this device as the player whose key (token) was copied from another.
export async function usePlayerKey(token) {
  const player = await get("/players/me", { token });
  savePlayer(player, token);
  return savedPlayer();
}

// The player is gone from this browser (their account deleted): their seats' tokens too.
export function forgetPlayer() {
  for (const key of Object.keys(localStorage)) {
    if (key === PLAYER_KEY || key.startsWith("ronda:seat:")) localStorage.removeItem(key);
  }
}

export function renamedPlayer(name) {
  const kept = savedPlayer();
  if (kept) savePlayer({ ...kept, name }, kept.token);
}

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

// Take a seat and keep its token. One seat a game in one browser: taking a second would lose the
// first seat's token (a creator opening their own invite), so it is refused, saying why.
export async function takeSeat(gameId, seat, name) {
  const held = savedSeat(gameId);
  if (held) {
    throw new Error(t("join.already_yours", { n: held.seat + 1 }));
  }
  rememberName(name);
  const me = await ensurePlayer(name); // the seat is the player's: listed in their games
  const claimed = await claimSeat(gameId, seat, name, me.token);
  saveSeat(gameId, claimed.seat, claimed.token);
  return claimed;
}
