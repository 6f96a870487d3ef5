// docs/rules.md, rendered: headings, paragraphs, lists, tables, code, bold and italics.
import { get } from "./api.js";
import { h, show } from "./dom.js";
import { language, t } from "./i18n.js";

function inline(text) {
  const escaped = text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  // A code word with no space in it ("<seed>:<L>") is never broken across lines.
  return escaped.replace(/`([^`]+)`/g, (_, code) => `<code${/\s/.test(code) ? "" : ' class="word"'}>${code}</code>`)
    .replace(/\*\*([^*]+)\*\*/g, "<b>$1</b>")
    .replace(/\*([^*]+)\*/g, "<i>$1</i>");
}

export function renderMarkdown(markdown) {
  const html = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length;) {
    const line = lines[i];
    const heading = line.match(/^(#{1,4}) (.*)/);
    if (heading) {
      const id = heading[2].toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");
      html.push(`<h${heading[1].length}${id ? ` id="${id}"` : ""}>${inline(heading[2])}</h${heading[1].length}>`); // no id from Arabic words
      i++;
    } else if (line.startsWith("|")) {
      const rows = [];
      while (i < lines.length && lines[i].startsWith("|")) rows.push(lines[i++]);
      const cells = (row) => row.slice(1, -1).split("|").map((cell) => inline(cell.trim()));
      html.push(`<div class="scroll" tabindex="0" role="region" aria-label="table"><table><thead><tr>${cells(rows[0]).map((c) => `<th>${c}</th>`).join("")}</tr></thead><tbody>`
        + rows.slice(2).map((row) => `<tr>${cells(row).map((c) => `<td>${c}</td>`).join("")}</tr>`).join("")
        + "</tbody></table></div>");
    } else if (/^\s*([-*]|\d+\.) /.test(line)) {
      const ordered = /^\s*\d+\./.test(line);
      const items = [];
      while (i < lines.length && lines[i].trim() && !lines[i].startsWith("#")) {
        if (/^\s*([-*]|\d+\.) /.test(lines[i])) items.push(lines[i].replace(/^\s*([-*]|\d+\.) /, ""));
        else items[items.length - 1] += ` ${lines[i].trim()}`;
        i++;
      }
      const tag = ordered ? "ol" : "ul";
      html.push(`<${tag}>${items.map((item) => `<li>${inline(item)}</li>`).join("")}</${tag}>`);
    } else if (line.startsWith("```")) {
      const code = [];
      for (i++; i < lines.length && !lines[i].startsWith("```"); i++) code.push(lines[i]);
      i++;
      html.push(`<pre><code>${code.join("\n").replace(/&/g, "&amp;").replace(/</g, "&lt;")}</code></pre>`);
    } else if (line.trim()) {
      const paragraph = [];
      while (i < lines.length && lines[i].trim() && !/^(#|\||```|\s*([-*]|\d+\.) )/.test(lines[i])) paragraph.push(lines[i++]);
      html.push(`<p>${inline(paragraph.join(" "))}</p>`);
    } else {
      i++;
    }
  }
  return html.join("\n");
}

// A player's guide first, in the player's language (static/guide.<code>.md), then the full rules with
// every option, for client authors: the contract, kept in English only.
export async function rulesPage() {
  const guidePath = language() === "en" ? "/static/guide.md" : `/static/guide.${language()}.md`;
  const [guide, rules] = await Promise.all([guidePath, "/static/rules.md"].map((path) => fetch(path).then((r) => r.text())));
  const intro = h("article", { class: "panel rules", id: "guide" });
  intro.innerHTML = renderMarkdown(guide);
  const article = h("article", { class: "panel rules", id: "full-rules", lang: "en", dir: "ltr" });
  article.innerHTML = renderMarkdown(rules);
  show(intro, language() === "en" ? null : h("p", { class: "muted", id: "full-rules-note" }, t("rules.full")), article);
}
