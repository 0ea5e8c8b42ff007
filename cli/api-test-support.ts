// Shared by edctl's unit tests of cluster commands: a loopback server that answers for one ExtendedDeployment, and a
// kubeconfig file pointing at it (an http:// server, as kubectl proxy serves).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { API_GROUP, ED_KIND, ED_PLURAL, VERSION } from '../core/api/identity.js';
import type { ExtendedDeploymentObject } from '../core/kube/objects.js';

/** What the fake API server serves and saw. */
export interface FakeApi {
  /** The kubeconfig file of the server. */
  kubeconfig: string;
  /** The ExtendedDeployment `shop/web` it serves; set it per test. */
  ed: ExtendedDeploymentObject;
  /** The bodies of the patches it received, in order. */
  patches: unknown[];
  /** The ControllerRevisions it lists in shop (filtered by the request's `<label>=<value>` selector); set per test. */
  revisions: { metadata?: { labels?: Record<string, string> } }[];
}

/**
 * Serves ExtendedDeployment shop/web for the calling file: get, list, a watch that stays silent, and merge patches
 * (recorded, not applied); and the list of shop's ControllerRevisions. Anything else is a 404.
 */
export function fakeApi(): FakeApi {
  const api: FakeApi = { kubeconfig: '', ed: {}, patches: [], revisions: [] };
  const base = `/apis/${API_GROUP}/${VERSION}/namespaces/shop/${ED_PLURAL}`;
  const served = () => ({
    apiVersion: `${API_GROUP}/${VERSION}`,
    kind: ED_KIND,
    ...api.ed,
    metadata: { name: 'web', namespace: 'shop', resourceVersion: '1', ...api.ed.metadata },
  });
  let server: Server;
  beforeAll(async () => {
    server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const send = (code: number, body: unknown) => res.writeHead(code, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        if (url.searchParams.get('watch') === 'true') return void res.writeHead(200, { 'Content-Type': 'application/json' }).flushHeaders();
        if (req.method === 'PATCH' && url.pathname === `${base}/web`) {
          api.patches.push(JSON.parse(body));
          return send(200, served());
        }
        if (req.method === 'GET' && url.pathname === `${base}/web`) return send(200, served());
        if (req.method === 'GET' && url.pathname === '/apis/apps/v1/namespaces/shop/controllerrevisions') {
          const [label, value] = (url.searchParams.get('labelSelector') ?? '').split('=');
          const items = api.revisions.filter((r) => label === '' || r.metadata?.labels?.[label ?? ''] === value);
          return send(200, { apiVersion: 'apps/v1', kind: 'ControllerRevisionList', metadata: { resourceVersion: '1' }, items });
        }
        if (req.method === 'GET' && url.pathname === base)
          return send(200, { apiVersion: `${API_GROUP}/${VERSION}`, kind: `${ED_KIND}List`, metadata: { resourceVersion: '1' }, items: [served()] });
        send(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'not found' });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    api.kubeconfig = join(mkdtempSync(join(tmpdir(), 'edctl-api-')), 'kubeconfig');
    const address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    writeFileSync(
      api.kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'fake', cluster: { server: address } }],
        users: [{ name: 'u', user: { token: 't' } }],
        contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'u', namespace: 'shop' } }],
        'current-context': 'fake',
      }),
    );
  });
  beforeEach(() => {
    api.ed = {};
    api.patches = [];
    api.revisions = [];
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return api;
}
