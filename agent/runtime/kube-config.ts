import { readFileSync } from 'node:fs';
import type { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent, type AgentOptions, type RequestOptions } from 'node:https';
import { isIPv6 } from 'node:net';
import { dirname, isAbsolute, join } from 'node:path';
// client-node's own pieces that import nothing else of it (its index and config.js load every generated model and
// API: about 50 MiB of a process). Types of the package itself cost nothing at runtime.
import type { Cluster, Context, User } from '@kubernetes/client-node';
import { ExecAuth } from '@kubernetes/client-node/dist/exec_auth.js';
import { FileAuth } from '@kubernetes/client-node/dist/file_auth.js';
import { newClusters, newContexts, newUsers, type ConfigOptions } from '@kubernetes/client-node/dist/config_types.js';
import yaml from 'js-yaml';
import type { ApiConfiguration, AuthContext, AuthMethod } from './kube-client.js';
import { makeApiClient } from './kube-client.js';
import { http } from './node-http.js';

const SERVICE_ACCOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';

const makeAbsolutePath = (root: string, file: string) => (!root || isAbsolute(file) ? file : join(root, file));

/** A file's bytes, else base64 data decoded, else null (client-node's bufferFromFileOrString). */
function bufferFromFileOrString(file: string | undefined, data: string | undefined): Buffer | null {
  if (file) return readFileSync(file);
  return data ? Buffer.from(data, 'base64') : null;
}

/** The TLS settings of request options, as an agent's options (one agent per request, as client-node makes them). */
function tlsOf(opts: HttpsRequestOptions): AgentOptions {
  const { ca, cert, key, pfx, passphrase, rejectUnauthorized, servername } = opts;
  return {
    ca,
    cert,
    key,
    pfx,
    passphrase,
    ...(rejectUnauthorized !== undefined && { rejectUnauthorized }),
    ...(servername !== undefined && { servername }),
  };
}

/** What client-node's authenticators implement (exec credentials, token files, auth providers). */
interface Authenticator {
  isAuthProvider(user: User): unknown;
  applyAuthentication(user: User, opts: { headers?: Record<string, string | string[] | number | undefined> }): Promise<void>;
}

/** Options a request is built from: https.RequestOptions plus the header object client-node's authenticators fill. */
export type HttpsRequestOptions = RequestOptions & { headers?: Record<string, string | string[] | number | undefined> };

/**
 * The cluster access the agent's API clients and watches need: the current cluster and user and how to authenticate
 * a request. This file's {@link KubeConfig} and client-node's both are one (the agent's tests hand it client-node's);
 * API clients are made from it with kube-client's makeApiClient. The agent wraps it (request counting, kept-alive connections, the transport) by prototype.
 */
export interface KubeAccess extends AuthMethod {
  getCurrentCluster(): Cluster | null;
  getCurrentUser(): User | null;
  /** Sets TLS options, the agent and the authentication headers of a watch request (client-node's name). */
  applyToHTTPSOptions(opts: HttpsRequestOptions): Promise<void>;
}

/**
 * client-node's KubeConfig (1.4) without what the agent never uses, so the agent process does not load client-node's
 * index (every generated model and API, ~50 MiB resident): the same kubeconfig parsing (client-node's config_types),
 * the same TLS and authentication rules (CA, client certificates, bearer tokens, token files refreshed every minute,
 * exec credential plugins, basic auth, impersonation, skip-TLS-verify, tls-server-name, http:// servers), and, loaded
 * only when a kubeconfig names them, the `azure`, `gcp` and `oidc` auth providers and proxy-url agents. Method names
 * and behaviour are client-node's, so the agent's wrappers work on either.
 */
export class KubeConfig implements KubeAccess {
  private contexts: Context[] = [];
  private clusters: Cluster[] = [];
  private users: User[] = [];
  private currentContext = '';
  private readonly authenticators: Authenticator[] = [new ExecAuth(), new FileAuth()];
  private providers: Promise<Authenticator[]> | undefined;

  getContexts(): Context[] {
    return this.contexts;
  }
  getClusters(): Cluster[] {
    return this.clusters;
  }
  getUsers(): User[] {
    return this.users;
  }
  getCurrentContext(): string {
    return this.currentContext;
  }
  setCurrentContext(context: string): void {
    this.currentContext = context;
  }
  getContextObject(name: string): Context | null {
    return this.contexts.find((c) => c.name === name) ?? null;
  }
  getCurrentCluster(): Cluster | null {
    const context = this.getContextObject(this.currentContext);
    return context ? (this.clusters.find((c) => c.name === context.cluster) ?? null) : null;
  }
  getCurrentUser(): User | null {
    const context = this.getContextObject(this.currentContext);
    return context ? (this.users.find((u) => u.name === context.user) ?? null) : null;
  }

  loadFromOptions(options: { clusters: Cluster[]; users: User[]; contexts: Context[]; currentContext: string }): void {
    this.clusters = options.clusters;
    this.users = options.users;
    this.contexts = options.contexts;
    this.currentContext = options.currentContext;
  }

  loadFromString(config: string, opts?: Partial<ConfigOptions>): void {
    const obj = (yaml.load(config) ?? {}) as Record<string, unknown>;
    this.clusters = newClusters(obj['clusters'], opts);
    this.contexts = newContexts(obj['contexts'], opts);
    this.users = newUsers(obj['users'], opts);
    this.currentContext = (obj['current-context'] as string | undefined) ?? '';
  }

  /** Relative paths of certificate files are relative to the kubeconfig file (client-node's rule). */
  loadFromFile(file: string, opts?: Partial<ConfigOptions>): void {
    this.loadFromString(readFileSync(file, 'utf8'), opts);
    const root = dirname(file);
    for (const cluster of this.clusters) if (cluster.caFile) cluster.caFile = makeAbsolutePath(root, cluster.caFile);
    for (const user of this.users) {
      if (user.certFile) user.certFile = makeAbsolutePath(root, user.certFile);
      if (user.keyFile) user.keyFile = makeAbsolutePath(root, user.keyFile);
    }
  }

  /** The pod's service account (client-node's loadFromCluster): its CA, its token file, its namespace. */
  loadFromCluster(pathPrefix = ''): void {
    const host = process.env['KUBERNETES_SERVICE_HOST'] ?? '';
    const port = process.env['KUBERNETES_SERVICE_PORT'] ?? '';
    const scheme = port === '80' || port === '8080' || port === '8001' ? 'http' : 'https';
    const serverHost = isIPv6(host) ? `[${host}]` : host;
    let namespace: string | undefined;
    try {
      namespace = readFileSync(`${pathPrefix}${SERVICE_ACCOUNT}/namespace`, 'utf8');
    } catch {
      // No namespace file: no namespace.
    }
    this.loadFromOptions({
      clusters: [{ name: 'inCluster', caFile: `${pathPrefix}${SERVICE_ACCOUNT}/ca.crt`, server: `${scheme}://${serverHost}:${port}`, skipTLSVerify: false }],
      users: [{ name: 'inClusterUser', authProvider: { name: 'tokenFile', config: { tokenFile: `${pathPrefix}${SERVICE_ACCOUNT}/token` } } }],
      contexts: [{ cluster: 'inCluster', name: 'inClusterContext', user: 'inClusterUser', ...(namespace !== undefined && { namespace }) }],
      currentContext: 'inClusterContext',
    });
  }

  makeApiClient<T>(apiClientType: new (config: ApiConfiguration) => T): T {
    return makeApiClient(this, apiClientType);
  }

  /** TLS options, agent and authentication headers of a request (client-node's applyToHTTPSOptions). */
  async applyToHTTPSOptions(opts: HttpsRequestOptions): Promise<void> {
    const user = this.applyOptions(opts);
    await this.authenticate(user, opts);
    if (user?.username) opts.auth = `${user.username}:${user.password ?? ''}`;
    opts.agent = await this.agentFor(this.getCurrentCluster(), tlsOf(opts));
  }

  /** Authenticates one API request (client-node's applySecurityAuthentication): headers and an agent with the TLS settings. */
  async applySecurityAuthentication(context: AuthContext): Promise<void> {
    const opts: HttpsRequestOptions = {};
    const user = this.applyOptions(opts);
    await this.authenticate(user, opts);
    if (user?.username) context.setHeaderParam('Authorization', `Basic ${Buffer.from(`${user.username}:${user.password ?? ''}`).toString('base64')}`);
    for (const [key, value] of Object.entries(opts.headers ?? {})) context.setHeaderParam(key, `${String(value)}`);
    context.setAgent(await this.agentFor(this.getCurrentCluster(), tlsOf(opts)));
  }

  /** The current cluster's TLS settings and the current user's certificates into `opts`; the user, if there is one. */
  private applyOptions(opts: HttpsRequestOptions): User | null {
    const cluster = this.getCurrentCluster();
    if (cluster?.skipTLSVerify) opts.rejectUnauthorized = false;
    if (cluster?.tlsServerName) opts.servername = cluster.tlsServerName;
    const ca = cluster ? bufferFromFileOrString(cluster.caFile, cluster.caData) : null;
    if (ca) opts.ca = ca;
    const user = this.getCurrentUser();
    if (!user) return null;
    const cert = bufferFromFileOrString(user.certFile, user.certData);
    if (cert) opts.cert = cert;
    const key = bufferFromFileOrString(user.keyFile, user.keyData);
    if (key) opts.key = key;
    return user;
  }

  /** The user's headers: impersonation, then its authenticator's (exec plugin, token file, provider), then a token. */
  private async authenticate(user: User | null, opts: HttpsRequestOptions): Promise<void> {
    if (!user) return;
    opts.headers ??= {};
    if (user.impersonateUser != null) opts.headers['Impersonate-User'] = user.impersonateUser;
    const authenticator = this.authenticators.find((a) => a.isAuthProvider(user)) ?? (await this.authProviders()).find((a) => a.isAuthProvider(user));
    if (authenticator) await authenticator.applyAuthentication(user, opts);
    if (user.token) opts.headers['Authorization'] = `Bearer ${user.token}`;
  }

  /** client-node's `azure`, `gcp` and `oidc` auth providers, loaded only for a user that names one. */
  private authProviders(): Promise<Authenticator[]> {
    const name = (this.getCurrentUser()?.authProvider as { name?: string } | undefined)?.name;
    if (name !== 'azure' && name !== 'gcp' && name !== 'oidc') return Promise.resolve([]);
    return (this.providers ??= Promise.all([
      import('@kubernetes/client-node/dist/azure_auth.js').then((m) => new m.AzureAuth() as Authenticator),
      import('@kubernetes/client-node/dist/gcp_auth.js').then((m) => new m.GoogleCloudPlatformAuth() as Authenticator),
      import('@kubernetes/client-node/dist/oidc_auth.js').then((m) => new m.OpenIDConnectAuth() as Authenticator),
    ]));
  }

  /** client-node's createAgent: a proxy agent for proxy-url (its libraries loaded only then), http or https otherwise. */
  private async agentFor(cluster: Cluster | null, agentOptions: AgentOptions): Promise<HttpAgent | HttpsAgent> {
    if (cluster?.proxyUrl) {
      if (cluster.proxyUrl.startsWith('socks')) {
        const { SocksProxyAgent } = await import('socks-proxy-agent');
        return new SocksProxyAgent(cluster.proxyUrl, agentOptions);
      }
      const { HttpProxyAgent, HttpsProxyAgent } = await import('hpagent');
      if (cluster.server.startsWith('https')) return new HttpsProxyAgent({ ...agentOptions, proxy: cluster.proxyUrl });
      if (cluster.server.startsWith('http')) return new HttpProxyAgent({ ...agentOptions, proxy: cluster.proxyUrl });
      throw new Error('Unsupported proxy type');
    }
    if (cluster?.server.startsWith('http:')) {
      if (!cluster.skipTLSVerify) throw new Error('HTTP protocol is not allowed when skipTLSVerify is not set or false');
      return new http.Agent(agentOptions);
    }
    return new HttpsAgent(agentOptions);
  }
}
