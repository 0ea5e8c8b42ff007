// Without a fieldManager, client-node's requests are recorded in managedFields under the HTTP library's user agent
// (`node-fetch`). These tests send every kind of write the agent makes through the real client-node API clients to a
// loopback server and read the query string the API server would see.
import { AppsV1Api, CoordinationV1Api, CoreV1Api, CustomObjectsApi } from './runtime/kube-client.js';
import { KubeConfig } from './runtime/kube-config.js';
import { beforeEach, describe, expect, it } from 'vitest';
import { performAction } from './actuators.js';
import { FakeClock } from './runtime/clock.js';
import { apiEventRecorder } from './events.js';
import { FIELD_MANAGER } from './field-manager.js';
import { LEADER_ELECTION_DEFAULTS, LeaderElector } from './runtime/leader-election.js';
import { silentLogger } from './runtime/log.js';
import { replaceRegionStatus, replaceStatus } from './status-writer.js';
import { serveApi } from './runtime/test-support.js';

const LEASE_PATH = '/apis/coordination.k8s.io/v1/namespaces/ed-system/leases';

/** Every request as `METHOD path fieldManager=<value, or null when absent>`. */
let requests: string[] = [];
/** The Lease the loopback server holds (JSON as last written), so that leader election can read back what it wrote. */
let lease: string | undefined;

const kc = new KubeConfig();
serveApi(kc, (req, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => (body += chunk.toString()));
  req.on('end', () => {
    const url = new URL(req.url ?? '', 'http://loopback');
    requests.push(`${req.method} ${url.pathname} fieldManager=${url.searchParams.get('fieldManager')}`);
    if (url.pathname.startsWith(LEASE_PATH)) {
      if (req.method === 'GET' && lease === undefined) {
        res.writeHead(404, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 }));
      }
      if (req.method !== 'GET') lease = body;
      res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json' });
      return res.end(lease);
    }
    // Anything else: answer with what was sent (a write's answer is the object written).
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body === '' ? '{}' : body);
  });
});

beforeEach(() => {
  requests = [];
  lease = undefined;
});

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(condition()).toBe(true);
}

describe('the agent names its field manager', () => {
  it('on every status write (PUT) of ExtendedDeployments and DeployRegions', async () => {
    const custom = kc.makeApiClient(CustomObjectsApi);
    const ed = { apiVersion: 'extendeddeployment.io/v1beta1', kind: 'ExtendedDeployment', metadata: { name: 'web', namespace: 'shop', resourceVersion: '7' } };
    await replaceStatus(custom, ed, { phase: 'Healthy' });
    await replaceRegionStatus(
      custom,
      { apiVersion: 'extendeddeployment.io/v1beta1', kind: 'DeployRegion', metadata: { name: 'amd', resourceVersion: '3' } },
      { phase: 'Healthy' },
    );
    expect(requests).toEqual([
      'PUT /apis/extendeddeployment.io/v1beta1/namespaces/shop/extendeddeployments/web/status fieldManager=extendeddeployment-agent',
      'PUT /apis/extendeddeployment.io/v1beta1/deployregions/amd/status fieldManager=extendeddeployment-agent',
    ]);
  });

  it('on every pod patch and workload apply; an eviction has no field manager to name (it stores no object)', async () => {
    const clients = {
      core: kc.makeApiClient(CoreV1Api),
      apps: kc.makeApiClient(AppsV1Api),
      custom: kc.makeApiClient(CustomObjectsApi),
      now: () => Date.UTC(2026, 0, 1),
    };
    const pod = { region: 'amd', pod: 'web-1', uid: 'u-1' };
    const swap = { ...pod, resourceVersion: '5', state: { revision: 'r2', phase: 'swapping' as const, since: 0 }, images: { app: 'web:2' }, revision: 'r2' };
    await performAction(clients, 'shop', 'ReplicaSet', { kind: 'markOld', ...pod, at: '2026-01-01T00:00:00.000Z', cost: -2147483648 });
    await performAction(clients, 'shop', 'ReplicaSet', { kind: 'unmark', ...pod });
    await performAction(clients, 'shop', 'ReplicaSet', { kind: 'swapImages', ...swap });
    await performAction(clients, 'shop', 'ReplicaSet', { kind: 'openGate', ...pod });
    await performAction(clients, 'shop', 'ReplicaSet', { kind: 'deletePod', ...pod });
    await performAction(clients, 'shop', 'ReplicaSet', { kind: 'scale', region: 'amd', workload: 'web-amd', from: 1, replicas: 2 });
    await performAction(clients, 'shop', 'Deployment', { kind: 'scale', region: 'amd', workload: 'web-amd', from: 1, replicas: 2 });
    await performAction(clients, 'shop', 'Deployment', { kind: 'setPaused', region: 'amd', workload: 'web-amd', paused: true });
    expect(requests).toEqual([
      'PATCH /api/v1/namespaces/shop/pods/web-1 fieldManager=extendeddeployment-agent',
      'PATCH /api/v1/namespaces/shop/pods/web-1 fieldManager=extendeddeployment-agent',
      'PATCH /api/v1/namespaces/shop/pods/web-1 fieldManager=extendeddeployment-agent',
      'PATCH /api/v1/namespaces/shop/pods/web-1/status fieldManager=extendeddeployment-agent',
      'POST /api/v1/namespaces/shop/pods/web-1/eviction fieldManager=null',
      'PATCH /apis/apps/v1/namespaces/shop/replicasets/web-amd fieldManager=extendeddeployment-agent',
      'PATCH /apis/apps/v1/namespaces/shop/deployments/web-amd fieldManager=extendeddeployment-agent',
      'PATCH /apis/apps/v1/namespaces/shop/deployments/web-amd fieldManager=extendeddeployment-agent-pause',
    ]);
  });

  it('on every Event it records', async () => {
    const recorder = apiEventRecorder(kc.makeApiClient(CoreV1Api), 'agent-1', silentLogger);
    recorder.record({ metadata: { name: 'web', namespace: 'shop' } }, { type: 'Normal', reason: 'GroupStarted', message: 'group 1 of 2 started' });
    recorder.record({ kind: 'DeployRegion', metadata: { name: 'amd' } }, { type: 'Warning', reason: 'RegionDegraded', message: 'nodes down' });
    await recorder.flush(5_000);
    expect(requests.sort()).toEqual([
      'POST /api/v1/namespaces/default/events fieldManager=extendeddeployment-agent',
      'POST /api/v1/namespaces/shop/events fieldManager=extendeddeployment-agent',
    ]);
  });

  it('on every Lease write: create, renew and release', async () => {
    const clock = new FakeClock(Date.now());
    let leading = 0;
    const config = { namespace: 'ed-system', name: 'agent', identity: 'agent-1', fieldManager: FIELD_MANAGER, ...LEADER_ELECTION_DEFAULTS };
    const hooks = { clock, log: silentLogger, onStartedLeading: () => leading++, onStoppedLeading: () => leading-- };
    const elector = new LeaderElector(kc.makeApiClient(CoordinationV1Api), config, hooks);
    elector.start();
    clock.advance(0);
    await until(() => leading === 1 && clock.pending() === 2); // the next try and the renew deadline
    clock.advance(LEADER_ELECTION_DEFAULTS.retryPeriodMs * 1.2);
    await until(() => requests.length === 3);
    await elector.stop();
    await elector.release();
    expect(leading).toBe(1);
    expect(requests).toEqual([
      `GET ${LEASE_PATH}/agent fieldManager=null`,
      `POST ${LEASE_PATH} fieldManager=extendeddeployment-agent`,
      // The renewal goes over the Lease the create answered with, unread.
      `PUT ${LEASE_PATH}/agent fieldManager=extendeddeployment-agent`,
      `GET ${LEASE_PATH}/agent fieldManager=null`,
      `PUT ${LEASE_PATH}/agent fieldManager=extendeddeployment-agent`,
    ]);
    expect(JSON.parse(lease ?? '{}')).toMatchObject({ spec: { holderIdentity: '' } });
  });
});
