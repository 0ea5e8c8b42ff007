import type { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { performAction } from './actuators.js';

/**
 * A Deployment behind a model of server-side apply's field ownership (what the API server does): an apply sets the
 * fields of its body and makes its field manager their owner; a field the same manager applied before but leaves
 * out now loses that owner, and a field left without any owner is removed (spec.replicas falls back to its
 * default 1, spec.paused to false).
 */
function ssaDeployment() {
  const spec: { replicas: number; paused: boolean } = { replicas: 1, paused: false };
  const defaults = { replicas: 1, paused: false };
  const owners = new Map<string, Set<keyof typeof spec>>();
  const calls: { manager: string; fields: string[] }[] = [];
  const apply = (manager: string, body: Partial<typeof spec>) => {
    const fields = Object.keys(body) as (keyof typeof spec)[];
    calls.push({ manager, fields });
    for (const f of fields) {
      (spec as Record<string, unknown>)[f] = body[f];
      for (const [m, owned] of owners) if (m !== manager) owned.delete(f); // force: conflicts are taken over
    }
    const before = owners.get(manager) ?? new Set();
    owners.set(manager, new Set(fields));
    for (const f of before) {
      if (!fields.includes(f) && ![...owners.values()].some((o) => o.has(f))) (spec as Record<string, unknown>)[f] = defaults[f];
    }
  };
  const apps = {
    patchNamespacedDeployment: async (params: { fieldManager?: string; body: { spec?: Partial<typeof spec> } }) => {
      apply(params.fieldManager ?? '', params.body.spec ?? {});
      return {};
    },
  } as unknown as AppsV1Api;
  return { spec, calls, clients: { apps, core: {} as CoreV1Api } };
}

describe('actuators on native Deployments (compat mode)', () => {
  it('scale and setPaused keep each other\'s field: the agent never fights itself over replicas and paused', async () => {
    const d = ssaDeployment();
    const scale = { kind: 'scale', region: 'a', workload: 'web-a', from: 1, replicas: 3 } as const;
    const pause = (paused: boolean) => ({ kind: 'setPaused', region: 'a', workload: 'web-a', paused }) as const;

    await performAction(d.clients, 'shop', 'Deployment', scale);
    await performAction(d.clients, 'shop', 'Deployment', pause(true));
    expect(d.spec).toEqual({ replicas: 3, paused: true });
    await performAction(d.clients, 'shop', 'Deployment', scale);
    expect(d.spec).toEqual({ replicas: 3, paused: true });
    await performAction(d.clients, 'shop', 'Deployment', pause(false));
    await performAction(d.clients, 'shop', 'Deployment', { ...scale, replicas: 5 });
    expect(d.spec).toEqual({ replicas: 5, paused: false });

    // Each apply names exactly one field, under a manager of the agent's own.
    expect(d.calls.every((c) => c.fields.length === 1 && c.manager.startsWith('extendeddeployment-agent'))).toBe(true);
  });
});
