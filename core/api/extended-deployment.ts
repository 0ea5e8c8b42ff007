import * as z from 'zod';
import { condition, dnsLabel, INT32_MAX, intOrPercent, labelMap, labelSelector, objectMeta, stringMap, toleration } from './common.js';
import { API_VERSION, ED_KIND, UPSTREAM_INPLACESET_KIND } from './identity.js';
import { analysisStatus, trafficStatus, trafficStrategy } from './traffic.js';

const nonNegativeInt = z
  .number()
  .int({ message: 'must be an integer' })
  .min(0, { message: 'must not be negative' })
  .max(INT32_MAX, { message: `must be at most ${INT32_MAX}` });

/** Resource requests and limits of one container (quantities as Kubernetes writes them). */
const quantity = z.union([z.string(), z.number()]).meta({ 'x-kubernetes-int-or-string': true });
const resourceRequirements = z.strictObject({
  requests: z.record(z.string(), quantity).optional().describe('Minimum resources, e.g. {cpu: 500m}.'),
  limits: z.record(z.string(), quantity).optional().describe('Maximum resources, e.g. {memory: 1Gi}.'),
});

/** A container of the pod template; fields the renderer does not read pass through untouched. */
const container = z.looseObject({
  name: dnsLabel.describe('Container name, unique in the pod.'),
  image: z.string().optional().describe('Container image.'),
  env: z.array(z.looseObject({ name: z.string() })).optional(),
  resources: resourceRequirements.loose().optional(),
});

/** The required node affinity, as far as region placement reads and extends it. */
const nodeAffinity = z.looseObject({
  requiredDuringSchedulingIgnoredDuringExecution: z
    .looseObject({
      nodeSelectorTerms: z.array(
        z.looseObject({
          matchExpressions: z.array(z.looseObject({ key: z.string(), operator: z.string(), values: z.array(z.string()).optional() })).optional(),
        }),
      ),
    })
    .optional(),
});

/** The pod template (core/v1 PodTemplateSpec). Only what rendering reads is checked here; the rest is Kubernetes'. */
export const podTemplate = z
  .looseObject({
    metadata: objectMeta.optional(),
    spec: z.looseObject({
      containers: z.array(container).min(1, { message: 'needs at least one container' }),
      initContainers: z.array(container).optional(),
      restartPolicy: z.string().optional(),
      nodeSelector: stringMap.optional(),
      affinity: z.looseObject({ nodeAffinity: nodeAffinity.optional() }).optional(),
      tolerations: z.array(toleration).optional(),
      readinessGates: z.array(z.looseObject({ conditionType: z.string() })).optional(),
    }),
  })
  .meta({ 'x-kubernetes-preserve-unknown-fields': true })
  .describe('Pod template every region starts from (core/v1 PodTemplateSpec).');

/** Typed per-region overrides, applied before the raw RFC 6902 `overriders`. */
export const regionOverrides = z
  .strictObject({
    images: z
      .record(z.string(), z.string().min(1, { message: 'must not be empty' }))
      .optional()
      .describe('Image per container name (regular or init container), e.g. {app: "shop/web:1.2-arm64"}.'),
    env: z
      .record(z.string(), z.record(z.string(), z.string()))
      .optional()
      .describe('Literal environment variables per container name; a variable of the same name is replaced, others are appended in key order.'),
    resources: z
      .record(z.string(), resourceRequirements)
      .optional()
      .describe("Requests and limits per container name, merged key by key into the container's own."),
    labels: labelMap.optional().describe('Labels added to (or replaced in) the pod template.'),
    annotations: stringMap.optional().describe('Annotations added to (or replaced in) the pod template.'),
    nodeSelector: stringMap.optional().describe("Entries merged into the pod's nodeSelector."),
    tolerations: z.array(toleration).optional().describe("Tolerations appended to the pod's (after the region's own)."),
    volumeClaims: z
      .record(
        dnsLabel,
        z.strictObject({
          storageClassName: z.string().optional().describe("StorageClass of this region's claims (zonal storage, another provisioner)."),
          storage: quantity.optional().describe('Size each claim requests in this region (resources.requests.storage).'),
        }),
      )
      .optional()
      .describe('StatefulSet regions: changes to the volume claim templates by claim name, for this region only.'),
  })
  .describe('Typed changes to the pod template for this region only.');

/** The kinds of workload a region can adopt pods from. */
export const adoptionKinds = ['Deployment', 'ReplicaSet', UPSTREAM_INPLACESET_KIND] as const;

/** A workload of the ExtendedDeployment's namespace whose pods a region adopts. */
export const adoptionSource = z.strictObject({
  kind: z
    .enum(adoptionKinds)
    .describe("Deployment or ReplicaSet (apps/v1), or the upstream operator's InplaceSet (extendeddeployment.io/v1beta1) once that operator is uninstalled."),
  name: z
    .string()
    .min(1, { message: 'must not be empty' })
    .max(253, { message: 'must be at most 253 characters' })
    .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, { message: 'must be a DNS subdomain (lower case letters, digits, "-" and ".")' })
    .describe('Its name, in the namespace of the ExtendedDeployment.'),
});

/** One region an ExtendedDeployment runs in. */
export const regionPlacement = z
  .strictObject({
    name: dnsLabel.describe('Name of a DeployRegion.'),
    replicas: intOrPercent
      .optional()
      .describe('Replicas in this region: an integer, or "N%" of spec.replicas. Unset: the region shares what the other regions leave, evenly.'),
    minReplicas: nonNegativeInt.optional().describe('Fewest replicas this region gets; minimums are satisfied first, in declared order.'),
    maxReplicas: nonNegativeInt.optional().describe('Most replicas this region gets; what it cannot take goes to later regions.'),
    partition: intOrPercent
      .optional()
      .describe(
        'Pods of this region that stay on the revision they ran when a rollout reaches them (a grey phase): an integer, or "N%" of the region\'s replicas rounded up. The rollout stops there, Healthy, with both revisions running; lowering it moves the difference on, within the budgets, and removing it finishes the rollout. ReplicaSet (and InplaceSet) regions only.',
      ),
    overrides: regionOverrides.optional(),
    adopt: adoptionSource
      .optional()
      .describe(
        "A running Deployment, ReplicaSet or upstream InplaceSet of this namespace whose pods this region takes over without restarting them (core/adoption): the agent moves them to the region's ReplicaSet a few at a time and scales the old workload down by as many, so the Ready count never drops, and the old workload ends at 0 replicas with no pods, for Git to delete. ReplicaSet (and InplaceSet) regions only.",
      ),
  })
  .meta({
    'x-kubernetes-validations': [
      {
        rule: '!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas',
        message: 'minReplicas must not exceed maxReplicas',
      },
    ],
  });

/** One member cluster of a fleet an ExtendedDeployment runs in: its share of spec.replicas, like a region's. */
export const clusterPlacement = z
  .strictObject({
    name: dnsLabel.describe('Name of a Cluster of the render (Cluster objects are read by edctl render and never applied).'),
    replicas: intOrPercent
      .optional()
      .describe(
        'Replicas in this cluster: an integer, or "N%" of spec.replicas. Unset: the cluster shares what the other clusters leave, evenly. Inside the cluster, its regions share them as they share spec.replicas without clusters.',
      ),
    minReplicas: nonNegativeInt.optional().describe('Fewest replicas this cluster gets; minimums are satisfied first, in declared order.'),
    maxReplicas: nonNegativeInt.optional().describe('Most replicas this cluster gets; what it cannot take goes to later clusters.'),
    overrides: regionOverrides.optional().describe("Typed changes to the pod template in every region of this cluster, applied before the region's own."),
  })
  .meta({
    'x-kubernetes-validations': [
      {
        rule: '!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas',
        message: 'minReplicas must not exceed maxReplicas',
      },
    ],
  });

/** One member of a fleet, as the render writes it into every member (spec.fleet.members). */
const fleetMember = z.strictObject({
  cluster: dnsLabel.describe('The member cluster.'),
  replicas: nonNegativeInt.describe("The member's share of the fleet's replicas."),
  wave: nonNegativeInt.describe('The wave the member belongs to, from 0.'),
});

/** What the render writes into each member's ExtendedDeployment: the fleet as that member sees it. */
export const fleetMembership = z
  .strictObject({
    name: dnsLabel.describe("The fleet: the Fleet object's name, or the ExtendedDeployment's when the render has none."),
    cluster: dnsLabel.describe('This member: the agent acts only when it equals its --cluster-name.'),
    wave: nonNegativeInt.describe("This member's wave, from 0."),
    release: z
      .string()
      .regex(/^[0-9a-f]{10}$/, { message: 'must be 10 lower-case hex digits' })
      .describe("Digest of every member's replicas and region revisions: identical in every member of one render."),
    members: z
      .array(fleetMember)
      .min(1, { message: 'needs at least one member' })
      .max(64, { message: 'supports at most 64 members' })
      .describe('Every member, in spec.clusters order.'),
  })
  .describe('Written by edctl render only (never in Git): which fleet, member, wave and release this rendering belongs to.');

/** One RFC 6902 operation of an upstream-style overrider. */
export const patchOperation = z.strictObject({
  path: z.string().min(1, { message: 'must not be empty' }).describe('JSON pointer into the pod template, e.g. /spec/containers/0/image.'),
  op: z.enum(['add', 'remove', 'replace']).describe('add, remove or replace.'),
  value: z.unknown().optional().meta({ 'x-kubernetes-preserve-unknown-fields': true }).describe('The value for add and replace: any JSON.'),
});

/** Raw RFC 6902 patches of one region's pod template (the upstream operator's `overriders`). */
export const regionPatches = z.strictObject({
  name: dnsLabel.describe('Region the patches apply to.'),
  overriders: z.array(patchOperation).describe('Operations applied in order, after the typed overrides.'),
});

const rollingUpdate = z
  .strictObject({
    maxSurge: intOrPercent.default('25%').describe('Pods over the desired count during an update (percentages round up).'),
    maxUnavailable: intOrPercent.default('25%').describe('Pods below the desired count during an update (percentages round down).'),
  })
  .describe("Budgets for updateStrategy RollingUpdate, with the Deployment controller's rounding.");

export const updateStrategyTypes = ['ReCreate', 'RollingUpdate', 'DeleteAllFirst', 'InPlaceIfPossible'] as const;

const updateStrategy = z
  .strictObject({
    type: z
      .enum(updateStrategyTypes)
      .default('ReCreate')
      .describe(
        'ReCreate: replace pods group by group (upgradeMode decides the order). RollingUpdate: replace within maxSurge/maxUnavailable. DeleteAllFirst: remove every old pod, then create the new ones. InPlaceIfPossible: swap images inside running pods when only images changed, replace otherwise.',
      ),
    gracePeriodSeconds: nonNegativeInt.default(5).describe('Seconds between taking a pod out of endpoints and swapping its image in place.'),
    rollingUpdate: rollingUpdate.optional(),
  })
  .prefault({});

const autoReschedule = z
  .strictObject({
    enable: z.boolean().default(false).describe('Move replicas away from a region whose pods stay unschedulable.'),
    timeoutSeconds: nonNegativeInt.default(60).describe('How long a pod may stay Unschedulable before it is moved.'),
    coolDownSeconds: nonNegativeInt.default(300).describe('How long a region that just lost pods to shortage is not chosen as a target.'),
  })
  .prefault({});

const faultMove = z
  .strictObject({
    enable: z.boolean().default(false).describe('Move replicas away from a region whose nodes fail.'),
    failureThreshold: intOrPercent.default('100%').describe('Failing nodes (count or share of the region) at which the region counts as Failed.'),
    tolerationSeconds: nonNegativeInt.default(30).describe('How long the threshold must hold before replicas move.'),
    maxReplicasPerMinute: intOrPercent.default('100%').describe('Most replicas moved per minute, as a count or a share of spec.replicas.'),
  })
  .prefault({});

/**
 * Whether an unvalidated strategy turns shortage or fault moves on, read through the schema (its defaults included),
 * so no caller keeps a copy of them. A malformed setting turns nothing on: such an object is invalid anyway.
 */
export function movesEnabled(strategy: unknown): boolean {
  const fields = strategy !== null && typeof strategy === 'object' ? (strategy as Record<string, unknown>) : {};
  return autoReschedule.safeParse(fields['autoReschedule']).data?.enable === true || faultMove.safeParse(fields['faultMove']).data?.enable === true;
}

const moveBack = z
  .strictObject({
    enable: z.boolean().default(true).describe('Return moved replicas once their region is healthy with room again.'),
    stabilizationSeconds: nonNegativeInt.default(300).describe('How long the region must stay healthy with room first.'),
  })
  .prefault({});

const approval = z
  .strictObject({
    revision: z
      .string()
      .min(1, { message: 'must not be empty' })
      .describe('The rollout revision being approved, as `edctl plan` prints it; an approval of another rollout is ignored.'),
    throughGroup: nonNegativeInt.describe('Groups up to and including this one may start without further confirmation.'),
  })
  .describe('Declarative approval a pull request can bump, instead of `edctl approve`.');

export const onUnreachableActions = ['Wait', 'Proceed'] as const;
export const failoverModes = ['Off', 'Additive'] as const;

/** How the members of a fleet follow each other (spec.clusters). Its defaults apply only with spec.clusters. */
export const fleetStrategy = z
  .strictObject({
    waves: z
      .array(z.array(dnsLabel).max(64, { message: 'supports at most 64 clusters' }))
      .max(64, { message: 'supports at most 64 waves' })
      .optional()
      .describe(
        'Clusters by name, wave by wave: the first group of a rollout in a cluster waits until every cluster of the earlier waves has completed it. Every cluster of spec.clusters in exactly one wave. Unset: one wave per cluster, in spec.clusters order.',
      ),
    minSuccessSeconds: nonNegativeInt
      .default(300)
      .describe('How long every cluster of the earlier waves must stay Healthy at the release before a wave starts (the soak).'),
    maxFailures: nonNegativeInt
      .default(0)
      .describe('Clusters of earlier waves that may be Degraded (or, with onUnreachable Proceed, unreachable) without holding a wave back.'),
    onUnreachable: z
      .strictObject({
        action: z
          .enum(onUnreachableActions)
          .default('Wait')
          .describe('Wait: an earlier cluster that cannot be read holds the wave. Proceed: one unreachable for afterSeconds counts as one of maxFailures.'),
        afterSeconds: nonNegativeInt.default(600).describe('How long an earlier cluster must stay unreachable before Proceed counts it as failed.'),
      })
      .prefault({})
      .describe('What a wave does when a cluster of an earlier wave cannot be read.'),
    approveWaves: z
      .array(nonNegativeInt)
      .max(64, { message: 'supports at most 64 entries' })
      .optional()
      .describe('Waves (by index, from 0) whose start needs an approval.'),
    failover: z
      .strictObject({
        mode: z
          .enum(failoverModes)
          .default('Off')
          .describe(
            "Off: a lost cluster's replicas are not run elsewhere. Additive: the other members add its replicas to their own, in proportion to their shares, until it is back.",
          ),
        toleranceSeconds: nonNegativeInt
          .default(120)
          .describe('How long a member must stay unreachable, without its agent, or with every region Failed before it counts as lost.'),
        stabilizationSeconds: nonNegativeInt
          .default(600)
          .describe('How long a lost member must be Healthy with its replicas available again before the others remove what they added.'),
      })
      .prefault({})
      .describe('Whether the members run the replicas of a lost member.'),
  })
  .describe('How the clusters of spec.clusters follow each other. Its defaults apply only with spec.clusters.');

export const rolloutStrategies = ['Beta', 'Group'] as const;
export const regionOrders = ['Parallel', 'Sequential'] as const;
export const upgradeModes = ['scaleOutPriority', 'scaleInPriority', 'scaleSimultaneously'] as const;

/** How a rollout proceeds. Every field has a default, also when `strategy` is omitted. */
export const rolloutStrategy = z
  .strictObject({
    batchSize: intOrPercent.default(1).describe("Pods per region each group adds: an integer, or a percentage of the region's replicas (at least 1)."),
    minReadySeconds: nonNegativeInt.default(5).describe('Seconds a new pod must be Ready before it counts as available.'),
    needWaitingForConfirm: z.boolean().default(false).describe('Stop after each group until the rollout is approved.'),
    needFirstConfirm: z.boolean().default(false).describe('With confirmation on: ask only at the first gate of each rollout.'),
    syncWaitTimeout: nonNegativeInt
      .default(0)
      .describe('Progress deadline per group in seconds; 0 means 300. When exceeded the rollout is Degraded and stops.'),
    rolloutStrategy: z.enum(rolloutStrategies).default('Beta').describe('Beta: the first group is one pod per region. Group: it is batchSize.'),
    pause: z.boolean().default(false).describe('Hold the rollout where it is until set back to false.'),
    regionOrder: z
      .enum(regionOrders)
      .optional()
      .describe(
        'Parallel: every region takes each group together. Sequential: one region at a time, in declared order. Default: Parallel, or Sequential with subsetType Deployment.',
      ),
    upgradeMode: z
      .enum(upgradeModes)
      .default('scaleOutPriority')
      .describe(
        'For ReCreate. scaleOutPriority: new pods first, never fewer available than desired. scaleInPriority: old pods first, never more pods than desired (scarce GPUs). scaleSimultaneously: both at once.',
      ),
    approval: approval.optional(),
    autoReschedule: autoReschedule.describe('Shortage moves.'),
    faultMove: faultMove.describe('Fault moves.'),
    moveBack: moveBack.describe('Returning moved replicas.'),
    updateStrategy: updateStrategy.describe('How a pod reaches the new revision.'),
    fleet: fleetStrategy.optional(),
    traffic: trafficStrategy.optional(),
  })
  .prefault({});

export const subsetTypes = ['ReplicaSet', 'Deployment', 'InplaceSet', 'StatefulSet'] as const;

/** One PersistentVolumeClaim template of StatefulSet regions (core/v1 PersistentVolumeClaim: name and spec). */
const volumeClaimTemplate = z
  .looseObject({
    metadata: z.looseObject({ name: dnsLabel.describe('Claim name: pods mount it by this name; claims are named `<name>-<statefulset>-<ordinal>`.') }),
    spec: z
      .looseObject({
        storageClassName: z.string().optional().describe('StorageClass of the claims; a region can override it (overrides.volumeClaims).'),
        accessModes: z.array(z.string()).optional(),
        resources: z.looseObject({ requests: z.record(z.string(), quantity).optional() }).optional(),
      })
      .describe('core/v1 PersistentVolumeClaimSpec.'),
  })
  .meta({ 'x-kubernetes-preserve-unknown-fields': true });

const claimRetention = z.enum(['Retain', 'Delete']);

/** What StatefulSet regions add to the pod template: a StatefulSet's own fields, the same in every region. */
export const statefulSetFields = z
  .strictObject({
    serviceName: dnsLabel
      .optional()
      .describe('The governing headless Service (in Git beside the ExtendedDeployment) that gives each pod a stable DNS name. Immutable in Kubernetes.'),
    podManagementPolicy: z
      .enum(['OrderedReady', 'Parallel'])
      .default('OrderedReady')
      .describe('How a region creates and removes pods when it scales: one at a time in ordinal order (OrderedReady) or all at once. Immutable in Kubernetes.'),
    volumeClaimTemplates: z
      .array(volumeClaimTemplate)
      .max(16, { message: 'supports at most 16 claim templates' })
      .optional()
      .describe("A claim per pod and template, made by the StatefulSet controller in the pod's region. Immutable in Kubernetes."),
    persistentVolumeClaimRetentionPolicy: z
      .strictObject({
        whenDeleted: claimRetention.default('Retain').describe("What happens to the claims when the region's StatefulSet is deleted."),
        whenScaled: claimRetention.default('Retain').describe('What happens to the claims of pods a region scales away (moves included).'),
      })
      .optional()
      .describe('Whether claims outlive their pods (Kubernetes 1.32+).'),
  })
  .describe('StatefulSet regions only: the fields of each regional StatefulSet beside the pod template.');

/** ExtendedDeployment spec: one application over several regions. */
export const extendedDeploymentSpec = z
  .strictObject({
    replicas: nonNegativeInt
      .optional()
      .describe("Total replicas over all regions. Omitted: the sum of the regions' integer replicas (percentages then need it)."),
    selector: labelSelector
      .meta({ 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'spec.selector is immutable' }] })
      .describe("Selects the application's pods; must match the template's labels. Immutable."),
    template: podTemplate,
    historyLimit: nonNegativeInt
      .default(5)
      .describe(
        "Older revisions kept besides the current one, for rollback: ControllerRevisions the agent records (edctl history lists them; 0 keeps only the current). With subsetType Deployment, also the Deployments' revisionHistoryLimit.",
      ),
    subsetType: z
      .enum(subsetTypes)
      .default('ReplicaSet')
      .meta({ 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'spec.subsetType is immutable' }] })
      .describe(
        'Regional workload kind: ReplicaSet (default), Deployment (compat mode), InplaceSet (upstream: a ReplicaSet with in-place updates on), or StatefulSet (stable pod names and a claim per pod; groups are partition steps). Immutable.',
      ),
    statefulSet: statefulSetFields.optional(),
    regions: z
      .array(regionPlacement)
      .min(1, { message: 'needs at least one region' })
      .max(64, { message: 'supports at most 64 regions' })
      .describe('Regions to run in, in priority order.'),
    overriders: z
      .array(regionPatches)
      .max(64, { message: 'supports at most 64 entries' })
      .optional()
      .describe('Raw RFC 6902 patches per region, applied after the typed overrides.'),
    strategy: rolloutStrategy.describe('How rollouts proceed.'),
    clusters: z
      .array(clusterPlacement)
      .min(1, { message: 'needs at least one cluster' })
      .max(64, { message: 'supports at most 64 clusters' })
      .optional()
      .describe(
        "Member clusters to run in, each a Cluster of the render: edctl render splits spec.replicas over them and writes each cluster's own ExtendedDeployment (its share, its regions, spec.fleet) under `clusters/<name>/`.",
      ),
    fleet: fleetMembership.optional(),
  })
  .meta({
    'x-kubernetes-validations': [
      { rule: 'self.regions.all(r, self.regions.exists_one(s, s.name == r.name))', message: 'region names must be unique' },
      {
        rule: '!has(self.clusters) || self.clusters.all(c, self.clusters.exists_one(d, d.name == c.name))',
        message: 'cluster names must be unique',
      },
      {
        rule: '!has(self.overriders) || self.overriders.all(o, self.regions.exists(r, r.name == o.name))',
        message: 'every overriders entry must name a region of spec.regions',
      },
      {
        rule: 'has(self.replicas) || self.regions.all(r, !has(r.replicas) || type(r.replicas) == int)',
        message: 'percentage replicas need spec.replicas',
      },
      {
        rule: "!(self.subsetType == 'Deployment' && self.strategy.updateStrategy.type == 'InPlaceIfPossible')",
        message: 'in-place updates need subsetType ReplicaSet or InplaceSet',
      },
      {
        rule: "!has(self.statefulSet) || self.subsetType == 'StatefulSet'",
        message: 'spec.statefulSet needs subsetType StatefulSet',
      },
      {
        rule: "self.subsetType != 'StatefulSet' || self.strategy.updateStrategy.type == 'ReCreate'",
        message: 'StatefulSet regions are replaced one pod at a time by the StatefulSet controller: updateStrategy.type must be ReCreate',
      },
      {
        rule: "self.subsetType != 'StatefulSet' || self.regions.all(r, !has(r.partition))",
        message: "StatefulSet regions take no partition: the agent owns the StatefulSet's own",
      },
    ],
  });

// Status shapes are open (z.object): fields a newer agent writes are dropped on reading, not an error, so an older
// edctl, health check or agent (during an upgrade) still reads the status it knows.
const regionStatus = z.object({
  name: z.string().describe('Region name.'),
  desired: z.number().int().optional().describe('Replicas this region should run, moves included.'),
  current: z.number().int().optional().describe('Pods that exist.'),
  updated: z.number().int().optional().describe('Pods at the target revision.'),
  ready: z.number().int().optional().describe('Ready pods.'),
  available: z.number().int().optional().describe('Pods Ready for minReadySeconds.'),
  revision: z.string().optional().describe('Target revision of the region.'),
  movedIn: z.number().int().optional().describe('Replicas moved here from other regions.'),
  movedOut: z.number().int().optional().describe('Replicas moved away from here.'),
  healthyWithRoomSince: z
    .string()
    .optional()
    .describe('While replicas are away: since when (RFC 3339) the region has been healthy with room for them (move-back stabilization).'),
  swappedInPlace: z.number().int().optional().describe('Pods of this rollout updated in place.'),
  replaced: z.number().int().optional().describe('Pods of this rollout replaced.'),
  swapping: z.number().int().optional().describe('Pods in the middle of an in-place swap (draining or restarting); absent when none.'),
  availableAt: z
    .string()
    .optional()
    .describe('While Ready pods wait out minReadySeconds: when (RFC 3339) the last of them counts as available; absent when none waits.'),
});

const move = z.object({
  from: z.string().describe('Region the replicas left.'),
  to: z.string().describe('Region that runs them meanwhile.'),
  count: z.number().int().describe('Replicas still away.'),
  returning: z.number().int().optional().describe('Replicas given back to `from` that `to` keeps until they are available there.'),
  reason: z.enum(['Shortage', 'Fault']).describe('Why they moved.'),
  since: z.string().describe('When they moved (RFC 3339).'),
});

export const adoptionPhases = ['Waiting', 'Moving', 'Adopted'] as const;

const adoption = z.object({
  region: z.string().describe('The adopting region.'),
  source: z.string().describe('The workload adopted from, as Kind/name.'),
  phase: z
    .enum(adoptionPhases)
    .describe(
      "Waiting: the adoption cannot move a pod yet (message says why). Moving: pods are being moved; pod creation by the region's ReplicaSet and by `frozen` is refused meanwhile. Adopted: done, the old workload runs no pod.",
    ),
  frozen: z
    .array(z.string())
    .optional()
    .describe("While Moving: uids of the old workload's ReplicaSets, which may create no pod (the adoption freeze admission policy reads this)."),
  moved: z.number().int().optional().describe("Pods the region's ReplicaSet controls so far."),
  message: z.string().optional().describe('Why it waits, or how far it is.'),
});

export const fleetGateStates = ['Open', 'Waiting'] as const;
export const fleetGateReasons = ['PredecessorNotReady', 'PredecessorDegraded', 'PredecessorUnreachable', 'Soaking', 'WaitingForApproval'] as const;

/** What this member's agent observed of the other members of its fleet. */
const fleetPeer = z.object({
  cluster: z.string().describe('The member observed.'),
  healthySince: z.string().optional().describe("When (RFC 3339) this agent first saw it Healthy at this member's release: the start of the soak."),
  healthyRelease: z
    .string()
    .optional()
    .describe('The release it was Healthy at since healthySince: a soak belongs to one release, and another release starts it anew.'),
  unreachableSince: z.string().optional().describe('When (RFC 3339) reading it first failed; cleared once it is read again.'),
  lostSince: z.string().optional().describe('Failover: since when (RFC 3339) it counts as lost.'),
});

/** Replicas this member runs for a lost member (failover Additive). */
const fleetAddition = z.object({
  cluster: z.string().describe('The lost member.'),
  replicas: z.number().int().describe('Replicas added here for it.'),
  since: z.string().describe('When (RFC 3339) they were added.'),
  returnedSince: z
    .string()
    .optional()
    .describe('Since when (RFC 3339) the lost member has been back (reachable, Healthy, its replicas available): the stabilization start.'),
});

/** The fleet as this member's agent sees it (spec.fleet). */
const fleetStatus = z.object({
  release: z.string().optional().describe('The release (spec.fleet.release) this cluster has completed its rollout of: Healthy at it.'),
  regionsFailed: z
    .boolean()
    .optional()
    .describe(
      "True while every region of this member is Failed (its nodes down): the API answers but the capacity is gone, so other members' failover counts it lost.",
    ),
  gate: z
    .object({
      state: z.enum(fleetGateStates).describe('Open: the rollout may start its first group. Waiting: it waits for earlier waves (reason says why).'),
      reason: z.enum(fleetGateReasons).optional().describe('Why the gate waits.'),
      message: z.string().optional().describe('A sentence for people: which member, since when, until when.'),
    })
    .optional()
    .describe("The wave gate before this member's first group."),
  peers: z.array(fleetPeer).optional().describe('One entry per member of an earlier wave (with failover, per other member).'),
  additions: z.array(fleetAddition).optional().describe('Failover: replicas this member runs for lost members.'),
  share: z
    .number()
    .int()
    .optional()
    .describe(
      'The replicas this member runs as its share of the fleet (before failover additions): spec.replicas, or more while a smaller share waits for the other members to run theirs (handover).',
    ),
  handover: z
    .object({
      replicas: z.number().int().describe('The rendered share this member goes down to once every other member runs its own.'),
      since: z.string().describe('When (RFC 3339) this agent started to hold it.'),
      waitingFor: z.array(z.string()).describe('The members whose share is not yet available at this release.'),
      message: z.string().describe('What each of them lacks.'),
    })
    .optional()
    .describe('Make-before-break: while Git moved replicas away from this member, it keeps them until the other members run their new shares.'),
});

/** ExtendedDeployment status, written only by the agent. */
export const extendedDeploymentStatus = z.object({
  observedGeneration: z.number().int().optional().describe('The spec generation this status describes.'),
  phase: z.enum(['Progressing', 'Paused', 'WaitingForConfirmation', 'Healthy', 'Degraded']).optional().describe('Where the rollout stands.'),
  replicas: z.number().int().optional().describe('Pods over all regions (scale subresource).'),
  labelSelector: z.string().optional().describe('The selector in string form (scale subresource).'),
  revision: z.string().optional().describe('The rollout revision being rolled out.'),
  rolloutRegions: z.array(z.string()).optional().describe('Regions the rollout changes, fixed when it starts.'),
  currentGroup: z.number().int().optional().describe('The group in progress, from 1.'),
  totalGroups: z.number().int().optional().describe('Groups this rollout takes.'),
  groups: z.string().optional().describe('currentGroup/totalGroups, for kubectl.'),
  overview: z.string().optional().describe('Per-region pods over desired, e.g. "[Normal]amd: 6/6; arm: 2/4".'),
  lastGroupStartTime: z.string().optional().describe('When the current group started (RFC 3339).'),
  rolloutStartTime: z
    .string()
    .optional()
    .describe('When the rollout of `revision` started (RFC 3339): pods created since then at the target revision count as replaced.'),
  regions: z.array(regionStatus).optional().describe('Per-region counts, in declared order.'),
  moves: z.array(move).optional().describe('Replicas currently running away from their region.'),
  adoptions: z
    .array(adoption)
    .optional()
    .describe("One entry per region with `adopt`: how far its adoption is. A region's ReplicaSet may create pods only once its entry is Adopted."),
  conditions: z.array(condition).optional().describe('Progressing, Available, Moves and others.'),
  fleet: fleetStatus.optional().describe('With spec.fleet: the wave gate, what this agent saw of the other members, and failover additions.'),
  traffic: trafficStatus.optional().describe("Mode Weighted: the weights of the agent's HTTPRoute, whether they are applied, the drains."),
  analysis: analysisStatus.optional().describe('The analysis of the current group barrier: per metric the outcome and the last samples.'),
});

/** An ExtendedDeployment object (namespaced). */
export const extendedDeployment = z.strictObject({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal(ED_KIND),
  metadata: objectMeta.extend({ name: dnsLabel, namespace: dnsLabel.optional() }),
  spec: extendedDeploymentSpec,
  status: extendedDeploymentStatus.optional(),
});

/** An ExtendedDeployment as written in Git (input form). */
export type ExtendedDeploymentInput = z.input<typeof extendedDeployment>;
/** A validated ExtendedDeployment with every default applied. */
export type ExtendedDeployment = z.output<typeof extendedDeployment>;
/** The spec with defaults applied. */
export type ExtendedDeploymentSpec = z.output<typeof extendedDeploymentSpec>;
/** The spec as written in Git. */
export type ExtendedDeploymentSpecInput = z.input<typeof extendedDeploymentSpec>;
/** One region entry with defaults applied. */
export type RegionPlacement = z.output<typeof regionPlacement>;
/** Typed per-region overrides. */
export type RegionOverrides = z.output<typeof regionOverrides>;
/** Raw per-region patches. */
export type RegionPatches = z.output<typeof regionPatches>;
/** Rollout strategy with defaults applied. */
export type RolloutStrategy = z.output<typeof rolloutStrategy>;
/** The pod template as the schema sees it. */
export type PodTemplate = z.output<typeof podTemplate>;
/** ExtendedDeployment status. */
export type ExtendedDeploymentStatus = z.output<typeof extendedDeploymentStatus>;
/** A region's `adopt` reference. */
export type AdoptionSource = z.output<typeof adoptionSource>;
/** How far one region's adoption is (status.adoptions). */
export type AdoptionStatus = z.output<typeof adoption>;
/** The StatefulSet fields of StatefulSet regions, defaults applied. */
export type StatefulSetFields = z.output<typeof statefulSetFields>;
/** One claim template of StatefulSet regions. */
export type VolumeClaimTemplate = NonNullable<StatefulSetFields['volumeClaimTemplates']>[number];
/** A region's changes to one claim template. */
export type ClaimOverride = NonNullable<RegionOverrides['volumeClaims']>[string];
/** One member cluster of spec.clusters, defaults applied. */
export type ClusterPlacement = z.output<typeof clusterPlacement>;
/** The fleet rollout strategy (spec.strategy.fleet) with defaults applied. */
export type FleetStrategy = z.output<typeof fleetStrategy>;
/** The render-written spec.fleet. */
export type FleetMembership = z.output<typeof fleetMembership>;
/** status.fleet, written by the agent. */
export type FleetStatus = z.output<typeof fleetStatus>;
