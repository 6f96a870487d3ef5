// The table page draws a game's state (game.js) and nothing else: the seats around the felt (your
// own at the bottom, partners across), the table in the middle, your hand below; the result when
// it is over. It returns its unmount.
import { call, errorText, get, post } from "./api.js";
import { cardBack, cardName, cardRow } from "./cards.js";
import { copyButton, h, link, show } from "./dom.js";
import { openGame } from "./game.js";
import { clearTurnCue, clockText, setSound, soundOn, turnCue } from "./attention.js";
import { cardPlaces, moveCards } from "./motion.js";
import { playerName, saveSeat, savedSeat, takeSeat } from "./session.js";
import { campName, describe, holdingName, seatName } from "./words.js";

const OFFER_LOOK_MS = 3000;
const ANNOUNCE_MS = 2600;

// Where each seat sits, counted from the viewer's (or seat 0's) and going round in playing order.
const PLACES = { 2: ["bottom", "top"], 3: ["bottom", "right", "left"], 4: ["bottom", "right", "top", "left"] };

export async function table(gameId) {
  const game = await openGame(gameId);
  const { state, act } = game;
  const { seat } = state;
  let view = state.view;
  let rounds = null; // each round's scores, read once the game is over
  let loadedRounds = false;
  const rematchNotice = h("p", { class: "error", role: "alert", id: "rematch-notice" });
  let offered = null; // the rematch another seat asked for, until this seat accepts or declines it
  let offerTimer = null;
  let seen = state.log.length; // events up to here were there when the page opened: not announced
  let roundSummary = null; // the last round's end, shown until closed or the next round's is due
  const announce = h("p", { class: "announce", id: "announce", role: "status", "aria-live": "assertive" });
  let announceTimer = null;

  const actionLabel = (action) => action.type === "play" ? `Play the ${cardName(action.card)}`
    : action.type === "declare" ? `Declare ${holdingName(view.holding)}` : "Declare nothing";
  const teams = () => new Set(view.camps).size < view.players;
  const partnerOf = (s) => teams() ? view.seats.find((o) => o.seat !== s && view.camps[o.seat] === view.camps[s]) : null;

  function scores() {
    const camps = [...new Set(view.camps)];
    return h("section", { class: "scores", id: "scores", "aria-label": "Scores" }, camps.map((camp) => h("div", {
      class: `camp${view.winner === camp ? " winner" : ""}${seat && view.camps[seat.seat] === camp ? " mine" : ""}`,
    }, h("span", { class: "who" }, campName(view, camp), teams() ? " (partners)" : null),
      h("span", { class: "points", "data-camp": camp }, `${view.scores[camp]}`),
      h("span", { class: "of" }, ` / ${view.rules.target} · captured ${view.captured_counts[camp]}`))));
  }

  function status() {
    if (view.status === "finished") return "Game over.";
    if (view.status === "open") return "Waiting for players to join the open seats.";
    const names = view.awaiting.map((s) => seatName(view, s));
    const mine = seat && view.awaiting.includes(seat.seat);
    const what = view.phase === "declaring" ? "to declare" : "to play";
    return mine ? `Your turn ${what}.` : `Waiting for ${names.join(" and ")} ${what}.`;
  }

  // The turn clock, when the awaited person's turn is timed: redrawn every second by the page.
  const clock = () => view.move_due_at ? h("span", { class: "clock", id: "turn-clock", role: "timer",
    "aria-label": "Time left for this turn" }, clockText(view.move_due_at)) : null;

  // Declarations said aloud, and a round's end kept for its summary: only events new since the last drawing.
  function noticeNewEvents() {
    for (const event of state.log.slice(seen)) {
      if (event.type === "declaration") {
        const word = event.kind.replace("_", " ");
        announce.textContent = `${seatName(view, event.seat)}: ${word[0].toUpperCase()}${word.slice(1)}!`;
        clearTimeout(announceTimer);
        announceTimer = setTimeout(() => { announce.textContent = ""; }, ANNOUNCE_MS);
      }
      if (event.type === "round_end" && view.status !== "finished") roundSummary = event;
    }
    seen = state.log.length;
  }

  // Between rounds: each camp's total and what the round's end scored, until closed.
  function summaryOfRound() {
    if (!roundSummary) return null;
    const end = state.log.indexOf(roundSummary);
    const from = state.log.findLastIndex((event, i) => i < end && event.type === "round_start");
    const scored = state.log.slice(from + 1, end).filter((event) => event.type === "score" || event.type === "table_swept");
    return h("section", { class: "panel round-summary", id: "round-summary", "aria-label": "Round summary" },
      h("h2", {}, `Round ${roundSummary.round + 1} is over`),
      h("ul", { class: "camp-totals" }, roundSummary.scores.map((points, camp) => h("li", {}, h("b", {}, campName(view, camp)), ` ${points}`))),
      scored.length ? h("ul", { class: "round-scores" }, scored.map((event) => h("li", {}, describe(event, view)))) : null,
      h("button", { id: "close-summary", onclick: () => { roundSummary = null; render(); } }, "Continue"));
  }

  const sinceLastPlay = () => state.log.slice(state.log.findLastIndex((event) => event.type === "play"));
  const lastPlay = () => state.log.findLast((event) => event.type === "play");

  // The card the last move left on the table, marked there for a moment.
  function justLaid() {
    const last = state.log.at(-1);
    return last?.type === "drop" ? last.card : null;
  }

  // What the last move took off the table (its own card included), shown beside it for a moment.
  function justTaken() {
    const taken = sinceLastPlay().flatMap((event) => event.type === "capture" ? [event.card, ...event.taken]
      : event.type === "pile_collected" ? event.cards : []);
    return taken.length ? h("div", { class: "just-taken", id: "just-taken" }, h("h3", {}, "Just taken"),
      cardRow(taken, () => ({ fresh: true }))) : null;
  }

  // What just happened, where the eyes are: the events since the last card was played.
  function lastMove() {
    const from = state.log.findLastIndex((event) => event.type === "play" || event.type === "seat_taken");
    if (from < 0) return null;
    return h("p", { class: "last-move", id: "last-move" }, state.log.slice(from).map((event) => describe(event, view)).join(" "));
  }

  // One seat around the felt: who, whose turn, cards held, its camp's captures, its declarations,
  // and its last card played when it moved last.
  function seatBox(info, place) {
    const s = info.seat;
    const awaited = view.status === "active" && view.awaiting.includes(s);
    const played = lastPlay();
    const tags = [seat?.seat === s ? "you" : null, seat && partnerOf(seat.seat)?.seat === s ? "your partner" : null,
      view.dealer === s ? "deals" : null, awaited ? (view.phase === "declaring" ? "to declare" : "to play") : null].filter(Boolean);
    const declared = view.declarations.filter((d) => d.seat === s);
    return h("div", { class: `seat place-${place}${awaited ? " awaited" : ""}${seat?.seat === s ? " me" : ""}${played?.seat === s ? " moved" : ""}`,
      "data-seat": s },
    h("span", { class: "seat-line" }, h("b", { class: "name" }, info.type === "open" ? `Open seat ${s + 1}` : seatName(view, s)),
      tags.length ? h("span", { class: "tags" }, ` · ${tags.join(" · ")}`) : null),
    h("span", { class: "seat-line" },
      h("span", { class: "backs", role: "img", "aria-label": `${view.hand_counts[s]} cards in hand` }, Array.from({ length: view.hand_counts[s] }, cardBack)),
      h("span", { class: "seat-points", "data-camp": view.camps[s] }, `${view.scores[view.camps[s]]} pts`),
      h("span", { class: "captured" }, `captured ${view.captured_counts[view.camps[s]]}`)),
    declared.length ? h("span", { class: "declared" }, declared.map((d) => `${d.kind.replace("_", " ")}${d.rank === null ? "" : ` of ${d.rank}s`}`).join(", ")) : null,
    played?.seat === s && view.status !== "finished" ? h("span", { class: "played" }, `played the ${cardName(played.card)}`) : null);
  }

  function felt() {
    if (view.status === "finished") return null; // the result says it all; the replay shows every step
    const base = seat ? seat.seat : 0;
    const places = PLACES[view.players];
    return h("section", { class: `felt seats-row players-${view.players}`, id: "felt", "aria-label": "The table" },
      view.seats.map((info) => seatBox(info, places[(info.seat - base + view.players) % view.players])),
      h("div", { class: "table place-center", id: "table" }, h("h2", {}, "Table ", h("span", { class: "stock" }, `· ${view.stock_count} in the stock`)),
        view.table.length ? Object.assign(cardRow(view.table, (card) => ({ fresh: card === justLaid() })), { id: "table-cards" })
          : h("p", { class: "empty" }, "The table is empty."),
        justTaken(),
        view.pile.length ? h("div", {}, h("h3", {}, "Pile"), cardRow(view.pile)) : null));
  }

  function hand() {
    if (!seat || view.status === "finished") return null;
    // Before every seat is taken nothing can be played: the hand is shown, not offered.
    const legal = view.status === "active" ? view.legal_actions : [];
    const playable = new Set(legal.filter((a) => a.type === "play").map((a) => a.card));
    const others = legal.filter((a) => a.type !== "play");
    return h("section", { class: "hand", id: "hand", tabindex: -1, "aria-label": "Your hand" }, h("h2", { class: "visually-hidden" }, "Your hand"),
      cardRow(view.hand, (card) => playable.has(card) && !state.busy
        ? { legal: true, onPick: () => act({ type: "play", card }) } : {}),
      others.length ? h("div", { class: "actions", id: "actions" }, others.map((action) =>
        h("button", { "data-action": action.type, disabled: state.busy, onclick: () => act(action) }, actionLabel(action)))) : null);
  }

  // Each open seat's invite: a labelled link a friend opens, and a button that copies it.
  function invites() {
    const open = view.seats.filter((s) => s.type === "open");
    if (!open.length || view.status !== "open") return null;
    return h("section", { class: "panel invites", id: "invites" }, h("h2", {}, "Invite a friend"),
      open.map((s) => {
        const address = link(`/join/${gameId}/${s.seat}`);
        return h("p", { class: "invite" }, h("a", { href: address, id: `invite-${s.seat}` }, `Invite link for seat ${s.seat + 1}`), " ",
          copyButton(address, `Copy the invite link for seat ${s.seat + 1}`));
      }));
  }

  function outcome() {
    const score = view.scores.join(" – ");
    if (view.outcome?.reason === "aborted") return "Aborted: nobody won";
    if (!seat) return `${campName(view, view.winner)} won ${score}`;
    return view.camps[seat.seat] === view.winner ? `You won ${score}` : `You lost ${score}`;
  }

  function ending() {
    const absent = view.outcome?.seat;
    if (view.outcome?.reason === "aborted") return `Seat ${absent + 1} never made a first move in time: the game is not counted.`;
    if (view.outcome?.reason === "forfeit") return `${campName(view, view.winner)} won: seat ${absent + 1} missed three turns in a row.`;
    return `${campName(view, view.winner)} won.`;
  }

  function result() {
    if (view.status !== "finished") return null;
    if (rounds === null) {
      rounds = [];
      get(`/games/${gameId}/events?after=0&limit=2000`).then((events) => {
        rounds = events.filter((event) => event.type === "round_end");
        loadedRounds = true;
        render();
      }).catch(() => {});
    }
    const check = h("span", { id: "verification" });
    if (crypto.subtle) {
      crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${view.seed_salt}:${view.seed}`)).then((digest) => {
        const hex = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
        check.textContent = hex === view.seed_commitment ? "✓ SHA-256(salt:seed) matches the commitment shown from the start."
          : "✗ SHA-256(salt:seed) does not match the commitment!";
      });
    }
    const camps = [...new Set(view.camps)];
    // A game won in the middle of a round has no round_end for it: its final scores are that round's row.
    const ended = rounds.at(-1);
    const rows = loadedRounds && (!ended || ended.scores.join() !== view.scores.join())
      ? [...rounds, { round: (ended?.round ?? -1) + 1, scores: view.scores, last: true }] : rounds;
    return h("section", { class: "result panel", id: "result" },
      h("h2", { id: "outcome" }, outcome()),
      h("p", { id: "ending" }, ending()),
      rows.length ? h("div", { class: "scroll", tabindex: 0, "aria-label": "Scores by round" }, h("table", { id: "rounds" },
        h("thead", {}, h("tr", {}, h("th", {}, "Round"), camps.map((camp) => h("th", {}, campName(view, camp))))),
        h("tbody", {}, rows.map((row) => h("tr", {}, h("td", {}, row.last ? `${row.round + 1} (the game ended in it)` : row.round + 1),
          row.scores.map((n) => h("td", {}, n))))))) : null,
      h("p", { class: "buttons" }, seat ? h("button", { id: "rematch", onclick: rematch }, "Rematch") : null,
        h("a", { class: "button", href: "#/" }, "New game"),
        h("a", { class: "button", href: `#/replay/${gameId}` }, "Replay it step by step")),
      offer(),
      rematchNotice,
      h("details", { class: "fairness" }, h("summary", {}, "Was the deal fair? The proof"),
        h("dl", {}, h("dt", {}, "Seed"), h("dd", {}, h("code", {}, view.seed)),
          h("dt", {}, "Salt"), h("dd", {}, h("code", {}, view.seed_salt)),
          h("dt", {}, "Commitment"), h("dd", {}, h("code", {}, view.seed_commitment))),
        h("p", {}, check),
        h("p", {}, "To verify the deal: the SHA-256 of \"<salt>:<seed>\" must equal the commitment this game showed ",
          "from its creation; then every round's deck follows from the seed alone (", h("a", { href: "#/rules" }, "rules, §12"), ").")));
  }

  // Another seat's ask for a rematch, read every few seconds once the game is over (the server
  // also tells the player's stream, `rematch_offered`): Accept takes this seat in it, Decline ends it.
  function offer() {
    if (!seat || !offered) return null;
    const askers = offered.seats.filter((s) => s.type === "human").map((s) => s.name).join(", ");
    return h("section", { class: "panel", id: "rematch-offer", role: "alert" },
      h("p", {}, `${askers || "Another player"} asks for a rematch.`),
      h("p", { class: "buttons" }, h("button", { id: "accept-rematch", onclick: rematch }, "Accept"),
        h("button", { id: "decline-rematch", class: "secondary", onclick: decline }, "Decline")));
  }

  async function lookForOffer() {
    if (!seat || view.status !== "finished") return;
    const found = await get(`/games/${gameId}/rematch`).catch(() => null);
    if (JSON.stringify(found) !== JSON.stringify(offered)) {
      offered = found;
      render();
    }
  }

  async function decline() {
    try {
      await call("DELETE", `/games/${gameId}/rematch`, { token: seat.token });
      offered = null;
      clearInterval(offerTimer);
      rematchNotice.textContent = "You declined the rematch.";
      render();
    } catch (error) {
      rematchNotice.textContent = errorText(error);
    }
  }

  // The next game, the same seats: the first to ask offers it, the others take their seats by asking too.
  async function rematch() {
    try {
      const next = await post(`/games/${gameId}/rematch`, undefined, { token: seat.token });
      saveSeat(next.game.id, next.seat, next.token);
      location.hash = `#/games/${next.game.id}`;
    } catch (error) {
      rematchNotice.textContent = errorText(error);
    }
  }

  function notice() {
    const { notice: shown } = state;
    if (!shown) return null;
    return h("p", { class: "notice", id: "notice", role: "alert" }, shown.text, " ",
      shown.retry ? h("button", { id: "retry", onclick: () => act(shown.retry) }, shown.pending ? "Send it now" : actionLabel(shown.retry)) : null,
      shown.pending ? h("button", { id: "cancel-move", onclick: game.cancelPending }, "Cancel the move") : null);
  }

  function soundButton() {
    const on = soundOn();
    return h("button", { id: "sound", class: "small secondary", "aria-pressed": String(on),
      onclick: () => { setSound(!on); render(); } }, on ? "Sound on" : "Sound off");
  }

  function render() {
    const before = cardPlaces();
    view = state.view;
    noticeNewEvents();
    // A move keeps the focus in the hand (on its first playable card), not on the page's body.
    const handHadFocus = document.activeElement?.closest?.("#hand") || document.activeElement === document.body && state.acted;
    const logList = h("ol", { class: "log", id: "log", tabindex: 0, "aria-label": "What happened" },
      state.log.map((event) => h("li", {}, describe(event, view))));
    const you = seat ? `you are ${seatName(view, seat.seat)}` : "watching";
    const myTurn = !!seat && view.status === "active" && view.awaiting.includes(seat.seat);
    // First what a player needs on their turn, in one screen: whose turn, the felt, the hand.
    show(
      h("section", { class: "game-head" },
        h("h1", {}, `${view.preset}, ${view.players} players · ${you}`),
        h("span", { class: "muted" }, `Round ${view.round + 1}, deal ${view.deal + 1}/${view.deals_in_round} · to ${view.rules.target}`
          + ` · ${view.streak.length > 1 ? `streak: ${view.streak.system} ×${view.streak.length} · ` : ""}${state.connection}`),
        seat ? soundButton() : null),
      h("p", { class: `status${myTurn ? " mine" : ""}`, id: "status", role: "status" }, status(), " ", clock()),
      announce,
      notice(),
      summaryOfRound(),
      result(),
      invites(),
      felt(),
      hand(),
      h("section", { class: "panel below" }, lastMove(), scores(),
        h("p", { class: "share-line" }, h("a", { href: link(`/games/${gameId}`), id: "watch-link" }, "Link to watch this game"), " ",
          copyButton(link(`/games/${gameId}`), "Copy the link to watch this game")),
        h("h2", {}, "What happened"), logList),
    );
    logList.scrollTop = logList.scrollHeight;
    // preventScroll: the hand keeps the focus without the status and the felt scrolling away.
    if (handHadFocus) (document.querySelector("#hand button.card.legal") || document.querySelector("#hand"))?.focus({ preventScroll: true });
    state.acted = false;
    turnCue(myTurn, "Your turn");
    moveCards(before, lastPlay()?.seat);
  }

  game.subscribe(render);
  render();
  offerTimer = setInterval(() => lookForOffer(), OFFER_LOOK_MS);
  const clockTimer = setInterval(() => {
    const shown = document.getElementById("turn-clock");
    if (shown && view.move_due_at) shown.textContent = clockText(view.move_due_at);
  }, 1000);
  return () => {
    clearInterval(offerTimer);
    clearInterval(clockTimer);
    clearTimeout(announceTimer);
    clearTurnCue();
    game.stop();
  };
}

// An invite: who asks you to which seat of which game, before you take it; a taken seat says so.
export async function join(gameId, seatNumber) {
  const invited = await get(`/games/${gameId}`);
  const host = invited.seats.find((s) => s.type !== "open" && s.type !== "bot");
  const taken = invited.seats[seatNumber]?.type !== "open";
  const mine = savedSeat(gameId);
  const name = h("input", { id: "name", maxlength: 40, placeholder: "Your name", value: playerName() });
  const message = h("p", { class: "error", role: "alert" });
  const others = invited.seats.filter((s) => s.seat !== seatNumber)
    .map((s) => s.type === "open" ? `seat ${s.seat + 1} open` : seatName(invited, s.seat)).join(", ");
  show(h("section", { class: "panel" },
    h("h1", {}, taken ? `Seat ${seatNumber + 1} is taken` : `${host ? seatName(invited, host.seat) : "Someone"} invites you to seat ${seatNumber + 1}`),
    h("p", { id: "invite-rules" }, `${invited.preset} rules, ${invited.players} players, first to ${invited.rules?.target ?? "the target"}`,
      `${invited.rated ? ", rated" : ""}. At the table: ${others}. `, h("a", { href: "#/rules" }, "The rules")),
    taken ? h("p", { id: "seat-taken" }, `${seatName(invited, seatNumber)} sits there already.`)
      : mine ? h("p", { id: "seat-taken" }, `This browser already holds seat ${mine.seat + 1} of this game: send the invite to a friend, or open it in another browser.`)
        : h("form", {
          onsubmit: async (event) => {
            event.preventDefault();
            try {
              await takeSeat(gameId, seatNumber, name.value.trim());
              location.hash = `#/games/${gameId}`;
            } catch (error) {
              message.textContent = errorText(error);
            }
          },
        }, h("label", {}, "Your name", name), h("button", { type: "submit" }, "Take the seat"), message),
    h("p", {}, h("a", { href: `#/games/${gameId}` }, taken || mine ? "Watch the game" : "Only watch"))));
}
