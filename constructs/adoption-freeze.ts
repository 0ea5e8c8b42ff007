// The adoption freeze (core/adoption): while a region moves pods of another workload to its ReplicaSet, each
// intermediate state has one ReplicaSet with fewer pods than its count, which would create a pod within milliseconds.
// This policy refuses those creates, reading the ExtendedDeployments of the pod's namespace as its params: their
// status says which ReplicaSets are frozen (an adoption's entry while Moving) and which regions are not adopted yet.
// No ExtendedDeployment in a namespace, or none adopting: the policy allows everything there.
// constructs/adoption-freeze.test.ts evaluates it; test/e2e/adoption.e2e.test.ts runs it on an API server.
import { ADOPTION_FREEZE_POLICY } from '../core/adoption/adoption.js';
import { API_VERSION, ED_KIND } from '../core/api/identity.js';
import { NAME_LABEL, REGION_LABEL } from '../core/labels.js';
import type { AdmissionResourceRule, AdmissionValidation, AdmissionVariable } from './agent-admission.js';

/** The spec of the freeze's ValidatingAdmissionPolicy. */
export interface AdoptionFreezePolicySpec {
  readonly failurePolicy: 'Ignore';
  readonly paramKind: { readonly apiVersion: string; readonly kind: string };
  readonly matchConstraints: { readonly resourceRules: AdmissionResourceRule[] };
  readonly variables: AdmissionVariable[];
  readonly validations: AdmissionValidation[];
}

/** The spec of its binding: every ExtendedDeployment of the request's namespace is a param; none, and it allows. */
export interface AdoptionFreezeBindingSpec {
  readonly policyName: string;
  readonly validationActions: ['Deny'];
  readonly paramRef: { readonly selector: Record<string, never>; readonly parameterNotFoundAction: 'Allow' };
}

const quote = (value: string) => `'${value}'`;

/** The freeze policy and its binding, both named {@link ADOPTION_FREEZE_POLICY}. */
export function adoptionFreezePolicy(): { name: string; policy: AdoptionFreezePolicySpec; binding: AdoptionFreezeBindingSpec } {
  return {
    name: ADOPTION_FREEZE_POLICY,
    policy: {
      // Ignore: a policy whose params cannot be read (the ExtendedDeployment CRD not installed yet, or removed before
      // the policy) would otherwise refuse every pod of the cluster. The freeze is only relied on where the agent has
      // proved it (a dry-run create refused by this policy's rule), so a freeze that fails open moves no pod.
      failurePolicy: 'Ignore',
      paramKind: { apiVersion: API_VERSION, kind: ED_KIND },
      matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], operations: ['CREATE'] }] },
      variables: [
        { name: 'adoptions', expression: 'params.?status.?adoptions.orValue([])' },
        {
          name: 'controllerUids',
          expression: 'object.metadata.?ownerReferences.orValue([]).filter(r, r.?controller.orValue(false)).map(r, r.uid)',
        },
        { name: 'labels', expression: 'object.metadata.?labels.orValue({})' },
        // The pod is one of this ExtendedDeployment's regions' (its ReplicaSet's template labels), in a region that adopts.
        {
          name: 'adoptingRegion',
          expression: `variables.labels[?${quote(NAME_LABEL)}].orValue('') == params.metadata.name && params.spec.regions.exists(r, has(r.adopt) && r.name == variables.labels[?${quote(REGION_LABEL)}].orValue(''))`,
        },
      ],
      validations: [
        {
          expression: "!variables.adoptions.exists(a, a.phase == 'Moving' && a.?frozen.orValue([]).exists(u, u in variables.controllerUids))",
          message: 'pod creation is frozen while an ExtendedDeployment moves the pods of this ReplicaSet to one of its regions (adoption)',
          reason: 'Forbidden',
        },
        {
          expression: `!variables.adoptingRegion || variables.adoptions.exists(a, a.region == variables.labels[${quote(REGION_LABEL)}] && a.phase == 'Adopted')`,
          message: "a region's ReplicaSet creates no pod until the region has adopted the pods of the workload it names (status.adoptions)",
          reason: 'Forbidden',
        },
      ],
    },
    binding: {
      policyName: ADOPTION_FREEZE_POLICY,
      validationActions: ['Deny'],
      paramRef: { selector: {}, parameterNotFoundAction: 'Allow' },
    },
  };
}
