// A real OAuth 2.1 / OpenID authorization server for the authorization tests: `oidc-provider`
// (npm, pinned by scripts/install-tools.sh `auth-server`), on loopback, with two confidential
// clients for the client-credentials grant and RFC 8707 resource indicators, so that a token
// requested for a resource is a JWT (RS256) whose `aud` names it. Without a `resource` the
// server issues an opaque token, which introspection (enabled) can check.
//
//   agent        / agent-secret        may ask for `mcp tasks.write`
//   reader       / reader-secret       may ask for `mcp`
//   opaque-agent / opaque-agent-secret may ask for `mcp tasks.write`; its tokens for a
//                                      resource are opaque (checked by introspection)
//   mcp-server   / mcp-server-secret   no grant: a resource server introspecting tokens
//
// Usage: node scripts/auth-server.mjs   (PORT=0 picks a free port)
// Prints `issuer http://127.0.0.1:PORT` on stdout once it listens.
import { createRequire } from "node:module";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(path.join(root, ".tools/auth-server/package.json"));
const { default: Provider } = await import(require.resolve("oidc-provider"));

const SCOPES = ["mcp", "tasks.write"];

const server = http.createServer();
await new Promise((resolve) => server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  clients: [
    { client_id: "agent", client_secret: "agent-secret", scope: "mcp tasks.write" },
    { client_id: "reader", client_secret: "reader-secret", scope: "mcp" },
    { client_id: "opaque-agent", client_secret: "opaque-agent-secret", scope: "mcp tasks.write" },
  ].map((client) => ({
    ...client,
    grant_types: ["client_credentials"],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: "client_secret_basic",
  })).concat([{
    client_id: "mcp-server",
    client_secret: "mcp-server-secret",
    grant_types: [],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: "client_secret_basic",
  }]),
  scopes: SCOPES,
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resource, client) => ({
        scope: SCOPES.join(" "),
        audience: resource,
        accessTokenTTL: 600,
        ...(client.clientId === "opaque-agent"
          ? { accessTokenFormat: "opaque" }
          : { accessTokenFormat: "jwt", jwt: { sign: { alg: "RS256" } } }),
      }),
    },
  },
});
// Loopback over plain HTTP: fine for a test, never for a deployment.
provider.proxy = false;
server.on("request", provider.callback());
console.log(`issuer ${issuer}`);
