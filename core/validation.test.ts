import { describe, expect, it } from 'vitest';
import { API_VERSION } from './api/identity.js';
import { formatProblem, type Problem } from './problems.js';
import { parseExtendedDeployment } from './parse.js';
import { renderSet } from './render.js';
import { regionReferenceProblems } from './validate.js';

// Issue 2: validation reports every error at once, each naming its object and field path. Every case starts from the
// same valid set (three DeployRegions with disjoint labels and the ExtendedDeployment shop/web), changes one thing
// (or a few), renders the set and compares the exact formatted lines.

// The objects are plain JSON as read from YAML; cases poke into them freely, writing values of the wrong type on
// purpose (validation is what is under test), which no type short of any admits.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

interface RenderInput {
  regions: Json[];
  ed: Json;
  /** Objects rendered after the base ones. */
  extra: unknown[];
}

function deployRegion(name: string, matchLabels: Record<string, string>): Json {
  return { apiVersion: API_VERSION, kind: 'DeployRegion', metadata: { name }, spec: { matchLabels } };
}

function base(): RenderInput {
  return {
    regions: [
      deployRegion('amd', { 'kubernetes.io/arch': 'amd64' }),
      deployRegion('arm', { 'kubernetes.io/arch': 'arm64' }),
      deployRegion('ppc', { 'kubernetes.io/arch': 'ppc64le' }),
    ],
    ed: {
      apiVersion: API_VERSION,
      kind: 'ExtendedDeployment',
      metadata: { name: 'web', namespace: 'shop' },
      spec: {
        replicas: 6,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'shop/web:1.0' }] } },
        regions: [{ name: 'amd' }, { name: 'arm' }, { name: 'ppc' }],
      },
    },
    extra: [],
  };
}

function objectsOf(mutate: (input: RenderInput) => void): unknown[] {
  const input = base();
  mutate(input);
  return [...input.regions, input.ed, ...input.extra];
}

function problemsOf(mutate: (input: RenderInput) => void): readonly Problem[] {
  const result = renderSet(objectsOf(mutate));
  return result.ok ? [] : result.problems;
}

const ED = 'ExtendedDeployment shop/web';
const DNS = 'must be a DNS label: lower-case letters, digits and "-", starting and ending with a letter or digit';
const overlap = (i: number, name: string, other: string, node: string) =>
  `${ED}: spec.regions[${i}].name: DeployRegion "${name}" may select the same nodes as "${other}": no label key rules out both, so a node labelled ${node} would belong to both`;
const patches = (...overriders: Json[]) => [{ name: 'arm', overriders }];

interface Case {
  name: string;
  mutate: (input: RenderInput) => void;
  expected: string[];
}

const cases: Case[] = [
  // Names
  {
    name: 'ExtendedDeployment name with upper case',
    mutate: ({ ed }) => (ed.metadata.name = 'Web'),
    expected: [`ExtendedDeployment shop/Web: metadata.name: ${DNS}`],
  },
  {
    name: 'ExtendedDeployment name longer than 63 characters',
    mutate: ({ ed }) => (ed.metadata.name = 'w'.repeat(64)),
    expected: [`ExtendedDeployment shop/${'w'.repeat(64)}: metadata.name: must be at most 63 characters`],
  },
  {
    name: 'namespace that is not a DNS label',
    mutate: ({ ed }) => (ed.metadata.namespace = 'Shop'),
    expected: [`ExtendedDeployment Shop/web: metadata.namespace: ${DNS}`],
  },
  {
    name: 'region name in spec.regions that is not a DNS label',
    mutate: ({ ed }) => (ed.spec.regions[1].name = 'Arm_64'),
    expected: [`${ED}: spec.regions[1].name: ${DNS}`],
  },
  {
    name: 'DeployRegion with a name that is not a DNS label',
    mutate: ({ regions }) => (regions[0].metadata.name = 'AMD'),
    expected: [`DeployRegion AMD: metadata.name: ${DNS}`, `${ED}: spec.regions[0].name: DeployRegion "amd" not found (known: arm, ppc)`],
  },
  {
    name: 'DeployRegion with empty matchLabels',
    mutate: ({ regions }) => (regions[0].spec.matchLabels = {}),
    expected: [
      'DeployRegion amd: spec.matchLabels: must name at least one label (or a requirement in matchExpressions)',
      `${ED}: spec.regions[0].name: DeployRegion "amd" is invalid (see its own problems)`,
    ],
  },
  {
    name: 'DeployRegion with a wrong apiVersion',
    mutate: ({ regions }) => (regions[0].apiVersion = 'apps/v1'),
    expected: [
      `DeployRegion amd: apiVersion: must be ${API_VERSION}, not "apps/v1"`,
      `${ED}: spec.regions[0].name: DeployRegion "amd" is invalid (see its own problems)`,
    ],
  },
  {
    name: 'ExtendedDeployment with a wrong apiVersion',
    mutate: ({ ed }) => (ed.apiVersion = 'extendeddeployment.io/v1'),
    expected: [`${ED}: apiVersion: must be ${API_VERSION}, not "extendeddeployment.io/v1"`],
  },
  {
    name: 'the same ExtendedDeployment twice in one render',
    mutate: (input) => input.extra.push(structuredClone(input.ed)),
    expected: [`${ED}: metadata.name: is defined twice in this render`],
  },
  {
    name: 'the same DeployRegion twice in one render',
    mutate: (input) => input.extra.push(structuredClone(input.regions[0])),
    expected: ['DeployRegion amd: metadata.name: is defined twice in this render'],
  },

  // Selector
  { name: 'missing spec.selector', mutate: ({ ed }) => delete ed.spec.selector, expected: [`${ED}: spec.selector: is required`] },
  {
    name: 'empty selector',
    mutate: ({ ed }) => (ed.spec.selector = {}),
    expected: [`${ED}: spec.selector: must select something: set matchLabels or matchExpressions`],
  },
  {
    name: 'selector not matching the template labels',
    mutate: ({ ed }) => (ed.spec.selector.matchLabels.app = 'shop'),
    expected: [`${ED}: spec.template.metadata.labels: do not match spec.selector`],
  },
  {
    name: 'selector with an unknown operator',
    mutate: ({ ed }) => (ed.spec.selector = { matchExpressions: [{ key: 'app', operator: 'Equals', values: ['web'] }] }),
    expected: [`${ED}: spec.selector.matchExpressions[0].operator: must be one of "In", "NotIn", "Exists", "DoesNotExist"`],
  },
  {
    name: 'typed label override that makes the selector stop matching',
    mutate: ({ ed }) => (ed.spec.regions[1].overrides = { labels: { app: 'web-arm' } }),
    expected: [`${ED}: spec.regions[1].overrides.labels: make the pod labels of region arm stop matching spec.selector`],
  },
  {
    name: 'patch that removes a selected label',
    mutate: ({ ed }) => (ed.spec.overriders = patches({ op: 'remove', path: '/metadata/labels/app' })),
    expected: [`${ED}: spec.overriders[0].overriders: make the pod labels of region arm stop matching spec.selector`],
  },
  {
    name: 'template label key that is not a label key',
    mutate: ({ ed }) => (ed.spec.template.metadata.labels['bad key'] = 'x'),
    expected: [`${ED}: spec.template.metadata.labels["bad key"]: is not a valid label key`],
  },
  {
    name: 'template label value that is not a label value',
    mutate: ({ ed }) => (ed.spec.template.metadata.labels.tier = '-x'),
    expected: [`${ED}: spec.template.metadata.labels.tier: is not a valid label value`],
  },

  // Unknown fields and types
  {
    name: 'unknown field in spec (typo "replica")',
    mutate: ({ ed }) => (ed.spec.replica = 3),
    expected: [`${ED}: spec.replica: unknown field (did you mean "replicas"?)`],
  },
  {
    name: 'unknown field inside strategy',
    mutate: ({ ed }) => (ed.spec.strategy = { batchsize: 2 }),
    expected: [`${ED}: spec.strategy.batchsize: unknown field (did you mean "batchSize"?)`],
  },
  {
    name: 'unknown field inside a region override',
    mutate: ({ ed }) => (ed.spec.regions[1].overrides = { image: { app: 'shop/web:1.0-arm64' } }),
    expected: [`${ED}: spec.regions[1].overrides.image: unknown field (did you mean "images"?)`],
  },
  {
    name: 'replicas of the wrong type ("3")',
    mutate: ({ ed }) => (ed.spec.replicas = '3'),
    expected: [`${ED}: spec.replicas: must be a number, not the string "3"`],
  },
  { name: 'negative replicas', mutate: ({ ed }) => (ed.spec.replicas = -1), expected: [`${ED}: spec.replicas: must not be negative`] },
  {
    name: 'env value of the wrong type',
    mutate: ({ ed }) => (ed.spec.regions[1].overrides = { env: { app: { PORT: 8080 } } }),
    expected: [`${ED}: spec.regions[1].overrides.env.app.PORT: must be a string, not the number 8080`],
  },
  {
    name: 'node affinity that is not an object',
    mutate: ({ ed }) => (ed.spec.template.spec.affinity = 'arm64'),
    expected: [`${ED}: spec.template.spec.affinity: must be an object, not the string "arm64"`],
  },

  // Percentages
  {
    name: 'region replicas "150%"',
    mutate: ({ ed }) => (ed.spec.regions[1].replicas = '150%'),
    expected: [`${ED}: spec.regions[1].replicas: "150%" exceeds 100%`],
  },
  {
    name: 'region replicas "abc"',
    mutate: ({ ed }) => (ed.spec.regions[1].replicas = 'abc'),
    expected: [`${ED}: spec.regions[1].replicas: "abc" is neither an integer nor a percentage like "30%"`],
  },
  {
    name: 'region replicas "12.5%"',
    mutate: ({ ed }) => (ed.spec.regions[1].replicas = '12.5%'),
    expected: [`${ED}: spec.regions[1].replicas: "12.5%" is neither an integer nor a percentage like "30%"`],
  },
  {
    name: 'region replicas 1.5',
    mutate: ({ ed }) => (ed.spec.regions[1].replicas = 1.5),
    expected: [`${ED}: spec.regions[1].replicas: 1.5 is neither an integer nor a percentage like "30%"`],
  },
  {
    name: 'region replicas true',
    mutate: ({ ed }) => (ed.spec.regions[1].replicas = true),
    expected: [`${ED}: spec.regions[1].replicas: must be an integer or a percentage like "30%"`],
  },
  {
    name: 'negative region replicas',
    mutate: ({ ed }) => (ed.spec.regions[1].replicas = -2),
    expected: [`${ED}: spec.regions[1].replicas: must not be negative`],
  },
  {
    name: 'percentage without spec.replicas',
    mutate: ({ ed }) => {
      delete ed.spec.replicas;
      ed.spec.regions[0].replicas = 2;
      ed.spec.regions[1].replicas = '50%';
    },
    expected: [`${ED}: spec.regions[1].replicas: "50%" needs spec.replicas to take a share of`],
  },

  // Sum rules
  {
    name: 'percentages summing over 100%',
    mutate: ({ ed }) => {
      ed.spec.regions[0].replicas = '60%';
      ed.spec.regions[1].replicas = '50%';
    },
    expected: [`${ED}: spec.regions: percentages add up to 110%, more than 100%`],
  },
  {
    name: 'every region a percentage, summing to 90%',
    mutate: ({ ed }) => ed.spec.regions.forEach((r: Json) => (r.replicas = '30%')),
    expected: [`${ED}: spec.regions: every region has a fixed count, but they add up to 5, not spec.replicas (6)`],
  },
  {
    name: 'integers over spec.replicas',
    mutate: ({ ed }) => {
      ed.spec.regions[0].replicas = 4;
      ed.spec.regions[1].replicas = 3;
    },
    expected: [`${ED}: spec.regions: integer replicas add up to 7, more than spec.replicas (6)`],
  },
  {
    name: 'every region fixed, not summing to spec.replicas',
    mutate: ({ ed }) => ed.spec.regions.forEach((r: Json, i: number) => (r.replicas = [1, 2, 2][i])),
    expected: [`${ED}: spec.regions: every region has a fixed count, but they add up to 5, not spec.replicas (6)`],
  },
  {
    name: 'integer replicas below the region minReplicas',
    mutate: ({ ed }) => Object.assign(ed.spec.regions[0], { replicas: 1, minReplicas: 2 }),
    expected: [`${ED}: spec.regions[0].replicas: 1 is below minReplicas 2`],
  },
  {
    name: 'minReplicas greater than maxReplicas',
    mutate: ({ ed }) => Object.assign(ed.spec.regions[1], { minReplicas: 3, maxReplicas: 2 }),
    expected: [`${ED}: spec.regions[1].minReplicas: 3 exceeds maxReplicas 2`],
  },
  {
    name: 'minReplicas summing over spec.replicas',
    mutate: ({ ed }) => {
      ed.spec.regions[0].minReplicas = 3;
      ed.spec.regions[1].minReplicas = 4;
    },
    expected: [`${ED}: spec.regions: minReplicas add up to 7, more than the 6 replicas these regions share`],
  },
  {
    name: 'maxReplicas summing under spec.replicas',
    mutate: ({ ed }) => ed.spec.regions.forEach((r: Json) => (r.maxReplicas = 1)),
    expected: [`${ED}: spec.regions: maxReplicas add up to 3, fewer than the 6 replicas these regions share`],
  },

  // Regions
  { name: 'no regions', mutate: ({ ed }) => (ed.spec.regions = []), expected: [`${ED}: spec.regions: needs at least one region`] },
  {
    name: 'duplicate region in spec.regions',
    mutate: ({ ed }) => (ed.spec.regions[2].name = 'amd'),
    expected: [`${ED}: spec.regions[2].name: region "amd" is listed twice (first at spec.regions[0])`],
  },
  {
    name: 'unknown region (DeployRegion missing)',
    mutate: ({ regions }) => regions.pop(),
    expected: [`${ED}: spec.regions[2].name: DeployRegion "ppc" not found (known: amd, arm)`],
  },
  {
    name: 'overlapping regions: identical labels',
    mutate: ({ regions }) => (regions[2].spec.matchLabels = { 'kubernetes.io/arch': 'amd64' }),
    expected: [overlap(2, 'ppc', 'amd', 'kubernetes.io/arch=amd64')],
  },
  {
    name: 'overlapping regions: subset of labels',
    mutate: ({ regions }) => (regions[2].spec.matchLabels = { 'kubernetes.io/arch': 'amd64', pool: 'big' }),
    expected: [overlap(2, 'ppc', 'amd', 'kubernetes.io/arch=amd64, pool=big')],
  },
  {
    name: 'overlapping regions: different label keys',
    mutate: ({ regions }) => (regions[2].spec.matchLabels = { 'topology.kubernetes.io/zone': 'a' }),
    expected: [
      overlap(2, 'ppc', 'amd', 'kubernetes.io/arch=amd64, topology.kubernetes.io/zone=a'),
      overlap(2, 'ppc', 'arm', 'kubernetes.io/arch=arm64, topology.kubernetes.io/zone=a'),
    ],
  },
  {
    name: 'overlapping regions: expressions that share a node',
    mutate: ({ regions }) => {
      regions[2].spec.matchLabels = {};
      regions[2].spec.matchExpressions = [{ key: 'kubernetes.io/arch', operator: 'NotIn', values: ['arm64'] }];
    },
    expected: [overlap(2, 'ppc', 'amd', 'kubernetes.io/arch=amd64')],
  },
  {
    name: 'a region requirement without values for In, with values for Exists',
    mutate: ({ regions }) => {
      regions[2].spec.matchExpressions = [
        { key: 'zone', operator: 'In' },
        { key: 'gpu', operator: 'Exists', values: ['a100'] },
      ];
    },
    expected: [
      'DeployRegion ppc: spec.matchExpressions[0].values: must name at least one value for In',
      'DeployRegion ppc: spec.matchExpressions[1].values: must be empty for Exists',
      `${ED}: spec.regions[2].name: DeployRegion "ppc" is invalid (see its own problems)`,
    ],
  },
  {
    name: 'template nodeSelector excluding regions',
    mutate: ({ ed }) => (ed.spec.template.spec.nodeSelector = { 'kubernetes.io/arch': 'amd64' }),
    expected: [
      `${ED}: spec.regions[1].name: the template's nodeSelector kubernetes.io/arch=amd64 excludes every node of region arm (kubernetes.io/arch=arm64)`,
      `${ED}: spec.regions[2].name: the template's nodeSelector kubernetes.io/arch=amd64 excludes every node of region ppc (kubernetes.io/arch=ppc64le)`,
    ],
  },
  {
    name: 'template node affinity excluding a region',
    mutate: ({ ed }) =>
      (ed.spec.template.spec.affinity = {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'NotIn', values: ['arm64'] }] }],
          },
        },
      }),
    expected: [`${ED}: spec.regions[1].name: every required node-selector term of the template excludes the nodes of region arm`],
  },

  // Overrides and patches
  {
    name: 'overriders for an unknown region',
    mutate: ({ ed }) => (ed.spec.overriders = [{ name: 'gpu', overriders: [] }]),
    expected: [`${ED}: spec.overriders[0].name: "gpu" is not a region of this ExtendedDeployment`],
  },
  {
    name: 'duplicate overriders entry',
    mutate: ({ ed }) => (ed.spec.overriders = [...patches(), ...patches()]),
    expected: [`${ED}: spec.overriders[1].name: second entry for region "arm" (first at spec.overriders[0]); merge them`],
  },
  {
    name: 'patch that does not apply (remove of a missing path)',
    mutate: ({ ed }) =>
      (ed.spec.overriders = patches(
        { op: 'replace', path: '/spec/containers/0/image', value: 'shop/web:1.0-arm64' },
        { op: 'remove', path: '/spec/containers/0/args' },
      )),
    expected: [`${ED}: spec.overriders[0].overriders[1]: remove /spec/containers/0/args does not apply: the path does not exist in the template`],
  },
  {
    name: 'patch path without a leading slash',
    mutate: ({ ed }) => (ed.spec.overriders = patches({ op: 'replace', path: 'spec/containers/0/image', value: 'shop/web:1.0-arm64' })),
    expected: [
      `${ED}: spec.overriders[0].overriders[0]: replace spec/containers/0/image does not apply: the path is not a JSON pointer (it must start with "/")`,
    ],
  },
  {
    name: 'patch add without a value',
    mutate: ({ ed }) => (ed.spec.overriders = patches({ op: 'add', path: '/spec/hostNetwork' })),
    expected: [`${ED}: spec.overriders[0].overriders[0].value: add /spec/hostNetwork needs a value`],
  },
  {
    name: 'patch with an unknown op',
    mutate: ({ ed }) => (ed.spec.overriders = patches({ op: 'move', path: '/spec/hostNetwork' })),
    expected: [`${ED}: spec.overriders[0].overriders[0].op: must be one of "add", "remove", "replace"`],
  },
  {
    name: 'patch that leaves the template invalid',
    mutate: ({ ed }) => (ed.spec.overriders = patches({ op: 'remove', path: '/spec/containers/0/name' })),
    expected: [`${ED}: spec.overriders[0].overriders: leave the pod template of region arm invalid: spec.containers[0].name: is required`],
  },
  {
    name: 'typed override for an unknown container',
    mutate: ({ ed }) => (ed.spec.regions[1].overrides = { images: { sidecar: 'envoy:1.30' } }),
    expected: [`${ED}: spec.regions[1].overrides.images.sidecar: no container named "sidecar" in the template (containers: app)`],
  },
  {
    name: 'typed override setting a reserved label',
    mutate: ({ ed }) => (ed.spec.regions[1].overrides = { labels: { 'extendeddeployment.io/region': 'amd' } }),
    expected: [`${ED}: spec.regions[1].overrides.labels["extendeddeployment.io/region"]: is set by the renderer and cannot be overridden`],
  },
  {
    name: 'typed override with an empty image',
    mutate: ({ ed }) => (ed.spec.regions[1].overrides = { images: { app: '' } }),
    expected: [`${ED}: spec.regions[1].overrides.images.app: must not be empty`],
  },
  {
    name: 'empty image after a patch',
    mutate: ({ ed }) => (ed.spec.overriders = patches({ op: 'remove', path: '/spec/containers/0/image' })),
    expected: [`${ED}: spec.overriders[0].overriders: leave container "app" of region arm without an image`],
  },
  {
    name: 'template without an image and a region that sets none',
    mutate: ({ ed }) => {
      delete ed.spec.template.spec.containers[0].image;
      ed.spec.regions[0].overrides = { images: { app: 'shop/web:1.0-amd64' } };
      ed.spec.regions[1].overrides = { images: { app: 'shop/web:1.0-arm64' } };
    },
    expected: [`${ED}: spec.template.spec.containers[0].image: is not set, and region ppc sets none in overrides.images`],
  },

  // Template
  {
    name: 'template with no containers',
    mutate: ({ ed }) => (ed.spec.template.spec.containers = []),
    expected: [`${ED}: spec.template.spec.containers: needs at least one container`],
  },
  {
    name: 'template without a containers field',
    mutate: ({ ed }) => delete ed.spec.template.spec.containers,
    expected: [`${ED}: spec.template.spec.containers: is required`],
  },
  {
    name: 'duplicate container names',
    mutate: ({ ed }) => ed.spec.template.spec.containers.push({ name: 'app', image: 'envoy:1.30' }),
    expected: [`${ED}: spec.template.spec.containers[1].name: container name "app" is used twice`],
  },
  {
    name: 'init container with the name of a container',
    mutate: ({ ed }) => (ed.spec.template.spec.initContainers = [{ name: 'app', image: 'busybox:1.36' }]),
    expected: [`${ED}: spec.template.spec.initContainers[0].name: container name "app" is used twice`],
  },
  {
    name: 'restartPolicy Never',
    mutate: ({ ed }) => (ed.spec.template.spec.restartPolicy = 'Never'),
    expected: [`${ED}: spec.template.spec.restartPolicy: must be Always for a long-running workload, not "Never"`],
  },

  // Strategy
  {
    name: 'InPlaceIfPossible with subsetType Deployment',
    mutate: ({ ed }) => {
      ed.spec.subsetType = 'Deployment';
      ed.spec.strategy = { updateStrategy: { type: 'InPlaceIfPossible' } };
    },
    expected: [`${ED}: spec.strategy.updateStrategy.type: InPlaceIfPossible needs subsetType ReplicaSet (or InplaceSet); native Deployments replace pods`],
  },
  {
    name: 'partition with subsetType Deployment, and one above 100%',
    mutate: ({ ed }) => {
      ed.spec.subsetType = 'Deployment';
      ed.spec.regions[0].partition = 1;
      ed.spec.regions[1].partition = '150%';
    },
    expected: [
      `${ED}: spec.regions[1].partition: "150%" exceeds 100%`,
      `${ED}: spec.regions[0].partition: needs subsetType ReplicaSet (or InplaceSet): a native Deployment replaces every pod of a region`,
    ],
  },
  {
    name: 'StatefulSet regions with another replacement type, a partition, and a claim override naming no template',
    mutate: ({ ed }) => {
      ed.spec.subsetType = 'StatefulSet';
      ed.spec.strategy = { updateStrategy: { type: 'RollingUpdate' } };
      ed.spec.statefulSet = { volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: {} }] };
      ed.spec.regions[0].partition = 1;
      ed.spec.regions[1].overrides = { volumeClaims: { logs: { storageClassName: 'zonal' }, data: { storage: '5Gi' } } };
    },
    expected: [
      `${ED}: spec.strategy.updateStrategy.type: RollingUpdate does not apply to StatefulSet regions: the StatefulSet controller replaces pods one at a time (ReCreate, the default)`,
      `${ED}: spec.regions[0].partition: does not apply to StatefulSet regions: the agent owns the StatefulSet's own partition`,
      `${ED}: spec.regions[1].overrides.volumeClaims.logs: no volume claim template named "logs" (spec.statefulSet.volumeClaimTemplates: data)`,
    ],
  },
  {
    name: 'a claim template defined twice',
    mutate: ({ ed }) => {
      ed.spec.subsetType = 'StatefulSet';
      ed.spec.statefulSet = {
        volumeClaimTemplates: [
          { metadata: { name: 'data' }, spec: {} },
          { metadata: { name: 'data' }, spec: {} },
        ],
      };
    },
    expected: [`${ED}: spec.statefulSet.volumeClaimTemplates[1].metadata.name: claim template "data" is defined twice`],
  },
  {
    name: 'StatefulSet fields and claim overrides without subsetType StatefulSet',
    mutate: ({ ed }) => {
      ed.spec.statefulSet = { serviceName: 'web' };
      ed.spec.regions[2].overrides = { volumeClaims: { data: { storage: '5Gi' } } };
    },
    expected: [
      `${ED}: spec.statefulSet: needs subsetType StatefulSet (subsetType is ReplicaSet)`,
      `${ED}: spec.regions[2].overrides.volumeClaims: needs subsetType StatefulSet`,
    ],
  },
  {
    name: 'adopt: into a StatefulSet region, a workload of its own, the same workload twice',
    mutate: ({ ed }) => {
      ed.spec.subsetType = 'StatefulSet';
      ed.spec.regions[0].adopt = { kind: 'Deployment', name: 'web' };
      ed.spec.regions[1].adopt = { kind: 'Deployment', name: 'web' };
      ed.spec.regions[2].adopt = { kind: 'ReplicaSet', name: `web-${ed.spec.regions[0].name}` };
    },
    expected: [
      `${ED}: spec.regions[0].adopt: needs subsetType ReplicaSet (or InplaceSet): a StatefulSet's pods belong to its own controller`,
      `${ED}: spec.regions[1].adopt: needs subsetType ReplicaSet (or InplaceSet): a StatefulSet's pods belong to its own controller`,
      `${ED}: spec.regions[1].adopt.name: Deployment/web is adopted by spec.regions[0] already`,
      `${ED}: spec.regions[2].adopt: needs subsetType ReplicaSet (or InplaceSet): a StatefulSet's pods belong to its own controller`,
      `${ED}: spec.regions[2].adopt.name: ReplicaSet/web-amd is a workload of this ExtendedDeployment`,
    ],
  },
  {
    name: 'adopt: a kind that is not adoptable, a name that is no DNS subdomain',
    mutate: ({ ed }) => (ed.spec.regions[0].adopt = { kind: 'StatefulSet', name: 'Web_1' }),
    expected: [
      `${ED}: spec.regions[0].adopt.kind: must be one of "Deployment", "ReplicaSet", "InplaceSet"`,
      `${ED}: spec.regions[0].adopt.name: must be a DNS subdomain (lower case letters, digits, "-" and ".")`,
    ],
  },
  {
    name: 'batchSize 0',
    mutate: ({ ed }) => (ed.spec.strategy = { batchSize: 0 }),
    expected: [`${ED}: spec.strategy.batchSize: 0 must be at least 1 pod or 1%`],
  },
  {
    name: 'batchSize "0%"',
    mutate: ({ ed }) => (ed.spec.strategy = { batchSize: '0%' }),
    expected: [`${ED}: spec.strategy.batchSize: "0%" must be at least 1 pod or 1%`],
  },
  {
    name: 'rollingUpdate with maxSurge and maxUnavailable both 0',
    mutate: ({ ed }) => (ed.spec.strategy = { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: '0%' } } }),
    expected: [`${ED}: spec.strategy.updateStrategy.rollingUpdate: maxSurge and maxUnavailable cannot both be 0: nothing could ever change`],
  },
  {
    name: 'fault move threshold 0',
    mutate: ({ ed }) => (ed.spec.strategy = { faultMove: { failureThreshold: 0 } }),
    expected: [`${ED}: spec.strategy.faultMove.failureThreshold: must be at least 1 node or 1%: 0 would mark every region failed`],
  },
  {
    name: 'unknown subsetType',
    mutate: ({ ed }) => (ed.spec.subsetType = 'DaemonSet'),
    expected: [`${ED}: spec.subsetType: must be one of "ReplicaSet", "Deployment", "InplaceSet", "StatefulSet"`],
  },
  {
    name: 'unknown rolloutStrategy',
    mutate: ({ ed }) => (ed.spec.strategy = { rolloutStrategy: 'Canary' }),
    expected: [`${ED}: spec.strategy.rolloutStrategy: must be one of "Beta", "Group"`],
  },
  {
    name: 'unknown updateStrategy type',
    mutate: ({ ed }) => (ed.spec.strategy = { updateStrategy: { type: 'Rolling' } }),
    expected: [`${ED}: spec.strategy.updateStrategy.type: must be one of "ReCreate", "RollingUpdate", "DeleteAllFirst", "InPlaceIfPossible"`],
  },

  // Every problem at once
  {
    name: 'five problems of one spec, schema and cross-field, reported together',
    mutate: ({ ed }) => {
      ed.spec.regions[1].replicas = '150%';
      ed.spec.replica = 6;
      ed.spec.template.spec.restartPolicy = 'Never';
      ed.spec.selector.matchLabels.app = 'shop';
      ed.spec.overriders = [{ name: 'gpu', overriders: [] }];
    },
    expected: [
      `${ED}: spec.regions[1].replicas: "150%" exceeds 100%`,
      `${ED}: spec.replica: unknown field (did you mean "replicas"?)`,
      `${ED}: spec.overriders[0].name: "gpu" is not a region of this ExtendedDeployment`,
      `${ED}: spec.template.spec.restartPolicy: must be Always for a long-running workload, not "Never"`,
      `${ED}: spec.template.metadata.labels: do not match spec.selector`,
    ],
  },
  {
    name: 'four cross-field problems of one spec reported together',
    mutate: ({ ed }) => {
      ed.spec.regions[2].name = 'amd';
      ed.spec.overriders = [...patches(), ...patches()];
      ed.spec.template.spec.containers.push({ name: 'app', image: 'envoy:1.30' });
      ed.spec.strategy = { batchSize: 0 };
    },
    expected: [
      `${ED}: spec.regions[2].name: region "amd" is listed twice (first at spec.regions[0])`,
      `${ED}: spec.overriders[1].name: second entry for region "arm" (first at spec.overriders[0]); merge them`,
      `${ED}: spec.template.spec.containers[1].name: container name "app" is used twice`,
      `${ED}: spec.strategy.batchSize: 0 must be at least 1 pod or 1%`,
    ],
  },
  {
    name: 'a bad name stops the cross-field rules but not the other schema problems',
    mutate: ({ ed }) => {
      ed.metadata.name = 'Web';
      ed.spec.subsetType = 'DaemonSet';
      ed.spec.regions[1].replicas = '150%';
      ed.spec.template.spec.restartPolicy = 'Never';
    },
    expected: [
      `ExtendedDeployment shop/Web: metadata.name: ${DNS}`,
      'ExtendedDeployment shop/Web: spec.subsetType: must be one of "ReplicaSet", "Deployment", "InplaceSet", "StatefulSet"',
      'ExtendedDeployment shop/Web: spec.regions[1].replicas: "150%" exceeds 100%',
    ],
  },
  {
    name: 'a broken count hides the sums it would skew, not the other rules',
    mutate: ({ ed }) => {
      ed.spec.replicas = '6';
      ed.spec.regions[0].replicas = '50%';
      ed.spec.regions[2].name = 'amd';
    },
    expected: [
      `${ED}: spec.replicas: must be a number, not the string "6"`,
      `${ED}: spec.regions[2].name: region "amd" is listed twice (first at spec.regions[0])`,
    ],
  },
  {
    name: "a broken percentage does not hide another region's minReplicas over its maxReplicas",
    mutate: ({ ed }) => {
      ed.spec.regions[0].replicas = '150%';
      Object.assign(ed.spec.regions[1], { minReplicas: 5, maxReplicas: 2 });
    },
    expected: [`${ED}: spec.regions[0].replicas: "150%" exceeds 100%`, `${ED}: spec.regions[1].minReplicas: 5 exceeds maxReplicas 2`],
  },
  {
    name: "a broken spec.replicas does not hide a region's count below its minReplicas",
    mutate: ({ ed }) => {
      ed.spec.replicas = -4;
      Object.assign(ed.spec.regions[1], { replicas: 1, minReplicas: 2 });
    },
    expected: [`${ED}: spec.replicas: must not be negative`, `${ED}: spec.regions[1].replicas: 1 is below minReplicas 2`],
  },

  // Kubernetes int32 bounds
  ...(
    [
      ['spec.replicas', ({ ed }: RenderInput) => (ed.spec.replicas = 2 ** 31)],
      ['spec.regions[0].replicas', ({ ed }: RenderInput) => (ed.spec.regions[0].replicas = 2 ** 31)],
      ['spec.regions[0].maxReplicas', ({ ed }: RenderInput) => (ed.spec.regions[0].maxReplicas = 2 ** 31)],
      ['spec.historyLimit', ({ ed }: RenderInput) => (ed.spec.historyLimit = 2 ** 31)],
      ['spec.strategy.minReadySeconds', ({ ed }: RenderInput) => (ed.spec.strategy = { minReadySeconds: 2 ** 31 })],
      ['spec.strategy.batchSize', ({ ed }: RenderInput) => (ed.spec.strategy = { batchSize: 2 ** 31 })],
    ] as const
  ).map(([path, mutate]): Case => ({ name: `${path} over int32`, mutate, expected: [`${ED}: ${path}: must be at most 2147483647`] })),
];

describe('validation: every invalid spec reports its object, path and message', () => {
  it('the base set is valid', () => {
    const result = renderSet(objectsOf(() => {}));
    expect(result.ok ? [] : result.problems.map(formatProblem)).toEqual([]);
  });

  it('accepts the largest int32', () => {
    const max = 2 ** 31 - 1;
    const result = renderSet(objectsOf(({ ed }) => Object.assign(ed.spec, { historyLimit: max, strategy: { minReadySeconds: max, batchSize: max } })));
    expect(result.ok ? [] : result.problems.map(formatProblem)).toEqual([]);
  });

  it('has at least 35 cases with distinct names', () => {
    expect(cases.length).toBeGreaterThanOrEqual(35);
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
  });

  it.each(cases)('$name', ({ mutate, expected }) => {
    expect(problemsOf(mutate).map(formatProblem)).toEqual(expected);
  });

  it.each(cases)('$name: every problem names its object and a field path', ({ mutate }) => {
    const problems = problemsOf(mutate);
    expect(problems.length).toBeGreaterThan(0);
    for (const problem of problems) {
      expect(problem.object.name).toBeTruthy();
      expect(problem.path.length).toBeGreaterThan(0);
      expect(problem.message).not.toMatch(/^Invalid input|expected \w+, received/);
    }
  });

  it('finds no overlap between regions whose expressions rule each other out', () => {
    const disjoint = problemsOf(({ regions }) => {
      regions[2].spec.matchLabels = {};
      regions[2].spec.matchExpressions = [{ key: 'kubernetes.io/arch', operator: 'NotIn', values: ['amd64', 'arm64'] }];
    });
    expect(disjoint.map(formatProblem)).toEqual([]);
  });

  it('reports problems in the same order on every render', () => {
    for (const { mutate } of cases) expect(problemsOf(mutate).map(formatProblem)).toEqual(problemsOf(mutate).map(formatProblem));
  });
});

describe('renderSet returns problems, it never throws', () => {
  // Malformed input: each is a problem of its object.
  const malformed: [string, (input: RenderInput) => void][] = [
    ['metadata null', ({ ed }) => (ed.metadata = null)],
    ['spec null', ({ ed }) => (ed.spec = null)],
    ['a region entry null', ({ ed }) => (ed.spec.regions[1] = null)],
    ['template labels null', ({ ed }) => (ed.spec.template.metadata.labels = null)],
    ['DeployRegion metadata null', ({ regions }) => (regions[0].metadata = null)],
    ['DeployRegion spec null', ({ regions }) => (regions[0].spec = null)],
    ['nodeSelector a string', ({ ed }) => (ed.spec.template.spec.nodeSelector = 'arm64')],
    ['tolerations an object', ({ ed }) => (ed.spec.template.spec.tolerations = { key: 'gpu' })],
    [
      'nodeSelectorTerms a string',
      ({ ed }) => (ed.spec.template.spec.affinity = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: 'arm64' } } }),
    ],
    [
      'env an object, overridden',
      ({ ed }) => {
        ed.spec.template.spec.containers[0].env = { A: 'b' };
        ed.spec.regions[0].overrides = { env: { app: { X: 'y' } } };
      },
    ],
    [
      'resources a string, overridden',
      ({ ed }) => {
        ed.spec.template.spec.containers[0].resources = 'big';
        ed.spec.regions[0].overrides = { resources: { app: { limits: { cpu: '1' } } } };
      },
    ],
    [
      'readinessGates a string with in-place updates',
      ({ ed }) => {
        ed.spec.template.spec.readinessGates = 'ready';
        ed.spec.subsetType = 'InplaceSet';
      },
    ],
    ['a patch that turns containers into a string', ({ ed }) => (ed.spec.overriders = patches({ op: 'replace', path: '/spec/containers', value: 'app' }))],
    ['a patch that turns affinity into a string', ({ ed }) => (ed.spec.overriders = patches({ op: 'add', path: '/spec/affinity', value: 'arm64' }))],
    ['a patch into __proto__', ({ ed }) => (ed.spec.overriders = patches({ op: 'add', path: '/__proto__/x', value: 1 }))],
    ['a cycle', ({ ed }) => (ed.spec.template.spec.self = ed)],
  ];
  // Input no YAML file can hold; a construct could still pass it.
  const exotic: [string, (input: RenderInput) => void][] = [
    ['null, a string and a number among the objects', (input) => input.extra.push(null, 'ed', 42)],
    ['a function in the template', ({ ed }) => (ed.spec.template.spec.terminationGracePeriodSeconds = () => 30)],
    ['a bigint replica count', ({ ed }) => (ed.spec.replicas = 6n)],
  ];

  it.each([...malformed, ...exotic])('%s', (_name, mutate) => {
    const objects = objectsOf(mutate);
    expect(() => renderSet(objects)).not.toThrow();
  });

  it.each(malformed)('%s is reported as a problem of its object', (_name, mutate) => {
    const result = renderSet(objectsOf(mutate));
    expect(result.ok).toBe(false);
    if (!result.ok) for (const line of result.problems.map(formatProblem)) expect(line).toMatch(/^(ExtendedDeployment|DeployRegion) /);
  });

  it('objects of other kinds and non-objects are left to the caller', () => {
    expect(renderSet(objectsOf((input) => input.extra.push(null, 'ed', 42, { kind: 'ConfigMap' }, { kind: 'ConfigMap' }))).ok).toBe(true);
  });
});

describe('regionReferenceProblems: the regions of an ExtendedDeployment whose DeployRegion is gone or invalid', () => {
  const parsed = (regions: string[]) => {
    const ed = base().ed;
    ed.spec.regions = regions.map((name) => ({ name }));
    const result = parseExtendedDeployment(ed);
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    return result.value;
  };
  // [case, regions the ExtendedDeployment names, DeployRegions that parse, DeployRegions that do not, problems]
  const table: [string, string[], string[], string[], string[]][] = [
    ['every DeployRegion there', ['amd', 'arm'], ['amd', 'arm', 'ppc'], [], []],
    ['one deleted', ['amd', 'arm'], ['amd'], [], [`${ED}: spec.regions[1].name: DeployRegion "arm" not found (known: amd)`]],
    [
      'all deleted',
      ['amd', 'arm'],
      [],
      [],
      [`${ED}: spec.regions[0].name: DeployRegion "amd" not found (known: none)`, `${ED}: spec.regions[1].name: DeployRegion "arm" not found (known: none)`],
    ],
    [
      'one invalid: it exists, its own problems say why',
      ['amd', 'arm'],
      ['amd'],
      ['arm'],
      [`${ED}: spec.regions[1].name: DeployRegion "arm" is invalid (see its own problems)`],
    ],
    [
      'a region listed twice is reported once, at its first entry',
      ['arm', 'amd', 'arm'],
      ['amd'],
      [],
      [`${ED}: spec.regions[0].name: DeployRegion "arm" not found (known: amd)`],
    ],
  ];

  it.each(table)('%s', (_case, regions, known, invalid, expected) => {
    const problems = regionReferenceProblems(parsed(regions), new Set(known), new Set(invalid), { kind: 'ExtendedDeployment', name: 'web', namespace: 'shop' });
    expect(problems.map(formatProblem)).toEqual(expected);
  });

  it('words a missing region as the render does', () => {
    const rendered = problemsOf(({ regions }) => regions.splice(1, 1));
    const agent = regionReferenceProblems(parsed(['amd', 'arm', 'ppc']), new Set(['amd', 'ppc']), new Set(), {
      kind: 'ExtendedDeployment',
      name: 'web',
      namespace: 'shop',
    });
    expect(agent.map(formatProblem)).toEqual(rendered.map(formatProblem));
  });
});
