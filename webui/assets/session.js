// The page's side of an OpenID Connect sign-in (auth.js): the header's
// Sign out button and the page of a person who signed out.

import * as auth from "./auth.js";
import { h, showError } from "./ui.js";

/** showSignedOut offers to sign in again, and returns its state (data-ready). */
export function showSignedOut({ main, crumbs }) {
  document.title = "Signed out · davspaces";
  crumbs.replaceChildren();
  main.replaceChildren(h("section", { class: "notfound" },
    h("h1", {}, "You are signed out"),
    h("p", {}, "Sign in again to see your spaces."),
    h("button", { type: "button", class: "primary", onclick: () => auth.signInAgain().catch(showError) }, "Sign in")));
  return "signedout";
}

/** addSignOut puts Sign out in the header once, when signed in with a token. */
export function addSignOut() {
  if (!auth.signedIn() || document.getElementById("signout")) {
    return;
  }
  document.querySelector("header.top").append(
    h("button", { type: "button", id: "signout", class: "secondary signout", onclick: () => auth.signOut().catch(showError) }, "Sign out"));
}
