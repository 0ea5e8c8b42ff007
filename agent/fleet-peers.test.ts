import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { observePeers, peerKubeconfigs, type FleetAccess, type PeerView } from './fleet-peers.js';

describe('peerKubeconfigs', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
  const folder = (files: Record<string, string>) => {
    const dir = mkdtempSync(join(tmpdir(), 'peers-'));
    dirs.push(dir);
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    return dir;
  };

  it('finds <cluster>/kubeconfig of every other member, sorted, and nothing else', () => {
    const dir = folder({
      'us-1/kubeconfig': 'a',
      'canary-1/kubeconfig': 'b',
      'eu-1/kubeconfig': 'self',
      'Not_A_Cluster/kubeconfig': 'c',
      'empty/other-file': 'd',
      'loose-file': 'e',
    });
    const found = peerKubeconfigs(dir, 'eu-1');
    expect([...found.keys()]).toEqual(['canary-1', 'us-1']);
    expect(found.get('us-1')?.path).toBe(join(dir, 'us-1', 'kubeconfig'));
  });

  it('a missing folder has no peers (an agent outside a fleet, or before the Secrets exist)', () => {
    expect(peerKubeconfigs(join(tmpdir(), 'no-such-folder-of-peers'), 'eu-1').size).toBe(0);
  });
});

describe('observePeers', () => {
  const members = [{ cluster: 'canary-1' }, { cluster: 'eu-1' }, { cluster: 'us-1' }];
  const ed = { metadata: { name: 'web', namespace: 'shop', generation: 3 }, status: { observedGeneration: 3, phase: 'Healthy', fleet: { release: 'abc' } } };
  const view = (over: Partial<PeerView>): PeerView => ({
    cluster: 'canary-1',
    reachable: true,
    error: undefined,
    lease: { renewTimeMs: 1_000, durationSeconds: 15, holder: 'x' },
    synced: true,
    extendedDeployment: (namespace, name) => (namespace === 'shop' && name === 'web' ? ed : undefined),
    ...over,
  });
  const access = (views: Record<string, PeerView>): FleetAccess => ({ clusterName: 'eu-1', peerDir: '/peers', peers: { view: (c) => views[c] } });

  it('every other member, in members order: read, unreachable, not read yet, or without a kubeconfig', () => {
    const seen = observePeers(
      access({ 'canary-1': view({}), 'us-1': view({ reachable: false, error: 'connect ECONNREFUSED' }) }),
      members,
      'eu-1',
      'shop',
      'web',
    );
    expect(seen).toEqual([
      {
        cluster: 'canary-1',
        reachable: true,
        lease: { renewTime: 1_000, durationSeconds: 15 },
        ed: { generation: 3, observedGeneration: 3, phase: 'Healthy', statusRelease: 'abc', specRelease: undefined, regions: [], allRegionsFailed: false },
      },
      { cluster: 'us-1', reachable: false, error: 'connect ECONNREFUSED' },
    ]);
    expect(observePeers(access({}), members, 'eu-1', 'shop', 'web')[0]).toEqual({
      cluster: 'canary-1',
      reachable: false,
      error: 'no canary-1/kubeconfig in /peers',
    });
    expect(observePeers(undefined, members, 'eu-1', 'shop', 'web')[0]?.error).toBe('this agent reads no peers (--peer-kubeconfigs)');
  });

  it('a peer not probed or not listed yet is reachable with nothing read (no unreachable record); a missing object says so', () => {
    const lease = { renewTime: 1_000, durationSeconds: 15 };
    expect(observePeers(access({ 'canary-1': view({ reachable: undefined, lease: undefined }) }), members.slice(0, 2), 'eu-1', 'shop', 'web')).toEqual([
      { cluster: 'canary-1', reachable: true, error: 'not read yet' },
    ]);
    expect(observePeers(access({ 'canary-1': view({ synced: false }) }), members.slice(0, 2), 'eu-1', 'shop', 'web')).toEqual([
      { cluster: 'canary-1', reachable: true, error: 'not read yet', lease },
    ]);
    expect(observePeers(access({ 'canary-1': view({}) }), members.slice(0, 2), 'eu-1', 'shop', 'api')).toEqual([
      { cluster: 'canary-1', reachable: true, error: 'it has no ExtendedDeployment shop/api', lease },
    ]);
  });
});
