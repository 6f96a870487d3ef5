// A game at the table, as state with no drawing: the latest view, the event log, the seat (with
// the token kept from creating or joining) or a spectator, the notice to show, and the rules of
// the client loop: the view is the truth, every change (our action, a stream event) ends in
// reading it again, one read at a time; a 412 reads again and offers the move again if it stands.
import { errorText, eventsAfter, get, post } from "./api.js";
import { cardName } from "./cards.js";
import { forgetSeat, savedPlayer, savedSeat } from "./session.js";
import { t } from "./i18n.js";
import { follow } from "./sse.js";

const describeAction = (action) => action.type === "play" ? t("move.the_card", { card: cardName(action.card) })
  : t(action.type === "declare" ? "move.a_declaration" : "move.declaring_nothing");
const sameAction = (a, b) => a.type === b.type && (a.card ?? null) === (b.card ?? null);
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 4000;
const UNREACHABLE = [502, 503, 504]; // a proxy's answers for a server that is not there

export async function openGame(gameId) {
  // A seat kept in this browser, else the player's own seat in the game, if they hold one.
  const player = savedPlayer();
  let seat = savedSeat(gameId) || (player ? { seat: null, token: player.token, player: true } : null);
  let view;
  try {
    view = seat ? await get(`/games/${gameId}/view`, { token: seat.token }) : await get(`/games/${gameId}`);
  } catch (error) {
    if (!seat || error.status !== 401) throw error;
    if (!seat.player) forgetSeat(gameId); // a token this game no longer knows: watch instead
    seat = null;
    view = await get(`/games/${gameId}`);
  }
  if (seat) seat = { ...seat, seat: view.seat };
  const token = seat?.token;
  const viewPath = token ? `/games/${gameId}/view` : `/games/${gameId}`;
  const listeners = new Set();
  const state = {
    // The log from the current deal on: what the table shows, the same bytes at any length of game.
    gameId, seat, view, log: await eventsAfter(gameId, token, view.deal_event_id - 1), notice: null, busy: false,
    connection: "connecting",
  };
  let refreshing = false;
  let readAgain = false;
  let stopped = false;
  let retryDelay = RETRY_FIRST_MS;
  let sendDelay = RETRY_FIRST_MS;

  const changed = () => listeners.forEach((listener) => listener(state));

  function accept(newer) {
    if (newer.version >= state.view.version) state.view = newer;
  }

  // A read that fails is tried again, later and later, until one succeeds: the table never stays
  // on a state older than the server's once the network is back.
  async function refresh() {
    if (refreshing) {
      readAgain = true;
      return;
    }
    refreshing = true;
    try {
      do {
        readAgain = false;
        accept(await get(viewPath, { token }));
      } while (readAgain);
      retryDelay = RETRY_FIRST_MS;
      if (state.notice?.reading) state.notice = null;
      if (state.notice?.pending && !state.view.legal_actions.some((legal) => sameAction(legal, state.notice.retry))) {
        state.notice = { text: t("move.never_sent") };
      } else if (state.notice?.pending) { // the server answers again: the waiting move goes now
        setTimeout(() => stopped || sendPending(), sendDelay);
        sendDelay = Math.min(sendDelay * 2, RETRY_MAX_MS); // a server that reads but will not write is not hammered
      }
    } catch (error) {
      // A move waiting to be sent stays on screen: the failed read is said by the connection line.
      if (!state.notice?.pending) state.notice = { text: t("move.unreadable", { why: errorText(error) }), reading: true };
      setTimeout(() => stopped || refresh(), retryDelay);
      retryDelay = Math.min(retryDelay * 2, RETRY_MAX_MS);
    } finally {
      refreshing = false;
    }
    if (state.view.status === "finished" && state.seat) forgetSeat(gameId); // nothing more to act on
    changed();
  }

  async function act(action) {
    if (state.busy) return;
    state.busy = true;
    state.acted = true;
    if (!state.notice?.pending) state.notice = null; // a waiting move is said until the server has it
    changed();
    try {
      const result = await post(`/games/${gameId}/actions`, action, { token, version: state.view.version });
      accept(result.game);
      state.notice = null;
      sendDelay = RETRY_FIRST_MS;
    } catch (error) {
      if (error.status === 412) { // someone acted first: read again, then offer the move again if it still stands
        accept(await get(viewPath, { token }));
        const still = state.view.legal_actions.some((legal) => sameAction(legal, action));
        state.notice = still
          ? { text: t("move.late_stands"), retry: action }
          : { text: t("move.late_gone") };
      } else if (error.status === undefined || UNREACHABLE.includes(error.status)) { // it waits until sent or cancelled
        const side = error.status === undefined && !navigator.onLine ? "move.waiting_offline" : "move.waiting_server";
        state.notice = { text: t(side, { move: describeAction(action) }), retry: action, pending: true };
        refresh();
      } else {
        state.notice = { text: errorText(error) };
      }
    }
    state.busy = false;
    changed();
  }

  const stopFollowing = follow(`/games/${gameId}/stream`, {
    token,
    after: state.log.at(-1)?.id ?? 0,
    onEvent(event) {
      if (!state.log.length || event.id > state.log.at(-1).id) state.log.push(event);
      refresh();
    },
    onStatus(status) {
      state.connection = status;
      changed();
    },
  });
  refresh(); // a move made between reading the view and reading the log is in neither stream nor view

  function sendPending() {
    if (state.notice?.pending) act(state.notice.retry);
  }
  window.addEventListener("online", sendPending);

  return {
    state,
    act,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    cancelPending() {
      state.notice = null;
      changed();
    },
    stop() {
      window.removeEventListener("online", sendPending);
      stopped = true;
      listeners.clear();
      stopFollowing();
    },
  };
}
