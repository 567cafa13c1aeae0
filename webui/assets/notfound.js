// The "not found" view: the same for a path that is not there and for a
// space the user is no member of, as the server's 404 is the same.

import { h } from "./ui.js";

/** show shows "not found" in main and returns its state (data-ready). */
export function show({ main, setCrumbs }) {
  document.title = "Not found · davspaces";
  setCrumbs([["Spaces", "/"]]);
  main.replaceChildren(h("section", { class: "notfound" },
    h("h1", {}, "Not found"),
    h("p", {}, "There is nothing at this address that you can open."),
    h("a", { class: "button primary", href: "/" }, "Go to your spaces")));
  return "notfound";
}
