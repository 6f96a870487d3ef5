// A few helpers to build the page from data, without a framework.
import { t } from "./i18n.js";

export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else if (name === "class") element.className = value;
    else element.setAttribute(name, value === true ? "" : value);
  }
  element.append(...children.flat().filter((child) => child !== null && child !== undefined && child !== false));
  return element;
}

export function show(...children) {
  const main = document.getElementById("main");
  main.replaceChildren(...children.filter((child) => child !== null && child !== undefined));
  return main;
}

export function link(path) {
  return `${location.origin}${location.pathname}#${path}`;
}

// A button that copies `text` and says so; `label` names it for everyone, screen readers included.
export function copyButton(text, label) {
  const button = h("button", { type: "button", class: "small copy", "aria-label": label, title: label }, t("copy.copy"));
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = t("copy.copied");
    } catch {
      button.textContent = t("copy.select");
    }
  });
  return button;
}
