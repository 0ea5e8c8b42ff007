import { describe, expect, it } from 'vitest';
import { NAME_LABEL, REGION_LABEL } from '../core/labels.js';
import { admit } from './admission-test-support.js';
import { adoptionFreezePolicy } from './adoption-freeze.js';

const { policy, binding } = adoptionFreezePolicy();
const [frozenRule, regionRule] = policy.validations.map((v) => v.message);

/** ExtendedDeployment shop/web whose region a adopts Deployment/web, with `adoptions` in its status. */
const ed = (adoptions?: unknown[]) => ({
  metadata: { name: 'web', namespace: 'shop' },
  spec: { regions: [{ name: 'a', adopt: { kind: 'Deployment', name: 'web' } }, { name: 'b' }] },
  ...(adoptions && { status: { adoptions } }),
});
const moving = { region: 'a', source: 'Deployment/web', phase: 'Moving', frozen: ['old-rs-uid'] };
const adopted = { region: 'a', source: 'Deployment/web', phase: 'Adopted', moved: 5 };

/** A pod as a ReplicaSet creates it: controlled by `uid`, with `labels`. */
const pod = (uid: string, labels: Record<string, string> = {}) => ({
  metadata: { name: 'p', namespace: 'shop', labels, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid, controller: true }] },
});
const create = (object: Record<string, unknown>, params: Record<string, unknown>) => admit(policy, { operation: 'CREATE' }, object, null, params);
const regionA = { [NAME_LABEL]: 'web', [REGION_LABEL]: 'a' };

describe('adoption freeze policy', () => {
  it("refuses pods of a ReplicaSet the status lists as frozen while Moving, and no other ReplicaSet's", () => {
    expect(create(pod('old-rs-uid', { app: 'web' }), ed([moving]))).toEqual([frozenRule]);
    expect(create(pod('other-uid', { app: 'web' }), ed([moving]))).toEqual([]);
    expect(create(pod('old-rs-uid', { app: 'web' }), ed([{ ...moving, phase: 'Waiting' }]))).toEqual([]);
    expect(create(pod('old-rs-uid', { app: 'web' }), ed([adopted]))).toEqual([]);
  });

  it("refuses pods of an adopting region until its entry is Adopted, also before the agent wrote any (Git's first replica)", () => {
    expect(create(pod('ours', regionA), ed())).toEqual([regionRule]);
    expect(create(pod('ours', regionA), ed([moving]))).toEqual([regionRule]);
    expect(create(pod('ours', regionA), ed([adopted]))).toEqual([]);
    // Another region, another ExtendedDeployment's pods, and unlabelled pods are not the adoption's.
    expect(create(pod('ours', { ...regionA, [REGION_LABEL]: 'b' }), ed())).toEqual([]);
    expect(create(pod('ours', { ...regionA, [NAME_LABEL]: 'shop' }), ed())).toEqual([]);
    expect(create({ metadata: { name: 'bare', namespace: 'shop' } }, ed())).toEqual([]);
  });

  it("takes every ExtendedDeployment of the pod's namespace as a param, and allows where there is none or they cannot be read", () => {
    // Fail would refuse every pod of the cluster while the ExtendedDeployment CRD is missing; the agent proves the freeze.
    expect(policy.failurePolicy).toBe('Ignore');
    expect(policy.paramKind).toEqual({ apiVersion: 'extendeddeployment.io/v1beta1', kind: 'ExtendedDeployment' });
    expect(binding.paramRef).toEqual({ selector: {}, parameterNotFoundAction: 'Allow' });
    expect(policy.matchConstraints.resourceRules).toEqual([{ apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], operations: ['CREATE'] }]);
  });
});
