/**
 * The agent's Kubernetes API client: the calls the agent makes, under client-node's names and with its parameter
 * objects and per-call options (setHeaderOptions), over node:http(s). client-node's generated clients are not used at
 * runtime: importing any of them loads every model and API of the library through its ObjectSerializer (about 50 MiB
 * of the agent's resident memory), and node-fetch with them. Objects are sent as JSON and returned as the API server's
 * JSON, not as client-node's model classes (timestamps stay strings, as in watch events: the agent reads both).
 * Errors are client-node's too: a non-2xx answer throws an {@link ApiException} with `code`, the Status as `body` and
 * the response headers (kube-errors.ts reads them).
 */
import type { Agent, ClientRequest, IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type * as k8s from '@kubernetes/client-node';
import type { KubeAccess } from './kube-config.js';
import type { Http2Answer } from './http2-connection.js';
import { http2ConnectionOf } from './keep-alive.js';
import { http } from './node-http.js';

/** A request being built: client-node's RequestContext methods that its KubeConfig and the agent's wrappers call. */
export class RequestContext {
  private readonly url: URL;
  private readonly headers: Record<string, string> = {};
  private body: string | undefined;
  private agent: Agent | undefined;
  private signal: AbortSignal | undefined;
  private gate: (() => Error | undefined) | undefined;
  private answerRead = true;

  constructor(
    url: string,
    private readonly httpMethod: string,
  ) {
    this.url = new URL(url);
  }

  getUrl(): string {
    return this.url.toString();
  }
  setQueryParam(name: string, value: string): void {
    this.url.searchParams.set(name, value);
  }
  getHttpMethod(): string {
    return this.httpMethod;
  }
  getHeaders(): Record<string, string> {
    return this.headers;
  }
  setHeaderParam(key: string, value: string): void {
    this.headers[key] = value;
  }
  getBody(): string | undefined {
    return this.body;
  }
  setBody(body: string | undefined): void {
    this.body = body;
  }
  getAgent(): Agent | undefined {
    return this.agent;
  }
  setAgent(agent: Agent): void {
    this.agent = agent;
  }
  getSignal(): AbortSignal | undefined {
    return this.signal;
  }
  setSignal(signal: AbortSignal): void {
    this.signal = signal;
  }
  /** Asked when the request's connection is ready, right before it goes out: an error fails it unsent. */
  getGate(): (() => Error | undefined) | undefined {
    return this.gate;
  }
  setGate(gate: () => Error | undefined): void {
    this.gate = gate;
  }
  /** False when the caller does not read a successful answer ({@link answerUnread}): its body is drained, not kept. */
  isAnswerRead(): boolean {
    return this.answerRead;
  }
  setAnswerUnread(): void {
    this.answerRead = false;
  }
}

/** An answer: status, headers (lower-case names), body text ('' for a successful answer nobody reads). */
export interface ResponseContext {
  readonly httpStatusCode: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** Sends requests (the agent's transport wraps this: timeouts, the leadership fence, User-Agent). */
export interface HttpLibrary {
  send(request: RequestContext): Promise<ResponseContext>;
}

/**
 * What authentication and the agent's wrappers (request counting, kept-alive connections) see of a request: methods
 * both {@link RequestContext} and client-node's have.
 */
export interface AuthContext {
  getUrl(): string;
  getHttpMethod(): string;
  setHeaderParam(key: string, value: string): void;
  getAgent(): Agent | undefined;
  setAgent(agent: Agent): void;
}

/** Authenticates a request: a KubeConfig (this module's or client-node's). */
export interface AuthMethod {
  applySecurityAuthentication(context: AuthContext): Promise<void>;
}

/** client-node's ApiException: a non-2xx answer; `body` is the Status (parsed) or the text. */
export class ApiException<T = unknown> extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly body: T,
    readonly headers: Record<string, string>,
  ) {
    super(`HTTP-Code: ${code}\nMessage: ${message}\nBody: ${JSON.stringify(body)}\nHeaders: ${JSON.stringify(headers)}`);
    this.name = 'ApiException';
  }
}

function flatHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/**
 * Sends `req` with `body` and reads the whole answer. On Node.js 22 an https connection keeps its first request
 * reachable for as long as it is open (https.Agent's session listener closes over it), and with it the request's
 * listeners and response: so these hold nothing once the answer is in, or a large first answer (a LIST at start)
 * would stay in memory with its connection.
 */
function exchange(req: ClientRequest, body: string | undefined, answerRead: boolean): Promise<ResponseContext> {
  return new Promise<ResponseContext>((resolve, reject) => {
    let pending: { resolve: (answer: ResponseContext) => void; reject: (error: Error) => void } | undefined = { resolve, reject };
    let chunks: Buffer[] = [];
    const settled = () => {
      const settle = pending;
      pending = undefined;
      chunks = [];
      return settle;
    };
    const fail = (error: Error) => settled()?.reject(error);
    req.on('response', (res: IncomingMessage) => {
      const keep = keepsBody(res.statusCode ?? 0, answerRead);
      res.on('data', (chunk: Buffer) => {
        if (keep) chunks.push(chunk);
      });
      res.on('error', fail);
      res.on('aborted', () => fail(Object.assign(new Error('the response was aborted'), { code: 'ECONNRESET' })));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        settled()?.resolve({ httpStatusCode: res.statusCode ?? 0, headers: flatHeaders(res.headers), body: text });
      });
    });
    req.on('error', fail);
    req.end(body);
  });
}

/** Reads the whole answer of an HTTP/2 request. */
function readAnswer({ status, headers, stream }: Http2Answer, answerRead: boolean): Promise<ResponseContext> {
  return new Promise<ResponseContext>((resolve, reject) => {
    const chunks: Buffer[] = [];
    const keep = keepsBody(status, answerRead);
    stream.on('data', (chunk: Buffer) => {
      if (keep) chunks.push(chunk);
    });
    stream.once('error', reject);
    stream.once('end', () => resolve({ httpStatusCode: status, headers, body: Buffer.concat(chunks).toString('utf8') }));
    stream.once('close', () => reject(Object.assign(new Error(`the answer was cut off (stream code ${stream.rstCode ?? 0})`), { code: 'ECONNRESET' })));
  });
}

/** A 2xx status: the call succeeded (else it throws an ApiException). */
const succeeded = (status: number): boolean => status >= 200 && status <= 299;

/** Whether an answer's body is kept: always for an error, whose Status the ApiException carries. */
const keepsBody = (status: number, answerRead: boolean): boolean => answerRead || !succeeded(status);

/**
 * The request's agent's HTTP/2 connection (keep-alive.ts) when it has one and the server speaks HTTP/2, else
 * node:http(s) with the agent; headers, body, signal and gate either way; the whole body is read.
 */
export const nodeHttpLibrary: HttpLibrary = {
  // async: a request node:http refuses at once (a bad header, a bad certificate) is a rejection, as a failed send is.
  async send(context: RequestContext): Promise<ResponseContext> {
    const url = new URL(context.getUrl());
    const body = context.getBody();
    const headers: Record<string, string | number> = { ...context.getHeaders() };
    if (body !== undefined) headers['Content-Length'] = Buffer.byteLength(body);
    const agent = context.getAgent();
    const signal = context.getSignal();
    const method = context.getHttpMethod();
    const answer = await http2ConnectionOf(agent, url)?.request(url.pathname + url.search, { method, headers, body, signal, gate: context.getGate() });
    if (answer) return readAnswer(answer, context.isAnswerRead());
    const send = url.protocol === 'http:' ? http.request : httpsRequest;
    const req = send(url, { method, headers, ...(agent && { agent }), ...(signal && { signal }) });
    return exchange(req, body, context.isAnswerRead());
  },
};

/** client-node's Observable as its middleware returns it (only what is awaited here). */
interface Thenable<T> {
  toPromise(): Promise<T>;
}
/** Marks per-call options whose call's answer is not read ({@link answerUnread}). */
const ANSWER_UNREAD = Symbol('answerUnread');

/** client-node's per-call options (the agent passes only setHeaderOptions' middleware), and {@link answerUnread}'s mark. */
interface CallOptions {
  readonly middleware?: readonly { pre?(context: RequestContext): Thenable<RequestContext> }[];
  readonly [ANSWER_UNREAD]?: true;
}

/**
 * `options` (client-node's per-call options, e.g. setHeaderOptions') for a write whose answer the caller never reads: a
 * successful answer's body is drained without being decoded or parsed, and the call resolves to undefined whatever
 * its type says; an error answer is read as always (an ApiException with the Status). Nearly half the agent's writes
 * in a rollout are to pods and Events, whose answers (the whole object) it never looks at; decoding and parsing answers
 * was a sixth of what outlived the young generation at 200 rollouts at once (a sampling heap profile).
 */
export function answerUnread<T extends object>(options?: T): T {
  return { ...options, [ANSWER_UNREAD]: true } as T;
}

/** Where and how an API client sends: the server, the authentication, the transport. */
export class ApiConfiguration {
  constructor(
    readonly server: string,
    readonly auth: AuthMethod,
    readonly httpApi: HttpLibrary = nodeHttpLibrary,
  ) {}

  /**
   * This configuration, or one read from client-node's Configuration (a client built by client-node's
   * KubeConfig.makeApiClient, as the agent's tests do): its server and authentication, sent over node:http(s).
   */
  static of(config: ApiConfiguration | k8s.Configuration): ApiConfiguration {
    if (config instanceof ApiConfiguration) return config;
    const server = config.baseServer.makeRequestContext('', 'GET' as k8s.HttpMethod).getUrl();
    const auth = config.authMethods.default as unknown as AuthMethod | undefined;
    if (!auth) throw new Error('the configuration has no authentication');
    return new ApiConfiguration(server, auth);
  }
}

/** Where a KubeConfig wrapped by {@link withHttpLibrary} keeps its transport. */
const HTTP_LIBRARY = Symbol('httpLibrary');

/** `kc` (by prototype: everything else is inherited) whose API clients send through `httpApi`. */
export function withHttpLibrary<K extends KubeAccess>(kc: K, httpApi: HttpLibrary): K {
  const wrapped = Object.create(kc) as K & { [HTTP_LIBRARY]?: HttpLibrary };
  wrapped[HTTP_LIBRARY] = httpApi;
  return wrapped;
}

/**
 * An API client of `apiClientType` for the current cluster of `kc`, authenticated by `kc` (the outermost wrapper, so
 * request counting and kept-alive connections apply) and sent through its transport ({@link withHttpLibrary}), else
 * node:http(s). client-node's KubeConfig.makeApiClient, for this module's clients and any KubeAccess.
 */
export function makeApiClient<T>(kc: KubeAccess, apiClientType: new (config: ApiConfiguration) => T): T {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('No active cluster!');
  const httpApi = (kc as { [HTTP_LIBRARY]?: HttpLibrary })[HTTP_LIBRARY] ?? nodeHttpLibrary;
  return new apiClientType(new ApiConfiguration(cluster.server, kc, httpApi));
}

type Params = Record<string, unknown>;
/** One call: HTTP method, path template ({name} from the parameters), and whether the parameters carry a body. */
type Route = readonly [method: string, path: string, body?: 'body'];

const enc = encodeURIComponent;
/** A path or query parameter as text: strings, numbers and booleans as they are (client-node's serialization). */
const text = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : JSON.stringify(v));

/** Sends one call the way client-node's generated clients do; the parsed JSON answer, or an ApiException. */
export async function call(config: ApiConfiguration, [method, template]: Route, params: Params, options?: CallOptions): Promise<unknown> {
  const used = new Set<string>(['body']);
  const path = template.replace(/\{(\w+)\}/g, (_, key: string) => {
    used.add(key);
    const value = params[key];
    if (value === undefined || value === null) throw new Error(`Required parameter ${key} was null or undefined when calling ${template}.`);
    return enc(text(value));
  });
  let context = new RequestContext(config.server.replace(/\/+$/, '') + path, method);
  for (const [key, value] of Object.entries(params)) if (!used.has(key) && value !== undefined) context.setQueryParam(key, text(value));
  context.setHeaderParam('Accept', 'application/json');
  if (options?.[ANSWER_UNREAD]) context.setAnswerUnread();
  if (params['body'] !== undefined) {
    // client-node's default for a patch is JSON patch; setHeaderOptions picks another.
    context.setHeaderParam('Content-Type', method === 'PATCH' ? 'application/json-patch+json' : 'application/json');
    context.setBody(JSON.stringify(params['body']));
  }
  for (const m of options?.middleware ?? []) if (m.pre) context = await m.pre(context).toPromise();
  await config.auth.applySecurityAuthentication(context);
  const response = await config.httpApi.send(context);
  const parsed = parse(response);
  if (succeeded(response.httpStatusCode)) return parsed;
  throw new ApiException(response.httpStatusCode, statusMessage(response.httpStatusCode), parsed, response.headers);
}

function parse(response: ResponseContext): unknown {
  if (response.body === '') return undefined;
  try {
    return JSON.parse(response.body) as unknown;
  } catch {
    return response.body;
  }
}

/** client-node's messages for the answers its generated clients name; others are "Unknown API Status Code!". */
function statusMessage(code: number): string {
  return code === 401 ? 'Unauthorized' : 'Unknown API Status Code!';
}

/**
 * A client class whose methods are `routes`, typed as client-node's class `T` has them (a Pick of it: an instance of
 * client-node's class fits where this one is expected).
 */
function apiClient<T, K extends keyof T & string>(routes: Record<K, Route>): new (config: ApiConfiguration | k8s.Configuration) => Pick<T, K> {
  class Client {
    readonly config: ApiConfiguration;
    constructor(config: ApiConfiguration | k8s.Configuration) {
      this.config = ApiConfiguration.of(config);
    }
  }
  for (const [name, route] of Object.entries<Route>(routes)) {
    Object.defineProperty(Client.prototype, name, {
      value(this: Client, params: Params = {}, options?: CallOptions) {
        return call(this.config, route, params, options);
      },
    });
  }
  return Client as unknown as new (config: ApiConfiguration | k8s.Configuration) => Pick<T, K>;
}

const POD = '/api/v1/namespaces/{namespace}/pods/{name}';
const APPS = '/apis/apps/v1';
const NS_APPS = `${APPS}/namespaces/{namespace}`;
const CUSTOM = '/apis/{group}/{version}';

export const CoreV1Api = apiClient<
  k8s.CoreV1Api,
  | 'listNode'
  | 'listPodForAllNamespaces'
  | 'listNamespacedPod'
  | 'readNamespacedPod'
  | 'createNamespacedPod'
  | 'patchNamespacedPod'
  | 'patchNamespacedPodStatus'
  | 'deleteNamespacedPod'
  | 'createNamespacedPodEviction'
  | 'createNamespacedEvent'
  | 'patchNamespacedEvent'
  | 'listServiceForAllNamespaces'
  | 'listNamespacedService'
  | 'patchNamespacedService'
  | 'deleteNamespacedService'
>({
  listNode: ['GET', '/api/v1/nodes'],
  listPodForAllNamespaces: ['GET', '/api/v1/pods'],
  listNamespacedPod: ['GET', '/api/v1/namespaces/{namespace}/pods'],
  readNamespacedPod: ['GET', POD],
  createNamespacedPod: ['POST', '/api/v1/namespaces/{namespace}/pods'],
  patchNamespacedPod: ['PATCH', POD],
  patchNamespacedPodStatus: ['PATCH', `${POD}/status`],
  deleteNamespacedPod: ['DELETE', POD],
  createNamespacedPodEviction: ['POST', `${POD}/eviction`],
  createNamespacedEvent: ['POST', '/api/v1/namespaces/{namespace}/events'],
  patchNamespacedEvent: ['PATCH', '/api/v1/namespaces/{namespace}/events/{name}'],
  listServiceForAllNamespaces: ['GET', '/api/v1/services'],
  listNamespacedService: ['GET', '/api/v1/namespaces/{namespace}/services'],
  patchNamespacedService: ['PATCH', '/api/v1/namespaces/{namespace}/services/{name}'],
  deleteNamespacedService: ['DELETE', '/api/v1/namespaces/{namespace}/services/{name}'],
});
export type CoreV1Api = InstanceType<typeof CoreV1Api>;

export const AppsV1Api = apiClient<
  k8s.AppsV1Api,
  | 'listDeploymentForAllNamespaces'
  | 'listNamespacedDeployment'
  | 'patchNamespacedDeployment'
  | 'patchNamespacedDeploymentScale'
  | 'listReplicaSetForAllNamespaces'
  | 'listNamespacedReplicaSet'
  | 'createNamespacedReplicaSet'
  | 'patchNamespacedReplicaSet'
  | 'patchNamespacedReplicaSetScale'
  | 'deleteNamespacedReplicaSet'
  | 'listStatefulSetForAllNamespaces'
  | 'listNamespacedStatefulSet'
  | 'patchNamespacedStatefulSet'
  | 'listControllerRevisionForAllNamespaces'
  | 'listNamespacedControllerRevision'
  | 'createNamespacedControllerRevision'
  | 'replaceNamespacedControllerRevision'
  | 'deleteNamespacedControllerRevision'
>({
  listDeploymentForAllNamespaces: ['GET', `${APPS}/deployments`],
  listNamespacedDeployment: ['GET', `${NS_APPS}/deployments`],
  patchNamespacedDeployment: ['PATCH', `${NS_APPS}/deployments/{name}`],
  patchNamespacedDeploymentScale: ['PATCH', `${NS_APPS}/deployments/{name}/scale`],
  listReplicaSetForAllNamespaces: ['GET', `${APPS}/replicasets`],
  listNamespacedReplicaSet: ['GET', `${NS_APPS}/replicasets`],
  createNamespacedReplicaSet: ['POST', `${NS_APPS}/replicasets`],
  patchNamespacedReplicaSet: ['PATCH', `${NS_APPS}/replicasets/{name}`],
  patchNamespacedReplicaSetScale: ['PATCH', `${NS_APPS}/replicasets/{name}/scale`],
  deleteNamespacedReplicaSet: ['DELETE', `${NS_APPS}/replicasets/{name}`],
  listStatefulSetForAllNamespaces: ['GET', `${APPS}/statefulsets`],
  listNamespacedStatefulSet: ['GET', `${NS_APPS}/statefulsets`],
  patchNamespacedStatefulSet: ['PATCH', `${NS_APPS}/statefulsets/{name}`],
  listControllerRevisionForAllNamespaces: ['GET', `${APPS}/controllerrevisions`],
  listNamespacedControllerRevision: ['GET', `${NS_APPS}/controllerrevisions`],
  createNamespacedControllerRevision: ['POST', `${NS_APPS}/controllerrevisions`],
  replaceNamespacedControllerRevision: ['PUT', `${NS_APPS}/controllerrevisions/{name}`],
  deleteNamespacedControllerRevision: ['DELETE', `${NS_APPS}/controllerrevisions/{name}`],
});
export type AppsV1Api = InstanceType<typeof AppsV1Api>;

export const CustomObjectsApi = apiClient<
  k8s.CustomObjectsApi,
  | 'listClusterCustomObject'
  | 'listCustomObjectForAllNamespaces'
  | 'listNamespacedCustomObject'
  | 'getNamespacedCustomObject'
  | 'patchNamespacedCustomObject'
  | 'deleteNamespacedCustomObject'
  | 'patchNamespacedCustomObjectScale'
  | 'replaceNamespacedCustomObjectStatus'
  | 'replaceClusterCustomObjectStatus'
>({
  listClusterCustomObject: ['GET', `${CUSTOM}/{plural}`],
  listCustomObjectForAllNamespaces: ['GET', `${CUSTOM}/{plural}`],
  listNamespacedCustomObject: ['GET', `${CUSTOM}/namespaces/{namespace}/{plural}`],
  getNamespacedCustomObject: ['GET', `${CUSTOM}/namespaces/{namespace}/{plural}/{name}`],
  patchNamespacedCustomObject: ['PATCH', `${CUSTOM}/namespaces/{namespace}/{plural}/{name}`],
  deleteNamespacedCustomObject: ['DELETE', `${CUSTOM}/namespaces/{namespace}/{plural}/{name}`],
  patchNamespacedCustomObjectScale: ['PATCH', `${CUSTOM}/namespaces/{namespace}/{plural}/{name}/scale`],
  replaceNamespacedCustomObjectStatus: ['PUT', `${CUSTOM}/namespaces/{namespace}/{plural}/{name}/status`],
  replaceClusterCustomObjectStatus: ['PUT', `${CUSTOM}/{plural}/{name}/status`],
});
export type CustomObjectsApi = InstanceType<typeof CustomObjectsApi>;

/**
 * Discovery of one API group version (`GET /apis/{group}/{version}`): which resources the API server serves there.
 * client-node has it only per built-in group (e.g. NetworkingV1Api.getAPIResources); the agent asks about a group of
 * CRDs (the Gateway API's). The system:discovery ClusterRole grants it to every authenticated user.
 */
export class GroupDiscoveryApi {
  readonly config: ApiConfiguration;
  constructor(config: ApiConfiguration | k8s.Configuration) {
    this.config = ApiConfiguration.of(config);
  }

  /** The group version's APIResourceList; a group version that is not served answers 404 (an ApiException). */
  getAPIResources(params: { group: string; version: string }, options?: CallOptions): Promise<k8s.V1APIResourceList> {
    return call(this.config, ['GET', CUSTOM], params, options) as Promise<k8s.V1APIResourceList>;
  }
}

export const CoordinationV1Api = apiClient<k8s.CoordinationV1Api, 'readNamespacedLease' | 'createNamespacedLease' | 'replaceNamespacedLease'>({
  readNamespacedLease: ['GET', '/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}'],
  createNamespacedLease: ['POST', '/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases'],
  replaceNamespacedLease: ['PUT', '/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}'],
});
export type CoordinationV1Api = InstanceType<typeof CoordinationV1Api>;

export const AuthenticationV1Api = apiClient<k8s.AuthenticationV1Api, 'createTokenReview'>({
  createTokenReview: ['POST', '/apis/authentication.k8s.io/v1/tokenreviews'],
});
export type AuthenticationV1Api = InstanceType<typeof AuthenticationV1Api>;

export const AuthorizationV1Api = apiClient<k8s.AuthorizationV1Api, 'createSubjectAccessReview'>({
  createSubjectAccessReview: ['POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews'],
});
export type AuthorizationV1Api = InstanceType<typeof AuthorizationV1Api>;
