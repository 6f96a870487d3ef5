// The table page draws a game's state (game.js) and nothing else: the seats around the felt (your
// own at the bottom, partners across), the table in the middle, your hand below; the result when
// it is over. It returns its unmount.
import { call, errorText, get, post } from "./api.js";
import { cardBack, cardName, cardRow, tableParts } from "./cards.js";
import { copyButton, h, link, show } from "./dom.js";
import { openGame } from "./game.js";
import { clearTurnCue, clockText, setSound, soundOn, turnCue } from "./attention.js";
import { cardPlaces, moveCards } from "./motion.js";
import { list, t } from "./i18n.js";
import { forgetSeat, playerName, saveSeat, savedSeat, takeSeat } from "./session.js";
import { campName, declarationName, describe, holdingName, seatName } from "./words.js";

const OFFER_LOOK_MS = 3000;
const ANNOUNCE_MS = 2600;

// The stream's state (sse.js), in words: "connecting", "live", "reconnecting" or "refused: <why>".
const connectionWords = (status) => status.startsWith("refused: ")
  ? t("connection.refused", { why: status.slice("refused: ".length) }) : t(`connection.${status}`);

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
  const seatError = h("p", { class: "error", role: "alert", id: "seat-error" });
  let offered = null; // the rematch another seat asked for, until this seat accepts or declines it
  let offerTimer = null;
  let seen = state.log.length; // events up to here were there when the page opened: not announced
  let roundSummary = null; // the last round's end, shown until closed or the next round's is due
  const announce = h("p", { class: "announce", id: "announce", role: "status", "aria-live": "assertive" });
  let announceTimer = null;
  let absence = null; // another seat away (its timer ran out) or gone to a bot, said until it plays again
  const ratings = {}; // seat → its player's rating in this game's pool ("1520", "1480?" while provisional)

  // Read once: each person's rating, public (getPlayer), shown at their seat.
  async function readRatings() {
    const pool = `${view.preset}-${view.players}`;
    const players = await Promise.all(view.seats.map((s) => s.player ? get(`/players/${s.player}`).catch(() => null) : null));
    players.forEach((player, s) => {
      const record = player?.ratings.find((r) => r.pool === pool);
      if (record) ratings[s] = `${Math.round(record.rating)}${record.provisional ? "?" : ""}`;
    });
    if (Object.keys(ratings).length) render();
  }

  const actionLabel = (action) => action.type === "play" ? t("table.play_card", { card: cardName(action.card) })
    : action.type === "declare" ? t("table.declare", { what: holdingName(view.holding) }) : t("table.declare_nothing");
  const teams = () => new Set(view.camps).size < view.players;
  const partnerOf = (s) => teams() ? view.seats.find((o) => o.seat !== s && view.camps[o.seat] === view.camps[s]) : null;

  function scores() {
    const camps = [...new Set(view.camps)];
    return h("section", { class: "scores", id: "scores", "aria-label": t("table.scores") }, camps.map((camp) => h("div", {
      class: `camp${view.winner === camp ? " winner" : ""}${seat && view.camps[seat.seat] === camp ? " mine" : ""}`,
    }, h("span", { class: "who" }, campName(view, camp), teams() ? ` ${t("table.partners")}` : null),
      h("span", { class: "points", "data-camp": camp }, `${view.scores[camp]}`),
      h("span", { class: "of" }, ` / ${view.rules.target} · ${t("table.captured", { n: view.captured_counts[camp] })}`))));
  }

  function status() {
    if (view.status === "finished") return t("table.over");
    if (view.status === "open") return t("table.waiting_open");
    const names = view.awaiting.map((s) => seatName(view, s)).join(t("table.and"));
    const mine = seat && view.awaiting.includes(seat.seat);
    const declaring = view.phase === "declaring";
    if (mine) return t(declaring ? "table.your_turn_declare" : "table.your_turn_play");
    return t(declaring ? "table.waiting_declare" : "table.waiting_play", { names });
  }

  // The turn clock, when the awaited person's turn is timed: redrawn every second by the page.
  const clock = () => view.move_due_at ? h("span", { class: "clock", id: "turn-clock", role: "timer",
    "aria-label": t("table.clock") }, clockText(view.move_due_at)) : null;

  // Declarations said aloud, and a round's end kept for its summary: only events new since the last drawing.
  function noticeNewEvents() {
    for (const event of state.log.slice(seen)) {
      if (event.type === "declaration") {
        const word = t(`declaration.${event.kind}`);
        announce.textContent = t("table.announce", { who: seatName(view, event.seat), what: word[0].toUpperCase() + word.slice(1) });
        clearTimeout(announceTimer);
        announceTimer = setTimeout(() => { announce.textContent = ""; }, ANNOUNCE_MS);
      }
      if (event.type === "round_end" && view.status !== "finished") roundSummary = event;
      if (event.type === "turn_timeout" && event.seat !== seat?.seat) {
        absence = t("table.opponent_absent", { who: seatName(view, event.seat), missed: event.missed ?? 1 });
      }
      if (event.type === "seat_left" && event.seat !== seat?.seat) absence = t("table.opponent_left", { who: seatName(view, event.seat) });
      if (event.type === "play" && event.seat !== seat?.seat && !event.bot) absence = null; // they are back
    }
    seen = state.log.length;
  }

  // Between rounds, over the table until closed: each camp's total and what the round's end scored
  // (the sweep of the table, the cards beyond the share).
  function summaryOfRound() {
    if (!roundSummary) return null;
    const end = state.log.indexOf(roundSummary);
    const from = state.log.findLastIndex((event, i) => i < end && event.type === "play");
    const scored = state.log.slice(from + 1, end).filter((event) => event.type === "score" || event.type === "table_swept");
    return h("section", { class: "panel round-summary", id: "round-summary", "aria-label": t("table.round_summary") },
      h("h2", {}, t("table.round_over", { round: roundSummary.round + 1 })),
      h("ul", { class: "camp-totals" }, roundSummary.scores.map((points, camp) => h("li", {}, h("b", {}, campName(view, camp)), ` ${points}`))),
      scored.length ? h("ul", { class: "round-scores" }, scored.map((event) => h("li", {}, describe(event, view)))) : null,
      h("button", { id: "close-summary", onclick: () => { roundSummary = null; render(); } }, t("table.continue")));
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
    return taken.length ? h("div", { class: "just-taken", id: "just-taken" }, h("h3", {}, t("table.just_taken")),
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
    const tags = [seat?.seat === s ? t("seat.you") : null, seat && partnerOf(seat.seat)?.seat === s ? t("seat.partner") : null,
      view.dealer === s ? t("seat.deals") : null, awaited ? t(view.phase === "declaring" ? "seat.to_declare" : "seat.to_play") : null].filter(Boolean);
    const declared = view.declarations.filter((d) => d.seat === s);
    return h("div", { class: `seat place-${place}${awaited ? " awaited" : ""}${seat?.seat === s ? " me" : ""}${played?.seat === s ? " moved" : ""}`,
      "data-seat": s },
    h("span", { class: "seat-line" }, h("b", { class: "name" }, info.type === "open" ? t("seat.open", { n: s + 1 }) : seatName(view, s)),
      ratings[s] ? h("span", { class: "rating", title: t("boards.rating") }, ratings[s]) : null,
      tags.length ? h("span", { class: "tags" }, ` · ${tags.join(" · ")}`) : null),
    h("span", { class: "seat-line" },
      h("span", { class: "backs", role: "img", "aria-label": t("seat.cards_held", { n: view.hand_counts[s] }) }, Array.from({ length: view.hand_counts[s] }, cardBack)),
      h("span", { class: "seat-points", "data-camp": view.camps[s] }, t("seat.points", { n: view.scores[view.camps[s]] })),
      h("span", { class: "captured" }, t("table.captured", { n: view.captured_counts[view.camps[s]] }))),
    declared.length ? h("span", { class: "declared" }, list(declared.map((d) => declarationName(d.kind, d.rank)))) : null,
    played?.seat === s && view.status !== "finished" ? h("span", { class: "played" }, t("seat.played", { card: cardName(played.card) })) : null);
  }

  function felt() {
    if (view.status === "finished") return null; // the result says it all; the replay shows every step
    const base = seat ? seat.seat : 0;
    const places = PLACES[view.players];
    return h("section", { class: `felt seats-row players-${view.players}`, id: "felt", "aria-label": t("table.felt") },
      view.seats.map((info) => seatBox(info, places[(info.seat - base + view.players) % view.players])),
      h("div", { class: "table place-center", id: "table" },
        tableParts(view, { laid: (card) => ({ fresh: card === justLaid() }), between: justTaken() })));
  }

  function hand() {
    if (!seat || view.status === "finished") return null;
    // Before every seat is taken nothing can be played: the hand is shown, not offered.
    const legal = view.status === "active" ? view.legal_actions : [];
    const playable = new Set(legal.filter((a) => a.type === "play").map((a) => a.card));
    const others = legal.filter((a) => a.type !== "play");
    return h("section", { class: "hand", id: "hand", tabindex: -1, "aria-label": t("table.hand") }, h("h2", { class: "visually-hidden" }, t("table.hand")),
      cardRow(view.hand, (card) => playable.has(card) && !state.busy
        ? { legal: true, onPick: () => act({ type: "play", card }) } : {}),
      others.length ? h("div", { class: "actions", id: "actions" }, others.map((action) =>
        h("button", { "data-action": action.type, disabled: state.busy, onclick: () => act(action) }, actionLabel(action)))) : null);
  }

  // Each open seat's invite: a labelled link a friend opens, and a button that copies it.
  function invites() {
    const open = view.seats.filter((s) => s.type === "open");
    if (!open.length || view.status !== "open") return null;
    return h("section", { class: "panel invites", id: "invites" }, h("h2", {}, t("invite.title")),
      open.map((s) => {
        const address = link(`/join/${gameId}/${s.seat}`);
        return h("p", { class: "invite" }, h("a", { href: address, id: `invite-${s.seat}` }, t("invite.link", { n: s.seat + 1 })), " ",
          copyButton(address, t("invite.copy", { n: s.seat + 1 })));
      }));
  }

  function outcome() {
    const score = view.scores.join(" – ");
    if (["aborted", "abandoned", "cancelled"].includes(view.outcome?.reason)) return t("result.aborted");
    if (view.outcome?.reason === "declined") return t("result.declined");
    if (!seat) return t("result.won_by", { camp: campName(view, view.winner), score });
    return t(view.camps[seat.seat] === view.winner ? "result.you_won" : "result.you_lost", { score });
  }

  function ending() {
    const absent = view.outcome?.seat;
    if (view.outcome?.reason === "aborted") return t("result.aborted_why", { n: absent + 1 });
    if (view.outcome?.reason === "forfeit") return t("result.forfeit_why", { camp: campName(view, view.winner), n: absent + 1 });
    if (view.outcome?.reason === "resigned") return t("result.resigned_why", { camp: campName(view, view.winner), n: absent + 1 });
    if (view.outcome?.reason === "declined") return absent >= 0 ? t("result.declined_why", { n: absent + 1 }) : t("result.declined");
    if (view.outcome?.reason === "abandoned") return t("result.abandoned_why");
    if (view.outcome?.reason === "cancelled") return t("result.cancelled_why");
    return t("result.won", { camp: campName(view, view.winner) });
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
        check.textContent = t(hex === view.seed_commitment ? "proof.matches" : "proof.differs");
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
      rows.length ? h("div", { class: "scroll", tabindex: 0, "aria-label": t("result.by_round") }, h("table", { id: "rounds" },
        h("thead", {}, h("tr", {}, h("th", {}, t("result.round")), camps.map((camp) => h("th", {}, campName(view, camp))))),
        h("tbody", {}, rows.map((row) => h("tr", {}, h("td", {}, row.last ? t("result.last_round", { n: row.round + 1 }) : row.round + 1),
          row.scores.map((n) => h("td", {}, n))))))) : null,
      h("p", { class: "buttons" }, seat ? h("button", { id: "rematch", onclick: rematch }, t("result.rematch")) : null,
        h("a", { class: "button", href: "#/" }, t("result.new_game")),
        h("a", { class: "button", href: `#/replay/${gameId}` }, t("result.replay")),
        h("button", { id: "review-game", class: "secondary", onclick: async () => {
          await post(`/games/${gameId}/analysis`).catch(() => null); // asked before, or over the quota: the replay says
          location.hash = `#/replay/${gameId}`;
        } }, t("review.ask"))),
      offer(),
      rematchNotice,
      h("details", { class: "fairness" }, h("summary", {}, t("proof.title")),
        h("dl", {}, h("dt", {}, t("proof.seed")), h("dd", {}, h("code", {}, view.seed)),
          h("dt", {}, t("proof.salt")), h("dd", {}, h("code", {}, view.seed_salt)),
          h("dt", {}, t("proof.commitment")), h("dd", {}, h("code", {}, view.seed_commitment))),
        h("p", {}, check),
        h("p", {}, t("proof.how"), " (", h("a", { href: "#/rules" }, t("proof.rules")), ").")));
  }

  // Another seat's ask for a rematch, read every few seconds once the game is over (the server
  // also tells the player's stream, `rematch_offered`): Accept takes this seat in it, Decline ends it.
  function offer() {
    if (!seat || !offered) return null;
    const askers = list(offered.seats.filter((s) => s.type === "human" && s.name).map((s) => s.name));
    return h("section", { class: "panel", id: "rematch-offer", role: "alert" },
      h("p", {}, t("rematch.asked", { who: askers || t("rematch.someone") })),
      h("p", { class: "buttons" }, h("button", { id: "accept-rematch", onclick: rematch }, t("rematch.accept")),
        h("button", { id: "decline-rematch", class: "secondary", onclick: decline }, t("rematch.decline"))));
  }

  async function lookForOffer() {
    if (!seat || view.status !== "finished") return;
    const found = await get(`/games/${gameId}/rematch`).catch(() => null);
    if (JSON.stringify(found) !== JSON.stringify(offered)) {
      if (offered && !found) rematchNotice.textContent = t("rematch.called_off"); // declined, or taken back
      offered = found;
      render();
    }
  }

  // The asker, waiting at the rematch's table, may take the ask back (with their seat of the game before).
  function withdraw() {
    const before = view.rematch_of && savedSeat(view.rematch_of);
    if (!seat || view.status !== "open" || !before) return null;
    return h("p", { class: "buttons" }, h("button", { id: "withdraw-rematch", class: "secondary", onclick: async () => {
      try {
        await call("DELETE", `/games/${view.rematch_of}/rematch`, { token: before.token });
      } catch (error) {
        seatError.textContent = errorText(error);
      }
    } }, t("rematch.withdraw")));
  }

  async function decline() {
    try {
      await call("DELETE", `/games/${gameId}/rematch`, { token: seat.token });
      offered = null;
      clearInterval(offerTimer);
      rematchNotice.textContent = t("rematch.declined");
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
      shown.retry ? h("button", { id: "retry", onclick: () => act(shown.retry) }, shown.pending ? t("move.send_now") : actionLabel(shown.retry)) : null,
      shown.pending ? h("button", { id: "cancel-move", onclick: game.cancelPending }, t("move.cancel")) : null);
  }

  // Giving the game up, or the seat to a bot: each asked first, each refused in words.
  function seatActions() {
    if (!seat || view.status === "finished") return null;
    const asked = (question, work) => async () => {
      if (!confirm(question)) return;
      try {
        await work();
      } catch (error) {
        seatError.textContent = errorText(error);
      }
    };
    const resign = asked(t("table.resign_confirm"), () => post(`/games/${gameId}/resign`, undefined, { token: seat.token }));
    const leave = asked(t("table.leave_confirm"), async () => {
      await post(`/games/${gameId}/seats/${seat.seat}/leave`, { bot: "greedy" }, { token: seat.token });
      forgetSeat(gameId);
      location.hash = "#/";
    });
    return h("div", { id: "seat-actions" }, h("p", { class: "buttons" },
      h("button", { id: "resign", class: "danger", onclick: resign }, t("table.resign")),
      h("button", { id: "leave", class: "secondary", onclick: leave }, t("table.leave"))), seatError);
  }

  function soundButton() {
    const on = soundOn();
    return h("button", { id: "sound", class: "small secondary", "aria-pressed": String(on),
      onclick: () => { setSound(!on); render(); } }, t(on ? "table.sound_on" : "table.sound_off"));
  }

  function render() {
    const before = cardPlaces();
    view = state.view;
    noticeNewEvents();
    // A move keeps the focus in the hand (on its first playable card), not on the page's body.
    const handHadFocus = document.activeElement?.closest?.("#hand") || document.activeElement === document.body && state.acted;
    const logList = h("ol", { class: "log", id: "log", tabindex: 0, "aria-label": t("table.log") },
      state.log.map((event) => h("li", {}, describe(event, view))));
    const you = seat ? t("table.you_are", { name: seatName(view, seat.seat) }) : t("table.watching");
    const myTurn = !!seat && view.status === "active" && view.awaiting.includes(seat.seat);
    // First what a player needs on their turn, in one screen: whose turn, the felt, the hand.
    show(
      h("section", { class: "game-head" },
        h("h1", {}, `${t("game.kind", { preset: view.preset, players: view.players })} · ${you}`),
        h("span", { class: "muted" }, `${t("table.progress", { round: view.round + 1, deal: view.deal + 1, deals: view.deals_in_round, target: view.rules.target })}`
          + ` · ${view.streak.length > 1 ? `${t("table.streak", { system: view.streak.system, n: view.streak.length })} · ` : ""}${connectionWords(state.connection)}`),
        seat ? soundButton() : null),
      h("p", { class: `status${myTurn ? " mine" : ""}`, id: "status", role: "status" }, status(), " ", clock()),
      absence && view.status === "active" ? h("p", { class: "notice", id: "absence", role: "status" }, absence) : null,
      announce,
      notice(),
      summaryOfRound(),
      result(),
      withdraw(),
      invites(),
      felt(),
      hand(),
      h("section", { class: "panel below" }, seatActions(), lastMove(), scores(),
        h("p", { class: "share-line" }, h("a", { href: link(`/games/${gameId}`), id: "watch-link" }, t("table.watch_link")), " ",
          copyButton(link(`/games/${gameId}`), t("table.watch_copy"))),
        h("h2", {}, t("table.log")), logList),
    );
    logList.scrollTop = logList.scrollHeight;
    // preventScroll: the hand keeps the focus without the status and the felt scrolling away.
    if (handHadFocus) (document.querySelector("#hand button.card.legal") || document.querySelector("#hand"))?.focus({ preventScroll: true });
    state.acted = false;
    turnCue(myTurn, t("table.title_cue"));
    moveCards(before, lastPlay()?.seat, seat?.seat);
  }

  game.subscribe(render);
  render();
  readRatings();
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
  const name = h("input", { id: "name", maxlength: 40, placeholder: t("form.your_name"), value: playerName() });
  const message = h("p", { class: "error", role: "alert" });
  const others = invited.seats.filter((s) => s.seat !== seatNumber)
    .map((s) => s.type === "open" ? t("join.open_seat", { n: s.seat + 1 }) : seatName(invited, s.seat));
  show(h("section", { class: "panel" },
    h("h1", {}, taken ? t("join.taken", { n: seatNumber + 1 })
      : t("join.invites", { who: host ? seatName(invited, host.seat) : t("join.someone"), n: seatNumber + 1 })),
    h("p", { id: "invite-rules" }, t(invited.rated ? "join.rules_rated" : "join.rules", {
      preset: invited.preset, players: invited.players, target: invited.rules?.target ?? "?", others: list(others) }), " ",
    h("a", { href: "#/rules" }, t("join.the_rules"))),
    taken ? h("p", { id: "seat-taken" }, t("join.sits_there", { who: seatName(invited, seatNumber) }))
      : mine ? h("p", { id: "seat-taken" }, t("join.already_yours", { n: mine.seat + 1 }))
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
        }, h("label", {}, t("form.your_name"), name), h("button", { type: "submit" }, t("join.take")), message),
    h("p", {}, h("a", { href: `#/games/${gameId}` }, t(taken || mine ? "join.watch" : "join.only_watch")))));
}
