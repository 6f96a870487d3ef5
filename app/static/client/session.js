// What this browser remembers: each game's seat and token (so a reload returns to the seat) and
// the player's name. Storage only: no HTTP, no drawing.
import { claimSeat } from "./api.js";

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

// Take a seat and keep its token.
export async function takeSeat(gameId, seat, name) {
  rememberName(name);
  const claimed = await claimSeat(gameId, seat, name);
  saveSeat(gameId, claimed.seat, claimed.token);
  return claimed;
}
