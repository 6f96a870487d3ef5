// The router: each address after # is a page; a reload or a shared link lands on the same page.
import { errorText, h, show } from "./dom.js";
import { lobby } from "./lobby.js";
import { matchesPage, matchPage, replayPage } from "./matches.js";
import { rulesPage } from "./rules.js";
import { join, table } from "./table.js";

const ROUTES = [
  [/^\/?$/, lobby],
  [/^\/games\/([\w-]+)$/, table],
  [/^\/join\/([\w-]+)\/(\d)$/, (game, seat) => join(game, Number(seat))],
  [/^\/matches$/, matchesPage],
  [/^\/matches\/([\w-]+)$/, matchPage],
  [/^\/replay\/([\w-]+)$/, replayPage],
  [/^\/rules$/, rulesPage],
];

async function route() {
  const path = location.hash.replace(/^#/, "") || "/";
  for (const [pattern, page] of ROUTES) {
    const match = path.match(pattern);
    if (!match) continue;
    try {
      await page(...match.slice(1));
    } catch (error) {
      show(h("section", { class: "panel" }, h("h1", {}, "Something went wrong"),
        h("p", { class: "error", role: "alert" }, errorText(error)), h("p", {}, h("a", { href: "#/" }, "Back to the lobby"))));
    }
    return;
  }
  show(h("section", { class: "panel" }, h("h1", {}, "No such page"), h("p", {}, h("a", { href: "#/" }, "Back to the lobby"))));
}

window.addEventListener("hashchange", route);
route();
