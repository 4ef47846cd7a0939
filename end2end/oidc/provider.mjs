// A real OpenID Provider for tests and local trials: `oidc-provider` (a
// certified implementation, npm) on loopback, with static accounts and a
// `groups` claim. Not for production: sign-in is its development form
// (any password), keys are made at start.
//
//   node end2end/oidc/provider.mjs [--port N] [--accounts FILE]
//        [--client-secret S] [--no-refresh]
//
// Prints one JSON line when it listens: {"issuer": "http://127.0.0.1:N"}.
// The client `jpu-share` may redirect to /auth/oidc/callback on any
// loopback port (a native client, RFC 8252), so a server on port 0 works.
// Accounts: {"<sub>": {"groups": [...], "email": "...", "name": "...",
// "preferred_username"?: "..." (default: the sub)}}. The file is read
// again at every lookup: a test drops a person, or their group, by
// rewriting it, and the provider refuses or changes them from then on
// (a refresh of their grant included).
import http from 'node:http';
import { readFileSync } from 'node:fs';
import Provider, { interactionPolicy } from 'oidc-provider';

const args = process.argv.slice(2);
const arg = (name, fallback) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? args[at + 1] : fallback;
};
const DEFAULT_ACCOUNTS = {
  kim: { groups: ['gpu-lab-vision', 'staff'], name: 'Kim Minji', email: 'kim@example.edu' },
  lee: { groups: ['gpu-lab-nlp'], name: 'Lee Jun', email: 'lee@example.edu' },
  park: { groups: ['gpu-lab-vision', 'gpu-admins'], name: 'Park Seo', email: 'park@example.edu' },
  choi: { groups: ['students'], name: 'Choi Ara', email: 'choi@example.edu' },
  // the same name as the site's local break-glass account
  admin: { groups: ['gpu-lab-ops', 'gpu-admins'], name: 'Not The Admin', email: 'admin@example.edu' },
  // attackers by name: a provider user calling itself an existing
  // account's name (sub `mallory`, `kimmy`), and a look-alike of `kim`
  mallory: { groups: ['gpu-lab-ops', 'gpu-admins'], name: 'Mallory', email: 'm@example.edu', preferred_username: 'demo' },
  kimmy: { groups: ['gpu-lab-vision'], name: 'Kim Again', email: 'k2@example.edu', preferred_username: 'kim' },
  Kim: { groups: ['gpu-lab-vision'], name: 'Kim Look-alike', email: 'k3@example.edu' },
};
const accountsOf = () => (arg('accounts') ? JSON.parse(readFileSync(arg('accounts'), 'utf8')) : DEFAULT_ACCOUNTS);
const secret = arg('client-secret', 'jpu-share-test-secret');

// a first-party client: no consent screen, not even the one native
// clients get by default
const policy = interactionPolicy.base();
policy.get('consent').checks.remove('native_client_prompt');

const server = http.createServer();
server.listen(Number(arg('port', '0')), '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients: [{
      client_id: 'jpu-share',
      client_secret: secret,
      application_type: 'native',
      redirect_uris: ['http://127.0.0.1/auth/oidc/callback'],
      grant_types: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    }],
    claims: {
      openid: ['sub'],
      profile: ['preferred_username', 'name'],
      email: ['email'],
      groups: ['groups'],
    },
    // the groups and username go into the ID token itself
    conformIdTokenClaims: false,
    cookies: { keys: ['jpu-share-test-provider'] },
    interactions: { policy },
    features: { devInteractions: { enabled: true }, deviceFlow: { enabled: true } },
    // a refresh token for every grant, outliving the browser's sign-in
    // here (what an `offline_access` grant is at a campus provider)
    // (--no-refresh: none, as a provider that gives no offline access)
    async issueRefreshToken(_ctx, client) {
      return !args.includes('--no-refresh') && client.grantTypeAllowed('refresh_token');
    },
    async expiresWithSession() {
      return false;
    },
    async findAccount(_ctx, id) {
      const account = accountsOf()[id];
      if (!account) return undefined;
      return {
        accountId: id,
        async claims() {
          return { sub: id, preferred_username: account.preferred_username ?? id, name: account.name, email: account.email, groups: account.groups ?? [] };
        },
      };
    },
    // first-party client: no consent screen
    async loadExistingGrant(ctx) {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
      grant.addOIDCScope('openid profile email groups offline_access');
      await grant.save();
      return grant;
    },
  });
  server.on('request', provider.callback());
  console.log(JSON.stringify({ issuer }));
});
