import { describe, expect, it } from 'vitest';
import { releaseDigest, type ReleaseMember } from './release.js';

const members: ReleaseMember[] = [
  { cluster: 'canary-1', replicas: 2, regions: [{ name: 'amd64', replicas: 2, revision: '78b89c8821' }] },
  {
    cluster: 'eu-1',
    replicas: 11,
    regions: [
      { name: 'amd64', replicas: 6, revision: 'f4c3512047' },
      { name: 'arm64', replicas: 5, revision: '90c904e991' },
    ],
  },
];

describe('releaseDigest', () => {
  it('is 10 hex digits, the same for the same members', () => {
    const digest = releaseDigest(members);
    expect(digest).toMatch(/^[0-9a-f]{10}$/);
    expect(releaseDigest(structuredClone(members))).toBe(digest);
  });

  it('reads only cluster, replicas and the regions’ name, replicas and revision', () => {
    const extra = members.map((m) => ({ ...m, wave: 3, regions: m.regions.map((r) => ({ ...r, workload: { kind: 'ReplicaSet' } })) }));
    expect(releaseDigest(extra)).toBe(releaseDigest(members));
  });

  it.each([
    ['a share', (m: ReleaseMember[]) => [{ ...m[0]!, replicas: 3 }, m[1]!]],
    ['a region count', (m: ReleaseMember[]) => [m[0]!, { ...m[1]!, regions: [m[1]!.regions[0]!, { ...m[1]!.regions[1]!, replicas: 4 }] }]],
    ['a revision', (m: ReleaseMember[]) => [{ ...m[0]!, regions: [{ ...m[0]!.regions[0]!, revision: '0000000000' }] }, m[1]!]],
    ['the member order', (m: ReleaseMember[]) => [m[1]!, m[0]!]],
    ['a member more', (m: ReleaseMember[]) => [...m, { cluster: 'us-1', replicas: 0, regions: [] }]],
  ])('changes with %s', (_name, change) => {
    expect(releaseDigest(change(members))).not.toBe(releaseDigest(members));
  });
});
