import { describe, expect, it } from 'vitest';
import type { RolloutAction } from '../rollout/actions.js';
import { actionWrite, historyWrite } from './api-writes.js';

describe('actionWrite: the RBAC verb and resource of each action, as the actuators perform it', () => {
  const pod = { region: 'a', pod: 'p', uid: 'u' };
  const swap = { ...pod, resourceVersion: '1', state: { revision: 'r', phase: 'draining' as const, since: 0 } };
  const table: [RolloutAction, 'ReplicaSet' | 'Deployment', string][] = [
    [{ kind: 'scale', region: 'a', workload: 'w', from: 1, replicas: 2 }, 'ReplicaSet', 'patch replicasets'],
    [{ kind: 'scale', region: 'a', workload: 'w', from: 1, replicas: 2 }, 'Deployment', 'patch deployments'],
    [{ kind: 'setPaused', region: 'a', workload: 'w', paused: true }, 'Deployment', 'patch deployments'],
    [{ kind: 'markOld', ...pod, at: '2026-01-01T00:00:00Z', cost: -2147483648 }, 'ReplicaSet', 'patch pods'],
    [{ kind: 'unmark', ...pod }, 'ReplicaSet', 'patch pods'],
    [{ kind: 'deletePod', ...pod }, 'ReplicaSet', 'create pods/eviction'],
    [{ kind: 'openGate', ...pod }, 'ReplicaSet', 'patch pods/status'],
    [{ kind: 'closeGate', ...pod }, 'ReplicaSet', 'patch pods/status'],
    [{ kind: 'swapBegin', ...swap }, 'ReplicaSet', 'patch pods'],
    [{ kind: 'swapImages', ...swap }, 'ReplicaSet', 'patch pods'],
    [{ kind: 'swapDone', ...swap }, 'ReplicaSet', 'patch pods'],
    [{ kind: 'traffic', write: { kind: 'applyRoute', route: {} as never } }, 'ReplicaSet', 'patch httproutes.gateway.networking.k8s.io'],
    [{ kind: 'traffic', write: { kind: 'deleteRoute', name: 'web' } }, 'ReplicaSet', 'delete httproutes.gateway.networking.k8s.io'],
    [{ kind: 'traffic', write: { kind: 'applyService', service: {} as never } }, 'ReplicaSet', 'patch services'],
    [{ kind: 'traffic', write: { kind: 'deleteService', name: 'web-r1' } }, 'ReplicaSet', 'delete services'],
  ];

  it.each(table)('%o (%s): %s', (action, kind, expected) => {
    const write = actionWrite(kind, action);
    expect(`${write.verb} ${write.resource}`).toBe(expected);
  });
});

describe('historyWrite: the RBAC verb of each history action', () => {
  const object = { metadata: { name: 'web-r1' } };
  it.each([
    [{ kind: 'create', object }, 'create controllerrevisions'],
    [{ kind: 'update', object }, 'update controllerrevisions'],
    [{ kind: 'delete', name: 'web-r1', uid: 'u' }, 'delete controllerrevisions'],
  ] as const)('%o: %s', (action, expected) => {
    const write = historyWrite(action);
    expect(`${write.verb} ${write.resource}`).toBe(expected);
  });
});
