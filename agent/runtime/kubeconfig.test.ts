import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { CoreV1Api } from './kube-client.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { contextNamespace, KubeConfigError, loadKubeConfig, serverOf } from './kubeconfig.js';

/** A kubeconfig with one context per entry: `[context, cluster, server]`; the first is current unless `current` says otherwise. */
function kubeconfig(entries: readonly (readonly [string, string, string])[], current: string | null = entries[0]?.[0] ?? null): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: entries.map(([, cluster, server]) => ({ name: cluster, cluster: { server } })),
    users: [{ name: 'u', user: { token: 't' } }],
    contexts: entries.map(([context, cluster]) => ({ name: context, context: { cluster, user: 'u', namespace: `${context}-ns` } })),
    ...(current !== null && { 'current-context': current }),
  });
}

let dir = '';
const file = (name: string, text: string) => {
  const path = join(dir, name);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  return path;
};

beforeEach(() => {
  // No kubeconfig anywhere and not in a cluster, until a test says otherwise.
  dir = mkdtempSync(join(tmpdir(), 'kubeconfig-'));
  vi.stubEnv('HOME', join(dir, 'home'));
  vi.stubEnv('KUBECONFIG', '');
  vi.stubEnv('KUBERNETES_SERVICE_HOST', '');
  vi.stubEnv('KUBERNETES_SERVICE_PORT', '');
});
afterEach(() => vi.unstubAllEnvs());

/** A pod's service-account files under `dir` and the service's address in the environment. */
function inPod(): string {
  file('var/run/secrets/kubernetes.io/serviceaccount/token', 'sa-token');
  file('var/run/secrets/kubernetes.io/serviceaccount/namespace', 'pod-ns');
  vi.stubEnv('KUBERNETES_SERVICE_HOST', '10.96.0.1');
  vi.stubEnv('KUBERNETES_SERVICE_PORT', '443');
  return dir;
}

describe('loadKubeConfig without any configuration', () => {
  it.each([
    ['nothing at all', () => undefined, 'no --kubeconfig, $KUBECONFIG or ~/.kube/config'],
    ['an empty ~/.kube/config', () => void file('home/.kube/config', '\n'), 'no --kubeconfig, $KUBECONFIG or ~/.kube/config'],
    [
      '$KUBECONFIG naming files that do not exist',
      () => vi.stubEnv('KUBECONFIG', ['/nope/a', '/nope/b'].join(delimiter)),
      `$KUBECONFIG (/nope/a${delimiter}/nope/b) names no file that exists`,
    ],
  ])("%s fails as client-go does, in one line (never client-node's http://localhost:8080)", (_, given, why) => {
    given();
    for (const preferInCluster of [false, true]) {
      expect(() => loadKubeConfig({ preferInCluster, root: dir })).toThrow(
        new KubeConfigError(`invalid configuration: no configuration has been provided (${why}, and not running in a cluster)`),
      );
    }
  });

  it('names a missing --kubeconfig file', () => {
    expect(() => loadKubeConfig({ kubeconfig: join(dir, 'missing') })).toThrow(`kubeconfig ${join(dir, 'missing')}: no such file`);
  });
});

describe('loadKubeConfig', () => {
  it('merges the files of $KUBECONFIG as kubectl does: the first current-context and the first of each name win, missing files are skipped', () => {
    const a = file('a', kubeconfig([['ctx-a', 'shared', 'https://a.example']]));
    const b = file(
      'b',
      kubeconfig([
        ['ctx-b', 'shared', 'https://b.example'],
        ['ctx-c', 'own', 'https://c.example'],
      ]),
    );
    vi.stubEnv('KUBECONFIG', [a, join(dir, 'missing'), b].join(delimiter));
    const kc = loadKubeConfig();
    expect([kc.getCurrentContext(), serverOf(kc), contextNamespace(kc)]).toEqual(['ctx-a', 'https://a.example', 'ctx-a-ns']);
    const c = loadKubeConfig({ context: 'ctx-c' });
    expect([serverOf(c), contextNamespace(c)]).toEqual(['https://c.example', 'ctx-c-ns']);
    // The current context comes from the first file that sets one.
    vi.stubEnv('KUBECONFIG', [file('none', kubeconfig([['ctx-n', 'n', 'https://n.example']], null)), b].join(delimiter));
    expect(loadKubeConfig().getCurrentContext()).toBe('ctx-b');
  });

  it.each([
    ['the CLI: ~/.kube/config before the pod', false, 'https://home.example', 'home-ns'],
    ['the agent: the pod before ~/.kube/config', true, 'https://10.96.0.1:443', 'pod-ns'],
  ])('in a pod with a ~/.kube/config, %s (kubectl and controller-runtime)', (_, preferInCluster, server, namespace) => {
    file('home/.kube/config', kubeconfig([['home', 'home', 'https://home.example']]));
    const kc = loadKubeConfig({ preferInCluster, root: inPod() });
    expect([serverOf(kc), contextNamespace(kc)]).toEqual([server, namespace]);
  });

  it('uses the pod when nothing else is configured, for the CLI too', () => {
    const kc = loadKubeConfig({ root: inPod() });
    expect([serverOf(kc), contextNamespace(kc)]).toEqual(['https://10.96.0.1:443', 'pod-ns']);
  });

  it('talks to an http:// server as kubectl does (client-node refuses one without skipTLSVerify)', async () => {
    const server = createServer((_, res) =>
      res.setHeader('Content-Type', 'application/json').end(JSON.stringify({ kind: 'NodeList', apiVersion: 'v1', metadata: {}, items: [] })),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const path = file('plain', kubeconfig([['p', 'p', `http://127.0.0.1:${(server.address() as AddressInfo).port}`]]));
      const list = await loadKubeConfig({ kubeconfig: path }).makeApiClient(CoreV1Api).listNode();
      expect(list.items).toEqual([]);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
