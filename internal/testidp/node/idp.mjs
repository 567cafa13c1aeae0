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
//
// Added to oidc-provider's own endpoints (discovery, jwks, token, userinfo /me):
//   - the password grant: with `resource` it issues a JWT access token for that
//     audience (RFC 9068, plus user claims the way Keycloak adds them), without
//     it an opaque token that the userinfo endpoint accepts. oidc-provider's
//     userinfo refuses tokens with an audience, so a JWT never works there.
//   - token introspection (RFC 7662) at <issuer>/token/introspection, for the
//     test client's credentials; it knows the opaque tokens (a JWT access
//     token is not kept, so it is "active": false there).
//   - GET <issuer>/test/userinfo-calls → {"calls": N, "introspections": M}:
//     requests that reached the userinfo and introspection endpoints, so
//     tests can prove that a client caches.

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

import Provider, { errors } from 'oidc-provider';

// oidc-provider prints its notices with console.info; stdout is reserved for
// the ready line the Go helper reads.
console.info = console.warn;

const env = process.env;
const CLIENT = { id: 'test-client', secret: 'test-client-secret' };
const RESOURCE = 'urn:davspaces:test-api';
const SCOPES = ['openid', 'profile', 'email', 'groups'];
const TTL = Number.parseInt(env.IDP_ACCESS_TOKEN_TTL || '3600', 10);
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
  async findByUid() { return undefined; }
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
  }],
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
  scopes: SCOPES,
  routes: { userinfo: '/me' },
  features: {
    devInteractions: { enabled: false },
    userinfo: { enabled: true },
    // Any authenticated client may introspect any token: the test client
    // plays the resource server.
    introspection: { enabled: true, allowedPolicy: async () => true },
    resourceIndicators: {
      enabled: true,
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
  ttl: { AccessToken: TTL, Grant: TTL },
});
provider.on('server_error', (_ctx, err) => console.error('server_error', err));

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
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ calls: userinfoCalls, introspections }));
    return;
  }
  if (local === '/me') userinfoCalls += 1;
  if (local === '/token/introspection') introspections += 1;
  req.originalUrl = req.url; // lets oidc-provider build URLs that keep the mount path
  req.url = local + req.url.slice(path.length);
  callback(req, res);
});

process.on('SIGTERM', () => process.exit(0));
if (env.IDP_EXIT_WITH_STDIN === '1') process.stdin.on('end', () => process.exit(0)).resume();
process.stdout.write(`${JSON.stringify({
  issuer, port, resource: RESOURCE, client_id: CLIENT.id, client_secret: CLIENT.secret, scope: SCOPES.join(' '),
})}\n`);
