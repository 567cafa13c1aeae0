// The page of a Login Flow v2 login URL (/index.php/login/v2/flow/{token}),
// which a Nextcloud client opened in the browser: its user signs in (the
// page's OpenID Connect sign-in, or the browser's Basic prompt, which the
// server asked for before the page loaded), sees which client asks for
// access to which account, and grants it (the client then gets an app
// password of its own) or cancels. The server names the client in
// <meta name="davspaces-loginflow-client"> while the flow is open; without
// it the link is unknown or has expired.

import * as auth from "./auth.js";
import * as dav from "./dav.js";
import { h } from "./ui.js";

const flowPath = /^(?:\/index\.php)?\/login\/v2\/flow\/([^/]+)$/;

/** isLoginFlow tells whether pathname is a login URL. */
export function isLoginFlow(pathname) {
  return flowPath.test(pathname);
}

function tokenOf(pathname) {
  return decodeURIComponent(pathname.match(flowPath)[1]);
}

// request sends a request of the flow through dav.js (the token when
// signed in with OpenID Connect, the browser's Basic otherwise) and
// returns its status and JSON answer; a refusal's answer is the words
// dav.js has for it.
async function request(method, url, body, action) {
  const headers = { Accept: "application/json" };
  if (body) {
    headers["Content-Type"] = "application/x-www-form-urlencoded";
  }
  try {
    const res = await dav.send(method, url, { headers, body, action });
    return { status: res.status, ok: true, answer: await res.json().catch(() => ({})) };
  } catch (err) {
    if (!(err instanceof dav.RequestError)) {
      throw err;
    }
    return { status: err.status, ok: false, answer: { error: err.message } };
  }
}

/**
 * showLoginFlow shows the login URL's page in main and resolves to the
 * name of the state it shows, for <body data-ready>: "loginflow-signin"
 * (sign in first), "loginflow-grant", "loginflow-gone" (unknown or
 * expired), "loginflow-error"; the buttons move on to "loginflow-granted"
 * and "loginflow-cancelled".
 */
export async function showLoginFlow(main) {
  document.title = "Connect a client · davspaces";
  document.getElementById("crumbs").replaceChildren();
  const token = tokenOf(location.pathname);
  const named = document.querySelector('meta[name="davspaces-loginflow-client"]')?.content;
  if (auth.enabled && !auth.signedIn()) {
    if (named === undefined) {
      return showGone(main);
    }
    main.replaceChildren(section(
      "Sign in to connect a client",
      h("p", {}, h("strong", { class: "loginflow-client" }, named), " asks to connect to your account."),
      h("p", {}, "Sign in first; you decide afterwards whether it gets access."),
      h("button", { type: "button", class: "primary", id: "loginflow-signin", onclick: () => auth.signInAgain() }, "Sign in")));
    return "loginflow-signin";
  }
  const { status, ok, answer } = await request("GET", `/index.php/login/v2/grant?${new URLSearchParams({ token })}`, undefined, "read the sign-in");
  if (status === 404) {
    return showGone(main);
  }
  if (!ok) {
    return showFailure(main, answer.error);
  }
  if (answer.granted) {
    return showGranted(main, answer);
  }
  main.replaceChildren(section(
    "Grant access",
    h("p", {}, "Grant access to ", h("strong", { class: "loginflow-client" }, answer.client), "? It asks for your files as ",
      h("strong", { class: "loginflow-account" }, answer.displayName === answer.user ? answer.user : `${answer.displayName} (${answer.user})`), "."),
    h("p", {}, "It gets an app password of its own, named after it, which you can revoke at any time. Grant only if you started this sign-in in the client yourself: whoever did gets the access."),
    h("p", {},
      h("button", { type: "button", class: "primary", id: "loginflow-grant", onclick: () => grant(main, token, answer) }, "Grant access"),
      " ",
      h("button", { type: "button", class: "secondary", id: "loginflow-cancel", onclick: () => cancel(main, token) }, "Cancel"))));
  return "loginflow-grant";
}

async function grant(main, token, who) {
  const { status, ok, answer } = await request("POST", "/index.php/login/v2/grant", new URLSearchParams({ token }), "grant access");
  if (status === 404) {
    document.body.dataset.ready = showGone(main);
    return;
  }
  if (status === 409) {
    document.body.dataset.ready = showGranted(main, who);
    return;
  }
  if (status === 403) {
    document.body.dataset.ready = showFailure(main, "You signed in with an app password, which grants no access to others. Sign in with your account.");
    return;
  }
  if (!ok) {
    document.body.dataset.ready = showFailure(main, answer.error);
    return;
  }
  document.body.dataset.ready = showGranted(main, who);
}

function showGranted(main, who) {
  main.replaceChildren(section(
    "Access granted",
    h("p", {}, h("strong", {}, who.client), " is connected. It signs in as ", h("strong", {}, who.user), " with an app password of its own. You can close this window and return to it.")));
  return "loginflow-granted";
}

async function cancel(main, token) {
  await request("DELETE", `/index.php/login/v2/flow/${encodeURIComponent(token)}`, undefined, "cancel");
  main.replaceChildren(section(
    "Access not granted",
    h("p", {}, "The client gets no access. You can close this window.")));
  document.body.dataset.ready = "loginflow-cancelled";
}

function showGone(main) {
  main.replaceChildren(section(
    "This sign-in link is unknown or has expired",
    h("p", {}, "A link to connect a client works once, for 20 minutes. Start the sign-in again in the client.")));
  return "loginflow-gone";
}

function showFailure(main, message) {
  main.replaceChildren(section("The client could not be connected", h("p", { class: "note error" }, message)));
  return "loginflow-error";
}

function section(title, ...children) {
  return h("section", { class: "notfound loginflow" }, h("h1", {}, title), ...children);
}
