// What the agent's ServiceAccount may write, enforced by the API server: ValidatingAdmissionPolicies that apply only
// to the agent's own requests. RBAC cannot say "only this field" or "only objects with this label": the ClusterRole
// grants `patch` on every pod, ReplicaSet and Deployment in the cluster. These policies narrow that to the writes
// agent/actuators.ts makes, on the objects the renderer labels (core/render.ts), so a stolen agent token cannot run
// an image of its choice in kube-system, rewrite a workload's template, or spoof a pod's IP or readiness.
// constructs/agent-admission.test.ts evaluates every rule; test/e2e/admission.e2e.test.ts applies them to an API server.
import { API_GROUP, ED_KIND } from '../core/api/identity.js';
import {
  ADOPTED_FROM_ANNOTATION,
  GROUP_RECORD_ANNOTATION,
  IN_PLACE_READINESS_GATE,
  KEEPER_LABEL,
  MARKED_AT_ANNOTATION,
  NAME_LABEL,
  POD_DELETION_COST_ANNOTATION,
  REGION_LABEL,
  REVISION_LABEL,
  SWAP_STATE_ANNOTATION,
} from '../core/labels.js';

/** One CEL validation of a policy: the expression must be true, else the request is denied with `message`. */
export interface AdmissionValidation {
  readonly expression: string;
  readonly message: string;
  /**
   * 403, as RBAC answers, not the default 422 (Invalid): the agent reads a 422 on a pod write as "another pod took
   * that name" and moves on, which would hide a refused write; a 403 is logged and retried.
   */
  readonly reason?: 'Forbidden';
}

/** A named CEL expression a policy's validations refer to as `variables.<name>`. */
export interface AdmissionVariable {
  readonly name: string;
  readonly expression: string;
}

/** The requests a policy looks at: one API group's resources (subresources as `pods/status`) and operations. */
export interface AdmissionResourceRule {
  readonly apiGroups: string[];
  readonly apiVersions: string[];
  readonly resources: string[];
  readonly operations: string[];
}

/** The spec of an `admissionregistration.k8s.io/v1` ValidatingAdmissionPolicy, as far as the agent's policies use it. */
export interface AgentAdmissionPolicySpec {
  readonly failurePolicy: 'Fail';
  readonly matchConstraints: { readonly resourceRules: AdmissionResourceRule[] };
  readonly matchConditions: AdmissionVariable[];
  readonly variables: AdmissionVariable[];
  readonly validations: AdmissionValidation[];
}

/** The spec of the ValidatingAdmissionPolicyBinding that puts a policy in force. */
export interface AgentAdmissionBindingSpec {
  readonly policyName: string;
  readonly validationActions: ['Deny'];
}

/** One policy and its binding, both named `name`. */
export interface AgentAdmissionPolicy {
  /** The resource it guards: `pods` (with pods/status), `replicasets`, `deployments` or `controllerrevisions`. */
  readonly resource: 'pods' | 'replicasets' | 'deployments' | 'statefulsets' | 'controllerrevisions';
  readonly name: string;
  readonly policy: AgentAdmissionPolicySpec;
  readonly binding: AgentAdmissionBindingSpec;
}

/** Who the policies apply to and where the agent may write. */
export interface AgentAdmissionOptions {
  /** Namespace of the agent's ServiceAccount. */
  readonly namespace: string;
  /**
   * Name of the ServiceAccount; the policies are named `<name>-pods`, `<name>-replicasets`, `<name>-deployments`,
   * `<name>-statefulsets`, `<name>-controllerrevisions`.
   */
  readonly name: string;
  /** The namespaces the agent watches; every write elsewhere is denied. Undefined: every namespace. */
  readonly watchNamespaces?: readonly string[] | undefined;
}

/** The annotations the agent writes on pods (agent/actuators.ts): every other annotation is someone else's. */
export const AGENT_POD_ANNOTATIONS: readonly string[] = [POD_DELETION_COST_ANNOTATION, MARKED_AT_ANNOTATION, SWAP_STATE_ANNOTATION, ADOPTED_FROM_ANNOTATION];

/**
 * The pod spec fields Kubernetes lets a pod update change besides container images (ValidatePodUpdate, v1.36): the
 * API server itself refuses a change to any other spec field, so pinning these leaves the agent only `image`.
 */
export const POD_SPEC_MUTABLE_FIELDS: readonly string[] = [
  'initContainers',
  'activeDeadlineSeconds',
  'terminationGracePeriodSeconds',
  'tolerations',
  'schedulingGates',
  'nodeSelector',
  'affinity',
];

/**
 * The pod status fields other than `conditions`, as in the PodStatus schema since Kubernetes 1.30 (where
 * ValidatingAdmissionPolicy is GA): naming a field an older API server does not know would fail the policy's
 * compilation. The kubelet owns them; the pod IPs and container readiness feed Services' endpoints.
 */
export const POD_STATUS_FIELDS: readonly string[] = [
  'phase',
  'message',
  'reason',
  'nominatedNodeName',
  'hostIP',
  'hostIPs',
  'podIP',
  'podIPs',
  'startTime',
  'qosClass',
  'initContainerStatuses',
  'containerStatuses',
  'ephemeralContainerStatuses',
  'resize',
  'resourceClaimStatuses',
];

/** ReplicaSet spec fields besides `replicas`: Git's (the pod template and selector decide what runs). */
export const REPLICA_SET_PINNED_FIELDS: readonly string[] = ['selector', 'template', 'minReadySeconds'];
/** Deployment spec fields besides `replicas` and `paused` (compat mode). */
export const DEPLOYMENT_PINNED_FIELDS: readonly string[] = [...REPLICA_SET_PINNED_FIELDS, 'strategy', 'revisionHistoryLimit', 'progressDeadlineSeconds'];
/** StatefulSet spec fields besides `replicas` and the rolling update's `partition` (checked on their own). */
export const STATEFUL_SET_PINNED_FIELDS: readonly string[] = [
  ...REPLICA_SET_PINNED_FIELDS,
  'serviceName',
  'podManagementPolicy',
  'volumeClaimTemplates',
  'persistentVolumeClaimRetentionPolicy',
  'revisionHistoryLimit',
  'ordinals',
];

/**
 * What the agent may write on each kind of regional workload, and what stays Git's. `annotations`: the agent's own,
 * written with spec.replicas (a ReplicaSet's record of the rollout's group: core/rollout/group-record.ts).
 */
const WORKLOAD_RULES = {
  replicasets: { kind: 'ReplicaSet', pinned: REPLICA_SET_PINNED_FIELDS, writable: 'spec.replicas', keepers: true, annotations: [GROUP_RECORD_ANNOTATION] },
  deployments: { kind: 'Deployment', pinned: DEPLOYMENT_PINNED_FIELDS, writable: 'spec.replicas and spec.paused', keepers: false, annotations: [] },
  statefulsets: {
    kind: 'StatefulSet',
    pinned: STATEFUL_SET_PINNED_FIELDS,
    writable: 'spec.replicas and spec.updateStrategy.rollingUpdate.partition',
    keepers: false,
    annotations: [],
  },
} as const;

const quote = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const list = (values: readonly string[]) => `[${values.map(quote).join(', ')}]`;
/** Equal before and after (absent on both sides counts as equal): `<path>.?<field>` on object and oldObject. */
const unchanged = (path: string, fields: readonly string[]) => fields.map((f) => `object${path}.?${f} == oldObject${path}.?${f}`).join(' && ');
const onUpdate = (expression: string) => `request.operation != 'UPDATE' || (${expression})`;
/** Every annotation but the agent's own (`agents`) as it was: none added, removed or changed. */
const othersUnchanged = (agents: readonly string[]) =>
  agents.length === 0
    ? 'variables.newAnnotations == variables.oldAnnotations'
    : `variables.oldAnnotations.all(k, k in ${list(agents)} || (k in variables.newAnnotations && variables.newAnnotations[k] == variables.oldAnnotations[k])) && variables.newAnnotations.all(k, k in ${list(agents)} || k in variables.oldAnnotations)`;

/** The variables every policy uses: the old and new labels and annotations, and whether the object carries an ExtendedDeployment's labels. */
const METADATA_VARIABLES: AdmissionVariable[] = [
  { name: 'oldLabels', expression: 'oldObject.metadata.?labels.orValue({})' },
  { name: 'newLabels', expression: 'object.metadata.?labels.orValue({})' },
  { name: 'oldAnnotations', expression: 'oldObject.metadata.?annotations.orValue({})' },
  { name: 'newAnnotations', expression: 'object.metadata.?annotations.orValue({})' },
  // The labels the renderer puts on every regional workload and pod (the workload's selector). The agent's informers
  // and snapshot only ever act on objects that carry them.
  { name: 'labelled', expression: `${list([NAME_LABEL, REGION_LABEL])}.all(l, l in variables.oldLabels)` },
];

/** The rules every policy starts with. */
function commonValidations(kind: string, options: AgentAdmissionOptions, operations: 'update' | 'update, keepers' | 'update or delete'): AdmissionValidation[] {
  return [
    operations === 'update'
      ? // The agent neither creates nor deletes Deployments or StatefulSets. RBAC grants neither (a server-side apply that would
        // create one is authorized as `create`); this keeps it so should a role be widened, e.g. by a wildcard.
        { expression: `request.operation == 'UPDATE'`, message: `the agent only updates ${kind}: it never creates or deletes one` }
      : operations === 'update, keepers'
        ? // The one ReplicaSet it creates and deletes is a keeper; a server-side apply that would create a regional one
          // is refused as well.
          {
            expression: `request.operation == 'UPDATE' || variables.keeper`,
            message: `the agent creates and deletes only keepers among ${kind}: marked ${KEEPER_LABEL}, with the ${NAME_LABEL}, ${REGION_LABEL} and ${REVISION_LABEL} labels, controlled by the ExtendedDeployment they name, selecting exactly those labels`,
          }
        : // The agent never creates a pod (its ReplicaSets do); a dry run, which persists nothing, proves an adoption's
          // freeze (agent/adoption.ts verifyFreeze).
          {
            expression: `request.operation != 'CREATE' || request.?dryRun.orValue(false) == true`,
            message: `the agent never creates ${kind} (but as a dry run)`,
          },
    ...namespaceValidations(options),
    // Only an ExtendedDeployment's objects: unrelated pods and workloads (kube-system's, other teams') are not the agent's.
    {
      expression: `request.operation == 'CREATE' || variables.labelled${operations === 'update or delete' ? ' || variables.adoption' : ''}`,
      message: `the agent may only change ${kind} labelled ${NAME_LABEL} and ${REGION_LABEL}${operations === 'update or delete' ? ', or adopt one into a region' : ''}`,
    },
  ];
}

/** With watched namespaces the agent has no business elsewhere, whatever RBAC says. */
function namespaceValidations(options: AgentAdmissionOptions): AdmissionValidation[] {
  if (options.watchNamespaces === undefined) return [];
  return [
    {
      expression: `request.namespace in ${list(options.watchNamespaces)}`,
      message: `the agent writes only in the namespaces it watches: ${options.watchNamespaces.join(', ')}`,
    },
  ];
}

/**
 * Pods and pods/status. The agent marks old pods (deletion cost and when it marked them), swaps images in place
 * (images, the revision label, its swap-state annotation) and flips the InPlaceUpdateReady condition. Everything else
 * stays as it was; in particular the pods/status subresource may change labels, annotations and every status field,
 * which the kubelet, Services' endpoints and the ReplicaSet controller trust. It replaces old pods by eviction (not
 * seen here, see {@link agentAdmissionPolicies}); a plain DELETE, should a role grant it, is held to labelled pods.
 */
function podPolicy(options: AgentAdmissionOptions): AgentAdmissionPolicySpec {
  const gate = quote(IN_PLACE_READINESS_GATE);
  return {
    ...shared(options),
    matchConstraints: {
      resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['pods', 'pods/status'], operations: ['CREATE', 'UPDATE', 'DELETE'] }],
    },
    variables: [
      ...METADATA_VARIABLES,
      // In-place updates are on for the pod: the renderer adds the readiness gate only then (core/render.ts), and a
      // pod without it is never swapped (core/inplace/eligibility.ts compares the whole spec with the template's).
      { name: 'gated', expression: `oldObject.spec.?readinessGates.orValue([]).exists(g, g.conditionType == ${gate})` },
      // An adoption (core/adoption): a pod of no ExtendedDeployment gets a region's labels, where it came from, and one
      // controller reference, to the region's ReplicaSet `<name>-<region>`.
      {
        name: 'adoption',
        expression: `request.operation == 'UPDATE' && !(${quote(NAME_LABEL)} in variables.oldLabels) && ${list([NAME_LABEL, REGION_LABEL])}.all(l, l in variables.newLabels) && ${quote(ADOPTED_FROM_ANNOTATION)} in variables.newAnnotations && object.metadata.?ownerReferences.orValue([]).size() == 1 && object.metadata.ownerReferences[0].apiVersion == 'apps/v1' && object.metadata.ownerReferences[0].kind == 'ReplicaSet' && object.metadata.ownerReferences[0].?controller.orValue(false) && object.metadata.ownerReferences[0].name == variables.newLabels[${quote(NAME_LABEL)}] + '-' + variables.newLabels[${quote(REGION_LABEL)}]`,
      },
    ],
    validations: [
      ...commonValidations('pods', options, 'update or delete'),
      {
        // Labels decide which ReplicaSet and Service a pod belongs to. Only the revision label follows an image swap.
        expression: onUpdate(
          `variables.adoption || (variables.newLabels.size() == variables.oldLabels.size() && variables.oldLabels.all(k, k in variables.newLabels && (k == ${quote(REVISION_LABEL)} || variables.newLabels[k] == variables.oldLabels[k])))`,
        ),
        message: `the agent may change no pod label but ${REVISION_LABEL} (an adoption sets a region's)`,
      },
      {
        // The agent's own bookkeeping only; other annotations belong to the workload's owners and other controllers.
        expression: onUpdate(othersUnchanged(AGENT_POD_ANNOTATIONS)),
        message: `the agent may change no pod annotation but ${AGENT_POD_ANNOTATIONS.join(', ')}`,
      },
      {
        // Dropping the controller reference orphans a pod (its ReplicaSet stops counting it); finalizers hold deletion.
        expression: onUpdate(`${unchanged('.metadata', ['finalizers'])} && (variables.adoption || ${unchanged('.metadata', ['ownerReferences'])})`),
        message: "the agent may not change a pod's ownerReferences (but to adopt it into a region) or finalizers",
      },
      {
        // Container images are the only other spec field the API lets an update change.
        expression: onUpdate(unchanged('.spec', POD_SPEC_MUTABLE_FIELDS)),
        message: `the agent may change no pod spec field but containers' images (${POD_SPEC_MUTABLE_FIELDS.join(', ')} stay)`,
      },
      {
        // Status is the kubelet's: IPs and readiness route traffic, phase decides whether the ReplicaSet replaces a pod.
        expression: onUpdate(
          `${unchanged('.status', POD_STATUS_FIELDS)} && object.status.?conditions.orValue([]).filter(c, c.type != ${gate}) == oldObject.status.?conditions.orValue([]).filter(c, c.type != ${gate})`,
        ),
        message: `the agent may change no pod status but the ${IN_PLACE_READINESS_GATE} condition`,
      },
      {
        // An image swap, and the condition that keeps a pod out of endpoints during one, only where in-place updates are on.
        expression: onUpdate(
          `variables.gated || (object.spec.containers.map(c, c.image) == oldObject.spec.containers.map(c, c.image) && object.status.?conditions.orValue([]).filter(c, c.type == ${gate}) == oldObject.status.?conditions.orValue([]).filter(c, c.type == ${gate}))`,
        ),
        message: `the agent swaps images and sets ${IN_PLACE_READINESS_GATE} only on pods with the ${IN_PLACE_READINESS_GATE} readiness gate`,
      },
    ],
  };
}

/**
 * Whether `o` (object or oldObject) is a keeper (core/rollout/keeper.ts): marked as one, controlled by an
 * ExtendedDeployment whose name label it carries, and selecting exactly the ExtendedDeployment's, region's and
 * revision's pods with its labels (so it can never take over another ReplicaSet's pods).
 */
const keeperOf = (o: 'object' | 'oldObject') => {
  const labels = `${o}.metadata.?labels.orValue({})`;
  const selected = [NAME_LABEL, REGION_LABEL, REVISION_LABEL].map(quote);
  return [
    `${labels}[?${quote(KEEPER_LABEL)}].orValue('') == 'true'`,
    `${list([NAME_LABEL, REGION_LABEL, REVISION_LABEL])}.all(l, l in ${labels})`,
    `${o}.metadata.?ownerReferences.orValue([]).exists(r, r.?controller.orValue(false) && r.kind == ${quote(ED_KIND)} && r.apiVersion.startsWith(${quote(`${API_GROUP}/`)}) && r.name == ${labels}[${quote(NAME_LABEL)}])`,
    `${o}.spec.selector.?matchExpressions.orValue([]).size() == 0`,
    `${o}.spec.selector.?matchLabels.orValue({}) == {${selected.map((l) => `${l}: ${labels}[${l}]`).join(', ')}}`,
  ].join(' && ');
};

/**
 * ReplicaSets, Deployments in compat mode, and StatefulSets: the agent sets `spec.replicas` (and a Deployment's
 * `spec.paused`, a StatefulSet's rolling-update partition, a ReplicaSet's group record) by server-side apply. Labels,
 * other annotations and every other spec field are Git's: the template and selector decide what runs, and a token that
 * could rewrite them could run anything under the workload's ServiceAccount. The one ReplicaSet the agent creates and
 * deletes is a keeper, which makes the old-revision pods a partition keeps from the template the history recorded; its
 * template is the agent's to choose, so the policy holds it to the shape of one.
 */
function workloadPolicy(options: AgentAdmissionOptions, resource: keyof typeof WORKLOAD_RULES): AgentAdmissionPolicySpec {
  const { kind, pinned, writable, keepers, annotations } = WORKLOAD_RULES[resource];
  const strategy = 'object.spec.?updateStrategy';
  const oldStrategy = 'oldObject.spec.?updateStrategy';
  return {
    ...shared(options),
    matchConstraints: { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], resources: [resource], operations: ['CREATE', 'UPDATE', 'DELETE'] }] },
    variables: [
      ...METADATA_VARIABLES,
      ...(keepers
        ? [
            {
              name: 'keeper',
              expression: `request.operation == 'CREATE' ? ${keeperOf('object')} : request.operation == 'DELETE' ? ${keeperOf('oldObject')} : false`,
            },
          ]
        : []),
    ],
    validations: [
      ...commonValidations(resource, options, keepers ? 'update, keepers' : 'update'),
      {
        // The agent writes no metadata on workloads but its own annotations; labels are also the selector's.
        expression: onUpdate(
          `variables.newLabels == variables.oldLabels && ${othersUnchanged(annotations)} && ${unchanged('.metadata', ['ownerReferences', 'finalizers'])}`,
        ),
        message: `the agent may not change a ${kind}'s labels, annotations${annotations.length === 0 ? '' : ` (but ${annotations.join(', ')})`}, ownerReferences or finalizers`,
      },
      { expression: onUpdate(unchanged('.spec', pinned)), message: `the agent may change only ${writable} (${pinned.join(', ')} stay)` },
      ...(resource === 'statefulsets'
        ? [
            {
              // The partition paces the StatefulSet controller's own rollout; the type and the unavailability budget are Git's.
              expression: onUpdate(
                `${strategy}.?type == ${oldStrategy}.?type && ${strategy}.?rollingUpdate.?maxUnavailable == ${oldStrategy}.?rollingUpdate.?maxUnavailable`,
              ),
              message: "the agent may change only the partition of a StatefulSet's updateStrategy",
            },
          ]
        : []),
    ],
  };
}

/**
 * Whether `o` (object or oldObject) is a ControllerRevision of an ExtendedDeployment's history: its controller is an
 * ExtendedDeployment and it carries that one's name label, as the agent records them (core/history/revisions.ts).
 */
const historyOf = (o: 'object' | 'oldObject') =>
  `${o}.metadata.?ownerReferences.orValue([]).exists(r, r.?controller.orValue(false) && r.kind == ${quote(ED_KIND)} && r.apiVersion.startsWith(${quote(`${API_GROUP}/`)}) && ${quote(NAME_LABEL)} in ${o}.metadata.?labels.orValue({}) && ${o}.metadata.labels[${quote(NAME_LABEL)}] == r.name)`;

/**
 * ControllerRevisions: the agent records, renumbers and prunes each ExtendedDeployment's history. Only revisions an
 * ExtendedDeployment controls: a StatefulSet's or DaemonSet's revisions hold the templates their controllers roll back
 * to, and a token that could rewrite or delete them could change what those run. An update (a renumbering) may not
 * change the labels or who owns the revision; the API server keeps its data immutable itself.
 */
function historyPolicy(options: AgentAdmissionOptions): AgentAdmissionPolicySpec {
  const what = `ControllerRevisions an ExtendedDeployment controls, labelled ${NAME_LABEL} with its name`;
  return {
    ...shared(options),
    matchConstraints: {
      resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], resources: ['controllerrevisions'], operations: ['CREATE', 'UPDATE', 'DELETE'] }],
    },
    variables: [...METADATA_VARIABLES, { name: 'newHistory', expression: historyOf('object') }, { name: 'oldHistory', expression: historyOf('oldObject') }],
    validations: [
      ...namespaceValidations(options),
      { expression: `request.operation == 'DELETE' || variables.newHistory`, message: `the agent writes only ${what}` },
      { expression: `request.operation == 'CREATE' || variables.oldHistory`, message: `the agent changes or deletes only ${what}` },
      {
        expression: onUpdate(`variables.newLabels == variables.oldLabels && ${unchanged('.metadata', ['ownerReferences', 'finalizers'])}`),
        message: "the agent may not change a ControllerRevision's labels, ownerReferences or finalizers",
      },
    ],
  };
}

/** What every policy shares: refuse when a rule cannot be evaluated, and look only at the agent's own requests. */
function shared(options: AgentAdmissionOptions): Pick<AgentAdmissionPolicySpec, 'failurePolicy' | 'matchConditions'> {
  return {
    failurePolicy: 'Fail',
    matchConditions: [{ name: 'agent-service-account', expression: `request.userInfo.username == ${quote(agentUsername(options))}` }],
  };
}

/** The username the API server gives the agent's ServiceAccount. */
export function agentUsername(options: Pick<AgentAdmissionOptions, 'namespace' | 'name'>): string {
  return `system:serviceaccount:${options.namespace}:${options.name}`;
}

/**
 * The agent's admission policies, one per kind it writes (each is type-checked against the schema of the kinds it
 * matches, so a rule naming `spec.template` cannot share a policy with pods): pods (and pods/status), ReplicaSets,
 * Deployments, StatefulSets, ControllerRevisions. Each binding denies (`validationActions: [Deny]`).
 *
 * Not covered: `pods/eviction` (the Eviction object names the pod, but a policy cannot read the pod behind it; an
 * eviction honours PodDisruptionBudgets, and the pod's controller recreates the pod), and the agent's own resources
 * (ExtendedDeployment and DeployRegion status, Events, its Lease), which RBAC limits to what they are.
 */
export function agentAdmissionPolicies(options: AgentAdmissionOptions): AgentAdmissionPolicy[] {
  const policies: [AgentAdmissionPolicy['resource'], AgentAdmissionPolicySpec][] = [
    ['pods', podPolicy(options)],
    ['replicasets', workloadPolicy(options, 'replicasets')],
    ['deployments', workloadPolicy(options, 'deployments')],
    ['statefulsets', workloadPolicy(options, 'statefulsets')],
    ['controllerrevisions', historyPolicy(options)],
  ];
  return policies.map(([resource, policy]) => {
    const name = `${options.name}-${resource}`;
    const validations = policy.validations.map((v): AdmissionValidation => ({ ...v, reason: 'Forbidden' }));
    return { resource, name, policy: { ...policy, validations }, binding: { policyName: name, validationActions: ['Deny'] } };
  });
}
