// The e2e order: suites that need a GitOps engine or the gateway last, their builds named for the background.
import { describe, expect, it } from 'vitest';
import { buildsLast } from '../e2e/background-builds.js';

const path = (f: string) => `/repo/test/e2e/${f}`;

describe('buildsLast', () => {
  it('keeps the order of the other suites and puts the ones with builds last, in build order', () => {
    const sorted = [
      'traffic.e2e.test.ts',
      'fleet-waves.e2e.test.ts',
      'gitops-flux.e2e.test.ts',
      'rollout.e2e.test.ts',
      'traffic-lab.e2e.test.ts',
      'gitops-argocd.e2e.test.ts',
    ];
    const { order, builds } = buildsLast(sorted, path);
    expect(order).toEqual([
      'fleet-waves.e2e.test.ts',
      'rollout.e2e.test.ts',
      'gitops-argocd.e2e.test.ts',
      'gitops-flux.e2e.test.ts',
      'traffic-lab.e2e.test.ts',
      'traffic.e2e.test.ts',
    ]);
    expect(builds).toEqual(['argocd', 'traefik', 'flux']);
  });

  it('names only the builds of the suites that run, and none when no other suite runs first to overlap them with', () => {
    expect(buildsLast(['traffic.e2e.test.ts', 'scale.e2e.test.ts'], path).builds).toEqual(['traefik']);
    expect(buildsLast(['gitops-flux.e2e.test.ts', 'scale.e2e.test.ts'], path).builds).toEqual(['flux', 'traefik']);
    expect(buildsLast(['traffic.e2e.test.ts', 'traffic-lab.e2e.test.ts'], path)).toEqual({
      order: ['traffic-lab.e2e.test.ts', 'traffic.e2e.test.ts'],
      builds: [],
    });
    expect(buildsLast(['scale.e2e.test.ts'], path)).toEqual({ order: ['scale.e2e.test.ts'], builds: [] });
  });
});
