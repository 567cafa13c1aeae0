// A real OpenID Connect provider for Go tests (package internal/testidp),
// built on panva's oidc-provider. It listens on 127.0.0.1 only, keeps all
// state in memory and prints one JSON line on stdout once it accepts requests.
// SIGTERM stops it.
//
// Environment:
//   IDP_JWKS_FILE         private JWKS ({"keys":[...]}) to sign with. Required:
//                         the Go helper makes the key, so tests can mint tokens
//                         that carry the provider's real signature.
//   IDP_PORT              listen port; 0 (default) picks a free one
//   IDP_ISSUER            issuer URL; default http://127.0.0.1:<port><IDP_ISSUER_PATH>
//   IDP_ISSUER_PATH       path of the default issuer, e.g. /realms/test
//   IDP_ACCESS_TOKEN_TTL  access token lifetime in seconds, default 3600
//   IDP_EXIT_WITH_STDIN   1 = also exit when stdin ends, so a provider never
//                         outlives a Go test process that died
//   IDP_WEB_CLIENT        JSON {"id", "redirect_uris", "post_logout_redirect_uris"}:
//                         a public browser client (authorization code + PKCE,
//                         refresh tokens, CORS for its redirect URIs' origins)
//   IDP_CLIENTS           JSON [{"id", "secret", "auth_method", "redirect_uris",
//                         "native"}]: confidential clients of the authorization
//                         code flow, as the ownCloud apps' fixed clients are
//                         registered at Keycloak. auth_method is
//                         client_secret_basic or client_secret_post (either is
//                         accepted at the token endpoint, as Keycloak does); a
//                         native client may use custom schemes (oc://…) and a
//                         loopback redirect URI on any port (RFC 8252 §7.3,
//                         which oidc-provider applies to native clients). They
//                         get refresh tokens when offline_access is granted.
//
// Added to oidc-provider's own endpoints (discovery, jwks, token, userinfo /me):
//   - the password grant: with `resource` it issues a JWT access token for that
//     audience (RFC 9068, plus user claims the way Keycloak adds them), without
//     it an opaque token that the userinfo endpoint accepts. oidc-provider's
//     userinfo refuses tokens with an audience, so a JWT never works there.
//   - token introspection (RFC 7662) at <issuer>/token/introspection, for the
//     test client's credentials; it knows the opaque tokens (a JWT access
//     token is not kept, so it is "active": false there).
//   - GET <issuer>/test/userinfo-calls → {"calls": N, "introspections": M,
//     "refreshes": R}: requests that reached the userinfo and introspection
//     endpoints, so tests can prove that a client caches, and refresh_token
//     grants that succeeded, so they can prove that a page renews its token.
//   - with IDP_WEB_CLIENT or IDP_CLIENTS, a sign-in form at
//     <issuer>/interaction/<uid> (username and password of users.json;
//     consent is given at once for what the client asked), and RP-initiated
//     logout. Their access tokens are JWTs for the test resource, as the
//     password grant's with `resource`.
//   - the prompt value select_account (the ownCloud clients send
//     prompt=select_account consent), answered by the sign-in form, and the
//     scope offline_access.
//   - a token request with the same client's credentials both in an
//     Authorization: Basic header and in the form (the ownCloud iOS app's
//     refresh) is taken as client_secret_basic, as Keycloak takes it;
//     oidc-provider alone refuses two mechanisms.

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

import Provider, { errors, interactionPolicy } from 'oidc-provider';

// oidc-provider prints its notices with console.info; stdout is reserved for
// the ready line the Go helper reads.
console.info = console.warn;

const env = process.env;
const CLIENT = { id: 'test-client', secret: 'test-client-secret' };
const RESOURCE = 'urn:davspaces:test-api';
const SCOPES = ['openid', 'profile', 'email', 'groups'];
const TTL = Number.parseInt(env.IDP_ACCESS_TOKEN_TTL || '3600', 10);
const WEB_CLIENT = env.IDP_WEB_CLIENT ? JSON.parse(env.IDP_WEB_CLIENT) : null;
const CODE_CLIENTS = JSON.parse(env.IDP_CLIENTS || '[]');
const CODE_FLOW_IDS = new Set([WEB_CLIENT?.id, ...CODE_CLIENTS.map((c) => c.id)].filter(Boolean));
const users = JSON.parse(readFileSync(new URL('users.json', import.meta.url), 'utf8'));

const checkPassword = (username, password) => users.find((u) => u.username === username && u.password === password);

// The claims of a user; oidc-provider filters them by scope at userinfo.
// Absent values (carol has no email and no groups) stay absent.
function userClaims(user) {
  return {
    sub: user.sub,
    name: user.name,
    preferred_username: user.username,
    email: user.email,
    email_verified: user.email === undefined ? undefined : true,
    groups: user.groups,
  };
}

// A plain map: oidc-provider checks expiry itself, and its bundled adapter
// would warn on stderr that it is for development only.
const store = new Map();
class MemoryAdapter {
  constructor(model) { this.model = model; }
  async upsert(id, payload) { store.set(`${this.model}:${id}`, payload); }
  async find(id) { return store.get(`${this.model}:${id}`); }
  // Sessions are found by uid when a sign-in resumes after the form.
  async findByUid(uid) {
    for (const [key, payload] of store) {
      if (key.startsWith(`${this.model}:`) && payload.uid === uid) return payload;
    }
    return undefined;
  }
  async findByUserCode() { return undefined; }
  async consume(id) { const p = store.get(`${this.model}:${id}`); if (p) p.consumed = Math.floor(Date.now() / 1000); }
  async destroy(id) { store.delete(`${this.model}:${id}`); }
  async revokeByGrantId() {}
}

const server = createServer();
server.keepAliveTimeout = 65_000; // outlive idle test clients, so none reuses a closing connection
await new Promise((resolve, reject) => {
  server.once('error', reject).listen(Number.parseInt(env.IDP_PORT || '0', 10), '127.0.0.1', resolve);
});
const { port } = server.address();
const issuer = (env.IDP_ISSUER || `http://127.0.0.1:${port}${env.IDP_ISSUER_PATH || ''}`).replace(/\/$/, '');
const mountPath = new URL(issuer).pathname.replace(/\/$/, '');

const resourceServer = {
  audience: RESOURCE,
  scope: SCOPES.join(' '),
  accessTokenFormat: 'jwt',
  accessTokenTTL: TTL,
  jwt: { sign: { alg: 'RS256' } },
};

const provider = new Provider(issuer, {
  adapter: MemoryAdapter,
  jwks: JSON.parse(readFileSync(env.IDP_JWKS_FILE, 'utf8')),
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  clients: [{
    client_id: CLIENT.id,
    client_secret: CLIENT.secret,
    grant_types: ['password'],
    response_types: [],
    redirect_uris: [],
  }, ...(WEB_CLIENT ? [webClient(WEB_CLIENT)] : []), ...CODE_CLIENTS.map(confidentialClient)],
  // The browser client gets refresh tokens without offline_access, as a
  // page keeps its token only while it is open; the others when the user
  // granted offline_access.
  clientBasedCORS: (_ctx, origin, client) => client.clientAuthMethod === 'none'
    && client.redirectUris.some((uri) => URL.parse(uri)?.origin === origin),
  issueRefreshToken: async (_ctx, client, code) => client.grantTypeAllowed('refresh_token')
    && (client.clientAuthMethod === 'none' || code.scopes.has('offline_access')),
  interactions: {
    policy: interactionPolicyWithSelectAccount(),
    url: async (_ctx, interaction) => `${mountPath}/interaction/${interaction.uid}`,
  },
  async findAccount(_ctx, sub) {
    const user = users.find((u) => u.sub === sub);
    return user && { accountId: sub, claims: async () => userClaims(user) };
  },
  claims: {
    openid: ['sub'],
    profile: ['name', 'preferred_username'],
    email: ['email', 'email_verified'],
    groups: ['groups'],
  },
  scopes: [...SCOPES, 'offline_access'],
  // oidc-provider leaves it out; the ownCloud desktop client sends only
  // the prompt values listed here, when there is a list.
  discovery: { prompt_values_supported: ['none', 'select_account', 'login', 'consent'] },
  routes: { userinfo: '/me' },
  features: {
    devInteractions: { enabled: false },
    userinfo: { enabled: true },
    // Any authenticated client may introspect any token: the test client
    // plays the resource server.
    introspection: { enabled: true, allowedPolicy: async () => true },
    rpInitiatedLogout: { enabled: true, logoutSource },
    resourceIndicators: {
      enabled: true,
      // The clients of the code flow name no resource: their tokens are for
      // the API.
      defaultResource: async (_ctx, client, oneOf) => oneOf ?? (client.grantTypeAllowed('authorization_code') ? RESOURCE : undefined),
      useGrantedResource: async () => true,
      getResourceServerInfo: async (_ctx, indicator) => {
        if (indicator === RESOURCE) return resourceServer;
        throw new errors.InvalidTarget(`unknown resource ${indicator}`);
      },
    },
  },
  // User claims in the JWT, as Keycloak puts them there.
  async extraTokenClaims(_ctx, token) {
    const user = users.find((u) => u.sub === token.accountId);
    if (!user) return undefined;
    const { sub: _sub, email_verified: _ev, ...claims } = userClaims(user);
    return claims;
  },
  // The grant of a client of the code flow outlives its short access
  // tokens: its refresh tokens and a reload's sign-in need it.
  ttl: { AccessToken: TTL, Grant: (_ctx, grant) => (CODE_FLOW_IDS.has(grant.clientId) ? Math.max(TTL, 3600) : TTL) },
});
provider.on('server_error', (_ctx, err) => console.error('server_error', err));
let refreshes = 0;
provider.on('grant.success', (ctx) => {
  if (ctx.oidc.params.grant_type === 'refresh_token') refreshes += 1;
});

// webClient is the public client of a page: no secret, PKCE (required for
// public clients by oidc-provider), refresh tokens.
function webClient({ id, redirect_uris: redirectURIs, post_logout_redirect_uris: logoutURIs }) {
  return {
    client_id: id,
    token_endpoint_auth_method: 'none',
    application_type: 'web',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    redirect_uris: redirectURIs,
    post_logout_redirect_uris: logoutURIs || [],
  };
}

// confidentialClient is a client with a secret of the authorization code
// flow; a native one may redirect to custom schemes and to a loopback
// address on any port.
function confidentialClient({
  id, secret, auth_method: authMethod, redirect_uris: redirectURIs, native,
}) {
  return {
    client_id: id,
    client_secret: secret,
    token_endpoint_auth_method: authMethod || 'client_secret_basic',
    application_type: native ? 'native' : 'web',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    redirect_uris: redirectURIs,
  };
}

// interactionPolicyWithSelectAccount is oidc-provider's policy (login,
// consent) with the prompt select_account in front, so that a request
// with prompt=select_account is accepted and shows the sign-in form.
function interactionPolicyWithSelectAccount() {
  const policy = interactionPolicy.base();
  policy.add(new interactionPolicy.Prompt({ name: 'select_account', requestable: true }), 0);
  return policy;
}

// logoutSource asks nothing: the form signs out when its button is pressed
// (oidc-provider's own page asks "Do you want to sign-out?" too).
async function logoutSource(ctx, form) {
  ctx.body = `<!doctype html><html><head><meta charset="utf-8"><title>Sign out</title></head><body>
${form}<button id="logout" type="submit" form="op.logoutForm" value="yes" name="logout">Sign out</button></body></html>`;
}

// The password grant (RFC 6749 §4.3), which oidc-provider leaves out; it
// issues tokens through the library's own Grant and AccessToken models.
provider.registerGrantType('password', async (ctx) => {
  const { client, params } = ctx.oidc;
  const user = checkPassword(params.username, params.password);
  if (!user) throw new errors.InvalidGrant('invalid resource owner credentials');
  const scopes = (params.scope || 'openid').split(' ').filter(Boolean);
  const unknown = scopes.find((s) => !SCOPES.includes(s));
  if (unknown) throw new errors.InvalidScope('requested scope is not allowed', unknown);

  const grant = new provider.Grant({ accountId: user.sub, clientId: client.clientId });
  grant.addOIDCScope(scopes.join(' '));
  const at = new provider.AccessToken({ accountId: user.sub, client, gty: 'password', scope: scopes.join(' ') });
  const resource = [params.resource].flat().filter(Boolean);
  if (resource.length > 1) throw new errors.InvalidTarget('only one resource is supported');
  if (resource.length === 1) {
    if (resource[0] !== RESOURCE) throw new errors.InvalidTarget(`unknown resource ${resource[0]}`);
    at.resourceServer = new provider.ResourceServer(RESOURCE, resourceServer);
  }
  at.grantId = await grant.save();
  ctx.oidc.entity('Grant', grant);
  ctx.oidc.entity('AccessToken', at);
  ctx.body = {
    access_token: await at.save(),
    token_type: 'Bearer',
    expires_in: at.expiration,
    scope: at.scope,
  };
}, ['username', 'password', 'scope', 'resource'], ['resource']);

// Requests outside the issuer's path get 404; the rest reach oidc-provider
// with the path stripped, after the userinfo counter saw them.
let userinfoCalls = 0;
let introspections = 0;
const callback = provider.callback();
server.on('request', (req, res) => {
  const path = req.url.split('?')[0];
  if (path !== mountPath && !path.startsWith(`${mountPath}/`)) {
    res.writeHead(404).end();
    return;
  }
  const local = path.slice(mountPath.length) || '/';
  if (local === '/test/userinfo-calls') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ calls: userinfoCalls, introspections, refreshes }));
    return;
  }
  if (local.startsWith('/interaction/')) {
    interaction(req, res, local).catch((err) => {
      console.error('interaction', err);
      if (!res.headersSent) res.writeHead(500).end(String(err));
    });
    return;
  }
  if (local === '/me') userinfoCalls += 1;
  if (local === '/token/introspection') introspections += 1;
  req.originalUrl = req.url; // lets oidc-provider build URLs that keep the mount path
  req.url = local + req.url.slice(path.length);
  if (local === '/token' && req.method === 'POST' && /^basic /i.test(req.headers.authorization || '')) {
    oneClientAuthentication(req).then(() => callback(req, res), (err) => {
      console.error('token request', err);
      if (!res.headersSent) res.writeHead(400).end();
    });
    return;
  }
  callback(req, res);
});

// oneClientAuthentication reads a token request with a Basic header and,
// when its form repeats the same client's secret, drops the form's copy:
// Keycloak takes such a request, oidc-provider refuses two mechanisms. The
// form, read here, reaches oidc-provider as req.body.
async function oneClientAuthentication(req) {
  const body = await readBody(req);
  const form = new URLSearchParams(body);
  const basic = Buffer.from(req.headers.authorization.slice('basic '.length).trim(), 'base64').toString('utf8');
  const colon = basic.indexOf(':');
  const [id, secret] = [basic.slice(0, colon), basic.slice(colon + 1)].map((v) => decodeURIComponent(v.replace(/\+/g, ' ')));
  if (form.has('client_secret') && form.get('client_secret') === secret && (form.get('client_id') ?? id) === id) {
    form.delete('client_secret');
    form.delete('client_id');
  }
  req.body = form.toString();
}

// interaction answers the sign-in steps oidc-provider sends the browser to:
// GET shows the form (or gives consent at once), POST …/login checks the
// password.
async function interaction(req, res, local) {
  const details = await provider.interactionDetails(req, res);
  const { uid, prompt, params } = details;
  if (req.method === 'POST' && local === `/interaction/${uid}/login`) {
    const form = new URLSearchParams(await readBody(req));
    const user = checkPassword(form.get('username'), form.get('password'));
    if (!user) {
      loginForm(res, uid, params.client_id, 'Wrong username or password.');
      return;
    }
    // Signing in is choosing the account: it answers select_account too.
    await provider.interactionFinished(req, res, { select_account: {}, login: { accountId: user.sub } }, { mergeWithLastSubmission: false });
    return;
  }
  if (prompt.name === 'login' || prompt.name === 'select_account') {
    loginForm(res, uid, params.client_id, '');
    return;
  }
  // Consent: grant what is missing, as a first-party client gets it.
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId: details.session.accountId, clientId: params.client_id });
  const { missingOIDCScope, missingOIDCClaims, missingResourceScopes } = prompt.details;
  if (missingOIDCScope) grant.addOIDCScope(missingOIDCScope.join(' '));
  if (missingOIDCClaims) grant.addOIDCClaims(missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missingResourceScopes || {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

function loginForm(res, uid, clientID, error) {
  const esc = (v) => String(v).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(`<!doctype html>
<html><head><meta charset="utf-8"><title>Sign in</title></head><body>
<h1>Sign in to ${esc(clientID)}</h1>${error ? `<p id="error">${esc(error)}</p>` : ''}
<form method="post" action="${mountPath}/interaction/${esc(uid)}/login">
<label>Username <input id="username" name="username" autocomplete="username" required></label>
<label>Password <input id="password" name="password" type="password" autocomplete="current-password" required></label>
<button id="submit" type="submit">Sign in</button>
</form></body></html>`);
}

async function readBody(req) {
  let body = '';
  for await (const chunk of req) {
    body += chunk;
    if (body.length > 10_000) throw new Error('form too large');
  }
  return body;
}

process.on('SIGTERM', () => process.exit(0));
if (env.IDP_EXIT_WITH_STDIN === '1') process.stdin.on('end', () => process.exit(0)).resume();
process.stdout.write(`${JSON.stringify({
  issuer, port, resource: RESOURCE, client_id: CLIENT.id, client_secret: CLIENT.secret, scope: SCOPES.join(' '),
})}\n`);
