// Shared helpers for the end-to-end suites: clients for the lab cluster, per-test namespaces, waiting.
import { randomBytes } from 'node:crypto';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import {
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
  type KubernetesObject,
  type V1Node,
  type V1Pod,
} from '@kubernetes/client-node';
import { test as base } from 'vitest';
import { kubeconfigPath } from '../cluster/lab.js';

export const FIELD_MANAGER = 'extendeddeployment-e2e';

/** KubernetesObjectApi with its discovery lookup made public (is a kind served? namespaced?). */
export class ObjectApi extends KubernetesObjectApi {
  resourceFor(apiVersion: string, kind: string) {
    return this.resource(apiVersion, kind);
  }
  useNamespaceOf(kc: KubeConfig): void {
    this.setDefaultNamespace(kc);
  }
}

let cached: { kc: KubeConfig; core: CoreV1Api; apps: AppsV1Api; coord: CoordinationV1Api; objects: ObjectApi } | undefined;

export function clients() {
  if (!cached) {
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfigPath());
    cached = {
      kc,
      core: kc.makeApiClient(CoreV1Api),
      apps: kc.makeApiClient(AppsV1Api),
      coord: kc.makeApiClient(CoordinationV1Api),
      objects: makeObjectApi(kc),
    };
  }
  return cached;
}

function makeObjectApi(kc: KubeConfig): ObjectApi {
  const api = kc.makeApiClient(ObjectApi);
  api.useNamespaceOf(kc);
  return api;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Time kept back from a test's own timeout so that a wait cut short still reports what it waited for. */
const REPORT_MARGIN_MS = 20_000;
/** When the running test (one with the `ns` fixture) must have ended its waits; see waitFor. */
let testDeadline = Number.POSITIVE_INFINITY;

const NO_ANSWER = Symbol('no answer');
/** How long a wait that timed out gives `describe` to say what it saw. */
const DESCRIBE_MS = 10_000;
/** How long past its deadline a check still running may take to answer. REPORT_MARGIN_MS holds it and DESCRIBE_MS. */
const CHECK_GRACE_MS = 5_000;

/** `promise`'s value, or NO_ANSWER once `deadline` (epoch ms) has passed without one. */
async function beforeDeadline<T>(promise: Promise<T>, deadline: number): Promise<T | typeof NO_ANSWER> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<typeof NO_ANSWER>((resolve) => (timer = setTimeout(() => resolve(NO_ANSWER), Math.max(0, deadline - Date.now()) + 1)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Polls `check` until it returns a value other than undefined/false, or fails after `timeoutMs` with the last
 * observation (what `describe` returns) in the message. Timeouts are generous on purpose: the assertions are about
 * behaviour, never about speed. A wait also ends shortly before the test's own timeout would, so a test that runs out
 * of time fails with the step it was waiting for and what it saw, not with vitest's bare "Test timed out".
 */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  { timeoutMs = 60_000, intervalMs = 250, describe }: { timeoutMs?: number; intervalMs?: number; describe?: () => Promise<unknown> } = {},
): Promise<T> {
  const started = Date.now();
  const deadline = Math.min(started + timeoutMs, testDeadline);
  let lastError: unknown;
  for (;;) {
    try {
      // A check that hangs (a request to an API server that never answers) ends too, shortly after the deadline (a
      // check the deadline merely falls into finishes).
      const v = await beforeDeadline(check(), deadline + CHECK_GRACE_MS);
      if (v === NO_ANSWER) lastError = new Error(`the last check had not answered ${CHECK_GRACE_MS / 1000} s after the deadline`);
      else if (v !== undefined && v !== false) return v;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() > deadline) {
      let observed = '';
      if (describe) {
        try {
          const seen = await beforeDeadline(describe(), Date.now() + DESCRIBE_MS);
          observed = `\nlast observed: ${seen === NO_ANSWER ? '(no answer)' : JSON.stringify(seen, null, 1).slice(0, 3000)}`;
        } catch {
          /* ignore */
        }
      }
      const err = lastError ? `\nlast error: ${errorMessage(lastError)}` : '';
      const cut = deadline < started + timeoutMs ? ` (cut short from ${timeoutMs / 1000} s: the test's own time ran out)` : '';
      throw new Error(`timed out after ${((Date.now() - started) / 1000).toFixed(1)} s${cut} waiting for ${what}${err}${observed}`);
    }
    await sleep(intervalMs);
  }
}

/** Waits for `promise` as waitFor waits for a condition: bounded, and reporting `what` (and `describe`) when it is not settled in time. */
export async function waitForSettled<T>(
  what: string,
  promise: Promise<T>,
  options: { timeoutMs?: number; describe?: () => Promise<unknown> } = {},
): Promise<T> {
  let outcome: { value: T } | { error: unknown } | undefined;
  promise.then(
    (value) => (outcome = { value }),
    (error: unknown) => (outcome = { error }),
  );
  const settled = await waitFor(what, async () => outcome, options);
  if ('error' in settled) throw settled.error;
  return settled.value;
}

/** Message of an API error (client-node 1.x ApiException carries the Status JSON in `body`). */
export function errorMessage(e: unknown): string {
  const anyE = e as { code?: number; body?: unknown; message?: string };
  if (anyE && typeof anyE.body === 'string') {
    try {
      const status = JSON.parse(anyE.body) as { message?: string };
      if (status.message) return status.message;
    } catch {
      return anyE.body;
    }
  }
  return anyE?.message ?? String(e);
}

export function errorCode(e: unknown): number | undefined {
  return (e as { code?: number })?.code;
}

export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(3).toString('hex')}`.slice(0, 63);
}

/**
 * Creates a namespace and waits for its `default` ServiceAccount (ServiceAccount admission needs it for pods); in the
 * lab, or in the cluster `core` talks to (a fleet member's).
 */
export async function createNamespace(prefix = 'e2e', core: CoreV1Api = clients().core): Promise<string> {
  const name = uniqueName(prefix.startsWith('e2e') ? prefix : `e2e-${prefix}`);
  await core.createNamespace({ body: { metadata: { name, labels: { 'extendeddeployment.io/e2e': 'true' } } } });
  await waitFor(`ServiceAccount ${name}/default`, async () => {
    await core.readNamespacedServiceAccount({ name: 'default', namespace: name });
    return true;
  });
  return name;
}

export async function deleteNamespace(name: string): Promise<void> {
  try {
    await clients().core.deleteNamespace({ name });
  } catch (e) {
    if (errorCode(e) !== 404) throw e;
  }
}

/** vitest `test` with a fresh namespace per test (`{ ns }`), deleted afterwards. */
export const test = base.extend<{ ns: string }>({
  ns: async ({ task }, use) => {
    testDeadline = Date.now() + task.timeout - REPORT_MARGIN_MS;
    const ns = await createNamespace();
    try {
      await use(ns);
    } finally {
      testDeadline = Number.POSITIVE_INFINITY;
      await deleteNamespace(ns);
    }
  },
});

/** An API error shaped like client-node's ApiException (`code`, `body` = the Status JSON text). */
export class RawApiError extends Error {
  constructor(
    readonly code: number,
    readonly body: string,
  ) {
    super(`HTTP ${code}: ${body.slice(0, 1000)}`);
  }
}

/** One raw request to the API server with the kubeconfig's credentials; the body is sent as JSON text unchanged. */
export async function rawRequest(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<unknown> {
  const { kc } = clients();
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new Error('kubeconfig has no current cluster');
  const opts: RequestOptions = { method, headers: {} };
  await kc.applyToHTTPSOptions(opts);
  const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  if (data) opts.headers = { ...(opts.headers as object), 'content-type': contentType, 'content-length': data.length };
  return new Promise((resolve, reject) => {
    const req = httpsRequest(new URL(path, server), opts, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        const code = res.statusCode ?? 0;
        if (code < 200 || code >= 300) reject(new RawApiError(code, text));
        else resolve(text ? JSON.parse(text) : undefined);
      });
    });
    req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${path}: timeout`)));
    req.on('error', reject);
    if (data) req.write(data);
    req.end();
  });
}

/** REST path of an object, from discovery (throws when the API server does not serve its kind). */
export async function objectPath(obj: KubernetesObject): Promise<string> {
  const r = await clients().objects.resourceFor(obj.apiVersion!, obj.kind!);
  if (!r) throw new Error(`${obj.apiVersion}/${obj.kind} is not served by the API server`);
  const base = obj.apiVersion!.includes('/') ? `/apis/${obj.apiVersion}` : `/api/${obj.apiVersion}`;
  const ns = r.namespaced ? `/namespaces/${obj.metadata?.namespace ?? 'default'}` : '';
  return `${base}${ns}/${r.name}/${obj.metadata!.name}`;
}

/**
 * Server-side apply of any object, with our field manager and force (conflicts are taken over). The object is sent
 * as-is: client-node's typed serializer would drop keys it does not know under their wire names
 * (e.g. `x-kubernetes-int-or-string` inside a CRD schema).
 */
export async function serverSideApply<T extends KubernetesObject>(obj: T): Promise<T> {
  const path = await objectPath(obj);
  return rawRequest('PATCH', `${path}?fieldManager=${encodeURIComponent(FIELD_MANAGER)}&force=true`, obj, 'application/apply-patch+yaml') as Promise<T>;
}

/** JSON merge patch of a pod's status subresource (what a controller does for readiness-gate conditions). */
export async function patchPodStatus(namespace: string, name: string, patch: object): Promise<V1Pod> {
  return clients().core.patchNamespacedPodStatus({ name, namespace, body: patch }, setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch));
}

export async function patchPod(namespace: string, name: string, patch: object): Promise<V1Pod> {
  return clients().core.patchNamespacedPod({ name, namespace, body: patch }, setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch));
}

export function condition(obj: { status?: { conditions?: { type: string; status: string; reason?: string }[] } }, type: string) {
  return obj.status?.conditions?.find((c) => c.type === type);
}

export function nodeReady(node: V1Node): string {
  return condition(node, 'Ready')?.status ?? 'Unknown';
}

export function podReady(pod: V1Pod): boolean {
  return condition(pod, 'Ready')?.status === 'True';
}

export async function readPod(namespace: string, name: string): Promise<V1Pod> {
  return clients().core.readNamespacedPod({ name, namespace });
}

/** A minimal pod spec for tests. */
export function testPod(name: string, extra: Partial<V1Pod['spec']> = {}, labels: Record<string, string> = {}): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: name, ...labels } },
    spec: {
      containers: [{ name: 'app', image: 'registry.example/app:1', resources: { requests: { cpu: '100m', memory: '64Mi' } } }],
      terminationGracePeriodSeconds: 0,
      ...extra,
    },
  };
}
