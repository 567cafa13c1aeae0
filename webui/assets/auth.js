// OpenID Connect sign-in of the page, when the server names a client
// (<meta name="davspaces-oidc-…">): the authorization code flow with PKCE
// (S256) as a public client, its redirect URI the origin + "/". The tokens
// live in this module only (never in storage); sessionStorage holds the
// PKCE verifier, state, nonce and the page to return to for the round trip
// to the provider alone. The access token is renewed with the refresh
// token a little before it expires; when that fails the page signs in
// again, which the provider's session answers without a password.
// Without a client the browser's own credentials (Basic) are used and
// every function here does nothing.

const meta = (name) => document.querySelector(`meta[name="${name}"]`)?.content || "";

const issuer = meta("davspaces-oidc-issuer");
const clientId = meta("davspaces-oidc-client-id");
const scopes = meta("davspaces-oidc-scopes") || "openid profile email";

/** enabled tells whether the page signs in with OpenID Connect. */
export const enabled = clientId !== "";

const roundTripKey = "davspaces.signin";
const signedOutKey = "davspaces.signedout";
const redirectURI = `${location.origin}/`;

let discovered = null;
let tokens = null; // { access, refresh, idToken, expiresAt (ms) }
let renewal = null; // the renewal in flight
let renewTimer = 0;

/** SignInError is a sign-in that failed, in words. */
export class SignInError extends Error {}

// discovery reads the provider's metadata once.
function discovery() {
  discovered ||= fetch(`${issuer}/.well-known/openid-configuration`, { cache: "no-store" })
    .then((res) => {
      if (!res.ok) {
        throw new Error(String(res.status));
      }
      return res.json();
    })
    .catch((err) => {
      discovered = null;
      throw new SignInError(`The sign-in service cannot be reached (${err.message}). Reload the page to try again.`);
    });
  return discovered;
}

function base64url(bytes) {
  return btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function randomString() {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

async function challengeOf(verifier) {
  return base64url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
}

/**
 * start signs the page in. It resolves to "signed-in" (a token is ready,
 * or the page does not sign in itself), to "signed-out" (the person signed
 * out: the page offers to sign in again), or never, while the browser goes
 * to the provider.
 */
export async function start() {
  if (!enabled || tokens) {
    return "signed-in";
  }
  const params = new URLSearchParams(location.search);
  const saved = sessionStorage.getItem(roundTripKey);
  if (location.pathname === "/" && saved && params.has("state")) {
    sessionStorage.removeItem(roundTripKey);
    await finish(params, JSON.parse(saved));
    return "signed-in";
  }
  if (sessionStorage.getItem(signedOutKey)) {
    return "signed-out";
  }
  await redirectToProvider();
  return new Promise(() => {});
}

/** signInAgain leaves the signed-out state for the provider's sign-in. */
export async function signInAgain() {
  sessionStorage.removeItem(signedOutKey);
  await redirectToProvider();
}

// redirectToProvider sends the browser to the authorization endpoint,
// keeping what the way back needs.
async function redirectToProvider() {
  const config = await discovery();
  const verifier = randomString();
  const state = randomString();
  const nonce = randomString();
  // A stale ?code=…&state=… (a bookmark of the way back) is not returned to.
  const stale = location.pathname === "/" && new URLSearchParams(location.search).has("state");
  const returnTo = stale ? "/" : location.pathname + location.search + location.hash;
  sessionStorage.setItem(roundTripKey, JSON.stringify({ verifier, state, nonce, returnTo }));
  const query = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: redirectURI,
    scope: scopes,
    state,
    nonce,
    code_challenge: await challengeOf(verifier),
    code_challenge_method: "S256",
  });
  location.assign(`${config.authorization_endpoint}?${query}`);
}

// finish exchanges the provider's code for tokens and puts the address
// back to the page the sign-in started from.
async function finish(params, saved) {
  if (params.get("state") !== saved.state) {
    throw new SignInError("The sign-in could not be completed (it did not come from this page). Reload the page to try again.");
  }
  if (params.has("error")) {
    throw new SignInError(`The sign-in was refused: ${params.get("error_description") || params.get("error")}.`);
  }
  await tokenRequest({
    grant_type: "authorization_code",
    code: params.get("code") || "",
    redirect_uri: redirectURI,
    code_verifier: saved.verifier,
  }, saved.nonce);
  history.replaceState(null, "", saved.returnTo || "/");
}

// tokenRequest asks the token endpoint and keeps the answer; with a nonce
// the ID token must carry it (it came straight from the provider over the
// connection, so its signature is not checked here: OpenID Connect Core
// 3.1.3.7).
async function tokenRequest(form, nonce) {
  const config = await discovery();
  let res;
  try {
    res = await fetch(config.token_endpoint, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ client_id: clientId, ...form }),
      cache: "no-store",
    });
  } catch {
    throw new SignInError("The sign-in service cannot be reached. Reload the page to try again.");
  }
  const answer = await res.json().catch(() => ({}));
  if (!res.ok || !answer.access_token) {
    throw new SignInError(`The sign-in service refused the sign-in (${answer.error_description || answer.error || res.status}). Reload the page to try again.`);
  }
  const idToken = answer.id_token || tokens?.idToken || "";
  if (nonce !== undefined && claimsOf(idToken).nonce !== nonce) {
    throw new SignInError("The sign-in could not be completed (its ID token is not for this page). Reload the page to try again.");
  }
  const lifetime = Number(answer.expires_in) || 300;
  tokens = {
    access: answer.access_token,
    refresh: answer.refresh_token || tokens?.refresh || "",
    idToken,
    expiresAt: Date.now() + lifetime * 1000,
  };
  scheduleRenewal(lifetime);
}

function claimsOf(jwt) {
  try {
    const payload = jwt.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    return JSON.parse(atob(payload));
  } catch {
    return {};
  }
}

// scheduleRenewal renews the token when most of its lifetime has passed,
// at most a minute before it ends.
function scheduleRenewal(lifetime) {
  clearTimeout(renewTimer);
  const after = Math.max(lifetime * 0.7, lifetime - 60);
  renewTimer = setTimeout(() => renew().catch(() => {}), after * 1000);
}

// renew trades the refresh token for new tokens (the provider rotates the
// refresh token); without one, or refused, the page signs in again.
function renew() {
  renewal ||= (async () => {
    try {
      if (!tokens?.refresh) {
        throw new SignInError("no refresh token");
      }
      await tokenRequest({ grant_type: "refresh_token", refresh_token: tokens.refresh });
    } catch (err) {
      tokens = null;
      await redirectToProvider();
      throw err;
    } finally {
      renewal = null;
    }
  })();
  return renewal;
}

/**
 * authorization is the Authorization header value for the server, renewed
 * first when the token is about to end (a timer in a background tab may
 * have been held back); "" when the browser's own credentials are used.
 */
export async function authorization() {
  if (!enabled || !tokens) {
    return "";
  }
  if (Date.now() > tokens.expiresAt - 5000) {
    await renew();
  }
  return `Bearer ${tokens.access}`;
}

/** signedIn tells whether the page holds a token. */
export function signedIn() {
  return enabled && tokens !== null;
}

/**
 * signOut forgets the tokens and ends the provider's session at its
 * end_session_endpoint, which sends the browser back to the origin + "/";
 * a provider without one leaves the browser signed out here only.
 */
export async function signOut() {
  const idToken = tokens?.idToken || "";
  tokens = null;
  clearTimeout(renewTimer);
  sessionStorage.setItem(signedOutKey, "1");
  const config = await discovery().catch(() => ({}));
  if (!config.end_session_endpoint) {
    location.assign("/");
    return;
  }
  const query = new URLSearchParams({ client_id: clientId, post_logout_redirect_uri: redirectURI });
  if (idToken) {
    query.set("id_token_hint", idToken);
  }
  location.assign(`${config.end_session_endpoint}?${query}`);
}
