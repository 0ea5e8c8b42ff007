// The lab's realistic kwok timings: ONE table of what a real node spends on a pod (kubelet reaction, pod sandbox,
// image pull by image size, container start and stop, readiness probes), and the generator of
// test/cluster/kwok-realistic.yaml from it. `npm run lab:up -- --timings realistic` starts kwok with that file;
// the default lab keeps test/cluster/kwok.yaml (the e2e suites' timings) unchanged.
//
//   npx tsx test/cluster/realistic-timings.ts          rewrites kwok-realistic.yaml (a unit test checks it is current)
//
// How the stages use the table (kwok v0.8.0 Stage delays: `durationFrom`/`jitterDurationFrom` take a jq expression
// on the pod whose string result is a Go duration; the delay is uniform between the two). kwok restarts a stage's
// delay from zero whenever the pod changes (a new resourceVersion: the agent's gate conditions and annotations do
// that during an in-place swap), so every realistic delay is computed as "a moment recorded in the pod + the table's
// time - now": a re-evaluation yields the same deadline instead of starting over. The moments are epoch milliseconds
// in the message of a pod condition of type lab.extendeddeployment.io/Kubelet (metav1.Time keeps whole seconds
// only), written by the stages themselves:
//
//   lab-pod-create        Pending, no Kubelet condition      -> containers waiting ContainerCreating; Kubelet
//                         (delay: kubelet reaction)             condition reason ContainerCreating at=<now>
//   lab-pod-start         Pending, Kubelet condition          -> Running, containers running, not ready; Kubelet
//                         at + sandbox + pulls + starts         reason Started at=<now>   (":broken": CrashLoopBackOff)
//   lab-container-restart Running, spec image != status image -> the changed containers are killed: waiting
//                         (not :broken); delay: kubelet          ContainerCreating with the new image, not ready;
//                         reaction + stop (<= grace period)      Kubelet reason Pulling at=<now>
//   lab-container-start   Running, a container waiting        -> running with a new containerID, restartCount+1,
//                         ContainerCreating, no mismatch:       not ready; Kubelet reason Started at=<now>
//                         at + pulls of the waiting images + starts
//   lab-containers-ready  (kwok.yaml's, delay: Started at + readiness: the first readiness probe that passes, or at
//                         once without a probe, + the status write)
//   lab-pod-delete        delay: kubelet reaction + stop (<= terminationGracePeriodSeconds)
// Node stages, lab-container-crash, lab-pod-ready-sync and lab-pod-delete-graceful (already at the pod's own
// deletionTimestamp) are kwok.yaml's, verbatim.
//
// Image size: a number followed by "mb" anywhere in the image reference (registry.example/web-800mb:2,
// registry.example/web:2-800mb), else defaultImageMB. Simplified: every container start pulls its image (no node
// image cache: a stage sees one pod, never what else its node pulled), pulls of one pod are serial (kubelet
// serializeImagePulls, the default) but pods on one node pull in parallel without sharing bandwidth, and the
// scheduler is the lab's real kube-scheduler (its latency is measured, not modelled).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

/** A range in seconds: kwok picks uniformly in it. */
export interface Range {
  readonly min: number;
  readonly max: number;
}

/** The table. Every realistic delay of the lab comes from here. */
export const REALISTIC_TIMINGS = {
  /** The kubelet reacts to a pod change: watch delivery + pod worker sync. */
  kubeletReactionSeconds: { min: 0.1, max: 0.5 },
  /** Pod sandbox: pause container, network namespace, CNI ADD, before any container can be pulled or started. */
  sandboxSeconds: { min: 0.5, max: 1.5 },
  /** Per image pulled: registry round trips (token, manifest, config) and snapshot preparation. */
  pullOverheadSeconds: { min: 0.3, max: 1.0 },
  /** Effective pull throughput per node, download and unpack (MB/s); the fast end gives the short delay. */
  pullMBPerSecond: { min: 40, max: 80 },
  /** Image size when the image reference names none ("<n>mb"). */
  defaultImageMB: 100,
  /** runc create + start of one container (cgroup, mounts, exec). */
  containerStartSeconds: { min: 0.2, max: 0.6 },
  /** A container's process exits after SIGTERM; capped by the pod's terminationGracePeriodSeconds. */
  containerStopSeconds: { min: 0.2, max: 1.0 },
  /** Readiness probe defaults of the Kubernetes API, used when the probe leaves them out. */
  readinessProbeDefaults: { initialDelaySeconds: 0, periodSeconds: 10 },
  /** When the application answers its readiness probe after its process started (an assumption, not a source). */
  appReadySeconds: 2,
  /** The kubelet's status write after a probe result (or at once for containers without a readiness probe). */
  statusWriteSeconds: { min: 0.1, max: 0.5 },
} as const;

/** Where the table's figures come from (the bench prints these). */
export const REALISTIC_SOURCES: readonly string[] = [
  'Pod start-up SLO (sig-scalability): 99th percentile of creation -> all containers started, excluding image pulls, <= 5 s; ' +
    'the table keeps reaction + sandbox + start (max 2.6 s) inside it with room for scheduling: ' +
    'https://github.com/kubernetes/community/blob/master/sig-scalability/slos/pod_startup_latency.md',
  'Image pulls dominate container start-up (76 % of start time in Harter et al., "Slacker", FAST \'16): ' +
    'https://www.usenix.org/conference/fast16/technical-sessions/presentation/harter',
  'Pull throughput 40-80 MB/s effective: region-local registries (ECR/GCR/ACR) deliver ~0.5-1 Gbit/s (60-125 MB/s) to a node, ' +
    'and containerd unpacks (gunzips) layers after download; cf. the containerd content-store measurements of multi-GB images ' +
    'pulling in 55-85 s: https://github.com/containerd/containerd/tree/main/core/content , and GKE image streaming, which exists ' +
    'because full pulls take tens of seconds: https://cloud.google.com/kubernetes-engine/docs/how-to/image-streaming',
  'Image pulls are serial per node by default (kubelet serializeImagePulls: true): ' +
    'https://kubernetes.io/docs/concepts/containers/images/#serial-and-parallel-image-pulls',
  'Readiness probe defaults initialDelaySeconds 0, periodSeconds 10, successThreshold 1: ' +
    'https://kubernetes.io/docs/tasks/configure-pod-container/configure-liveness-readiness-startup-probes/#configure-probes',
  'A changed container image makes the kubelet kill the container (SIGTERM, up to terminationGracePeriodSeconds), pull the ' +
    'new image and start it; the pod keeps its sandbox, IP and node: ' +
    'https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#container-restarts',
  'Container start (runc) and sandbox times: a few hundred ms each on an idle node, ~2 s pod start-up on an idle kubeadm node ' +
    '(knative/serving#2484): https://github.com/knative/serving/issues/2484',
];

// ---------------------------------------------------------------------------------------------------------------
// the model in TypeScript (what the jq expressions compute; the unit test checks the two agree)

export interface ModelContainer {
  readonly image: string;
  readonly readinessProbe?: { initialDelaySeconds?: number; periodSeconds?: number };
}

type Bound = 'min' | 'max';
const T = REALISTIC_TIMINGS;

/** The size in MB an image reference names ("<n>mb"), else the default. */
export function imageMB(image: string): number {
  const m = /([0-9]+)mb/.exec(image);
  return m ? Number(m[1]) : T.defaultImageMB;
}

/** Seconds to pull one image; `min` is the fast end (overhead min, throughput max). */
export function pullSeconds(image: string, bound: Bound): number {
  const mbps = bound === 'min' ? T.pullMBPerSecond.max : T.pullMBPerSecond.min;
  return T.pullOverheadSeconds[bound] + imageMB(image) / mbps;
}

/** Seconds from the kubelet first handling a new pod to its containers running. */
export function podStartSeconds(containers: readonly ModelContainer[], bound: Bound): number {
  return T.sandboxSeconds[bound] + containers.reduce((s, c) => s + pullSeconds(c.image, bound) + T.containerStartSeconds[bound], 0);
}

/** Seconds from a container's kill to it running again with `images` (the changed containers' new images). */
export function restartSeconds(images: readonly string[], bound: Bound): number {
  return images.reduce((s, i) => s + pullSeconds(i, bound) + T.containerStartSeconds[bound], 0);
}

/** Seconds from a spec change (or a deletion) to the containers stopped. */
export function stopSeconds(terminationGracePeriodSeconds: number | undefined, bound: Bound): number {
  return T.kubeletReactionSeconds[bound] + Math.min(terminationGracePeriodSeconds ?? 30, T.containerStopSeconds[bound]);
}

/** When the first readiness probe passes after the container started: at once without a probe. */
export function probeSeconds(c: ModelContainer): number {
  if (!c.readinessProbe) return 0;
  const d = c.readinessProbe.initialDelaySeconds ?? T.readinessProbeDefaults.initialDelaySeconds;
  const p = c.readinessProbe.periodSeconds ?? T.readinessProbeDefaults.periodSeconds;
  return T.appReadySeconds <= d ? d : d + Math.ceil((T.appReadySeconds - d) / p) * p;
}

/** Seconds from the containers started to the pod's containers Ready. */
export function readySeconds(containers: readonly ModelContainer[], bound: Bound): number {
  return T.statusWriteSeconds[bound] + Math.max(0, ...containers.map(probeSeconds));
}

// ---------------------------------------------------------------------------------------------------------------
// jq (gojq in kwok; the expressions stay in the subset jq 1.6+ shares, so the unit test evaluates them with jq)

export const KUBELET_CONDITION = 'lab.extendeddeployment.io/Kubelet';

const num = (n: number) => String(n);

/** jq: the size in MB of the image at `.`. */
const JQ_IMAGE_MB = `(([capture("(?<n>[0-9]+)mb") | .n | tonumber] | first) // ${num(T.defaultImageMB)})`;

/** jq: seconds to pull the image at `.`. */
function jqPull(bound: Bound): string {
  const mbps = bound === 'min' ? T.pullMBPerSecond.max : T.pullMBPerSecond.min;
  return `(${num(T.pullOverheadSeconds[bound])} + (${JQ_IMAGE_MB} / ${num(mbps)}))`;
}

/** jq: the Kubelet condition's moment (epoch ms) when its reason is `reason`, else now. */
function jqAt(reason: string): string {
  return (
    `(([(.status.conditions // [])[] | select(.type == "${KUBELET_CONDITION}" and .reason == "${reason}") | .message` +
    ` | capture("at=(?<t>[0-9]+)") | .t | tonumber] | first) // (now * 1000))`
  );
}

/** jq: the delay string until `at` (epoch ms) + `seconds` (a jq number expression), never negative. */
function jqUntil(at: string, seconds: string): string {
  return `((${at} + (${seconds}) * 1000 - now * 1000) | if . < 0 then 0 else . end | floor | tostring) + "ms"`;
}

/** jq: a relative delay of `seconds`. */
function jqIn(seconds: string): string {
  return `((${seconds}) * 1000 | floor | tostring) + "ms"`;
}

/** jq delay expressions per realistic stage, for `min` (durationFrom) and `max` (jitterDurationFrom). */
export const JQ_DELAYS = {
  /** kubelet reaction to a new pod. */
  podCreate: (b: Bound) => jqIn(num(T.kubeletReactionSeconds[b])),
  /** ContainerCreating at + sandbox + for each container (pull + start). */
  podStart: (b: Bound) =>
    jqUntil(
      jqAt('ContainerCreating'),
      `${num(T.sandboxSeconds[b])} + ([(.spec.containers // [])[] | .image | ${jqPull(b)} + ${num(T.containerStartSeconds[b])}] | add // 0)`,
    ),
  /** kubelet reaction + stop, capped by the grace period. */
  stop: (b: Bound) => jqIn(`${num(T.kubeletReactionSeconds[b])} + ([(.spec.terminationGracePeriodSeconds // 30), ${num(T.containerStopSeconds[b])}] | min)`),
  /** Pulling at + for each waiting ContainerCreating container (pull + start). */
  containerStart: (b: Bound) =>
    jqUntil(
      jqAt('Pulling'),
      `[(.status.containerStatuses // [])[] | select(.state.waiting.reason == "ContainerCreating") | .image | ${jqPull(b)} + ${num(T.containerStartSeconds[b])}] | add // 0`,
    ),
  /** Started at + status write + the slowest first passing readiness probe. */
  containersReady: (b: Bound) => {
    const d = num(T.readinessProbeDefaults.initialDelaySeconds);
    const p = num(T.readinessProbeDefaults.periodSeconds);
    const w = num(T.appReadySeconds);
    const probe =
      `(if .readinessProbe == null then 0 else ((.readinessProbe.initialDelaySeconds // ${d}) as $d | (.readinessProbe.periodSeconds // ${p}) as $p` +
      ` | if ${w} <= $d then $d else $d + ((((${w} - $d) / $p) | ceil) * $p) end) end)`;
    return jqUntil(jqAt('Started'), `${num(T.statusWriteSeconds[b])} + ([0, ((.spec.containers // [])[] | ${probe})] | max)`);
  },
};

// ---------------------------------------------------------------------------------------------------------------
// the stage file

const here = fileURLToPath(new URL('.', import.meta.url));
export const KWOK_STAGES_PATH = join(here, 'kwok.yaml');
export const REALISTIC_STAGES_PATH = join(here, 'kwok-realistic.yaml');

function delayYaml(stage: keyof typeof JQ_DELAYS): string {
  const q = (s: string) => `'${s.replace(/'/g, "''")}'`;
  return [
    '  delay:',
    '    durationFrom:',
    '      jq:',
    `        expression: ${q(JQ_DELAYS[stage]('min'))}`,
    '    jitterDurationFrom:',
    '      jq:',
    `        expression: ${q(JQ_DELAYS[stage]('max'))}`,
  ].join('\n');
}

const HAS_KUBELET = `'[(.status.conditions // [])[] | select(.type == "${KUBELET_CONDITION}")] | length > 0'`;
const MISMATCH = `'. as $p | [($p.spec.containers // [])[] | . as $c | ($p.status.containerStatuses // [])[] | select(.name == $c.name and .image != $c.image)] | length > 0'`;
const CREATING = `'[(.status.containerStatuses // [])[] | select(.state.waiting.reason == "ContainerCreating")] | length > 0'`;

const kubeletCondition = (reason: string, what: string) =>
  `- type: ${KUBELET_CONDITION}
  status: "True"
  lastTransitionTime: {{ $now | Quote }}
  reason: ${reason}
  message: {{ printf "at=%d (${what}; kwok-realistic.yaml)" (now).UnixMilli | Quote }}`;

const indent = (text: string, n: number) =>
  text
    .split('\n')
    .map((l) => (l ? ' '.repeat(n) + l : l))
    .join('\n');

const POD_CREATE = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: lab-pod-create
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Pending'
    - key: ${HAS_KUBELET}
      operator: 'In'
      values:
      - 'false'
${delayYaml('podCreate')}
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
${indent(kubeletCondition('ContainerCreating', 'sandbox and image pulls'), 6)}
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        type: PodReadyToStartContainers
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Initialized
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        type: ContainersReady
        reason: ContainersNotReady
        message: "containers with unready status"
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        type: Ready
        reason: ContainersNotReady
        message: "containers with unready status"
      containerStatuses:
      {{ range .spec.containers }}
      - name: {{ .name | Quote }}
        image: {{ .image | Quote }}
        imageID: ""
        ready: false
        started: false
        restartCount: 0
        state:
          waiting:
            reason: ContainerCreating
      {{ end }}
      phase: Pending
`;

const CONTAINER_START = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: lab-container-start
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Running'
    - key: ${MISMATCH}
      operator: 'In'
      values:
      - 'false'
    - key: ${CREATING}
      operator: 'In'
      values:
      - 'true'
${delayYaml('containerStart')}
  steps:
  - event:
      type: Normal
      reason: Pulled
      message: Pulled the new image (kwok-realistic.yaml delays)
  - patch:
      subresource: status
      root: status
      template: |
        {{ $now := Now }}
        {{ $root := . }}
        conditions:
${indent(kubeletCondition('Started', 'containers started'), 8)}
        containerStatuses:
        {{ range .status.containerStatuses }}
        {{ $waiting := (get (or .state dict) "waiting") }}
        {{ if and $waiting (eq (get $waiting "reason") "ContainerCreating") }}
        - name: {{ .name | Quote }}
          image: {{ .image | Quote }}
          imageID: {{ printf "kwok.local/image@sha256:%s" (sha256sum .image) | Quote }}
          containerID: {{ printf "containerd://%s" (sha256sum (printf "%s/%s/%s" $root.metadata.uid .name uuidv4)) | Quote }}
          restartCount: {{ add1 (default 0 .restartCount) }}
          ready: false
          started: true
          state:
            running:
              startedAt: {{ $now | Quote }}
          {{ with .lastState }}
          lastState: {{ toJson . }}
          {{ end }}
        {{ else }}
        - {{ toJson . }}
        {{ end }}
        {{ end }}
  - event:
      type: Normal
      reason: Started
      message: Started container with the new image
`;

/** kwok.yaml's stages by name, as YAML text, and its leading comment + KwokConfiguration. */
function kwokDocuments(kwokYaml: string): { head: string; stages: Map<string, string> } {
  const docs = parseAllDocuments(kwokYaml);
  const stages = new Map<string, string>();
  let head = '';
  for (const doc of docs) {
    if (Array.isArray(doc)) throw new Error('kwok.yaml: unexpected document');
    const text = kwokYaml.slice(doc.range[0], doc.range[2]).replace(/^---\n/, '');
    const kind = doc.get('kind');
    if (kind === 'KwokConfiguration') head = text.slice(text.indexOf('apiVersion:'));
    else if (kind === 'Stage') stages.set(String(doc.getIn(['metadata', 'name'])), text.trimEnd() + '\n');
  }
  return { head, stages };
}

function replaceOnce(text: string, from: string | RegExp, to: string, what: string): string {
  const n = typeof from === 'string' ? text.split(from).length - 1 : (text.match(new RegExp(from, 'g')) ?? []).length;
  if (n !== 1) throw new Error(`kwok.yaml changed: ${what} matched ${n} times`);
  return text.replace(from, to);
}

/** Replaces a stage's delay block (kwok.yaml's fixed milliseconds) with the table's. */
function withDelay(stage: string, name: keyof typeof JQ_DELAYS): string {
  return replaceOnce(stage, / {2}delay:\n {4}durationMilliseconds: \d+\n {4}jitterDurationMilliseconds: \d+\n/, `${delayYaml(name)}\n`, `${name} delay`);
}

/** lab-pod-start: after the Kubelet ContainerCreating moment, containers running but not ready (a readiness stage follows). */
function podStart(stage: string): string {
  let s = withDelay(stage, 'podStart');
  s = replaceOnce(
    s,
    "    - key: '.status.phase'\n      operator: 'In'\n      values:\n      - 'Pending'\n",
    `    - key: '.status.phase'\n      operator: 'In'\n      values:\n      - 'Pending'\n    - key: ${HAS_KUBELET}\n      operator: 'In'\n      values:\n      - 'true'\n`,
    'pod-start selector',
  );
  s = replaceOnce(s, '      conditions:\n', `      conditions:\n${indent(kubeletCondition('Started', 'containers started'), 6)}\n`, 'pod-start conditions');
  // Not ready at start: lab-containers-ready follows with the readiness delay.
  s = replaceOnce(
    s,
    / {5} {{ else }}\n {6}- lastTransitionTime: {{ \$now \| Quote }}\n {8}status: "True"\n {8}type: ContainersReady\n {5} {{ end }}\n/,
    '      {{ end }}\n',
    'pod-start ContainersReady',
  );
  s = replaceOnce(s, '      {{ if $broken }}\n      - lastTransitionTime', '      {{ if true }}\n      - lastTransitionTime', 'pod-start not ready');
  s = replaceOnce(
    s,
    / {5} {{ if \$broken }}\n {5} {{ else if \$gatesOK }}\n[\s\S]*? {5} {{ end }}\n {6}containerStatuses:\n/,
    '      containerStatuses:\n',
    'pod-start Ready',
  );
  s = replaceOnce(s, '        {{ else }}\n        ready: true\n', '        {{ else }}\n        ready: false\n', 'pod-start container ready');
  return s;
}

/** lab-container-restart: kill the changed containers; they wait ContainerCreating (pull) with the new image. */
function containerKill(stage: string): string {
  let s = withDelay(stage, 'stop');
  s = replaceOnce(
    s,
    '        conditions:\n',
    `        conditions:\n${indent(kubeletCondition('Pulling', 'containers killed, pulling'), 8)}\n`,
    'restart conditions',
  );
  s = replaceOnce(
    s,
    / {10}imageID: {{ printf "kwok\.local\/image@sha256:%s" \(sha256sum \$c\.image\) \| Quote }}\n {10}containerID: [^\n]+\n {10}restartCount: {{ add1 \(default 0 \(get \$old "restartCount"\)\) }}\n {10}ready: false\n {10}started: true\n {10}state:\n {12}running:\n {14}startedAt: {{ \$now \| Quote }}\n/,
    [
      '          imageID: ""',
      '          restartCount: {{ default 0 (get $old "restartCount") }}',
      '          ready: false',
      '          started: false',
      '          state:',
      '            waiting:',
      '              reason: ContainerCreating',
      '',
    ].join('\n'),
    'restart container state',
  );
  s = replaceOnce(
    s,
    '      reason: Started\n      message: Started container with the new image\n',
    '      reason: Pulling\n      message: Pulling the new image (kwok-realistic.yaml delays)\n',
    'restart event',
  );
  return s;
}

/** The realistic stage file, from kwok.yaml and the table. */
export function realisticStagesYaml(kwokYaml: string = readFileSync(KWOK_STAGES_PATH, 'utf8')): string {
  const { head, stages } = kwokDocuments(kwokYaml);
  const get = (name: string) => {
    const s = stages.get(name);
    if (!s) throw new Error(`kwok.yaml has no stage ${name}`);
    return s;
  };
  const podDelete = replaceOnce(
    get('lab-pod-delete'),
    / {2}delay:\n {4}durationMilliseconds: \d+\n {4}jitterDurationMilliseconds: \d+\n/,
    `${delayYaml('stop')}\n`,
    'pod-delete delay',
  );
  const out = [
    get('lab-node-initialize'),
    get('lab-node-heartbeat'),
    POD_CREATE,
    podStart(get('lab-pod-start')),
    containerKill(get('lab-container-restart')),
    CONTAINER_START,
    get('lab-container-crash'),
    withDelay(get('lab-containers-ready'), 'containersReady'),
    get('lab-pod-ready-sync'),
    podDelete,
    get('lab-pod-delete-graceful'),
  ];
  const known = new Set([
    'lab-node-initialize',
    'lab-node-heartbeat',
    'lab-pod-start',
    'lab-container-restart',
    'lab-container-crash',
    'lab-containers-ready',
    'lab-pod-ready-sync',
    'lab-pod-delete',
    'lab-pod-delete-graceful',
  ]);
  const unknown = [...stages.keys()].filter((n) => !known.has(n));
  if (unknown.length) throw new Error(`kwok.yaml has stages the realistic set does not know: ${unknown.join(', ')}`);
  const table = Object.entries(REALISTIC_TIMINGS)
    .map(([k, v]) => `#   ${k}: ${typeof v === 'object' ? JSON.stringify(v).replace(/"/g, '').replace(/,/g, ', ') : String(v)}`)
    .join('\n');
  const header = [
    '# GENERATED by test/cluster/realistic-timings.ts from test/cluster/kwok.yaml and the table below; do not edit.',
    '# Regenerate: npx tsx test/cluster/realistic-timings.ts',
    '# The lab with realistic timings (`npm run lab:up -- --timings realistic`) loads this instead of kwok.yaml: the same',
    "# stages, with delays that model a real node's kubelet (see realistic-timings.ts for the stage flow and simplifications).",
    '# The table (seconds, MB, MB/s):',
    table,
    '# Sources:',
    ...REALISTIC_SOURCES.map((s) => `#   - ${s}`),
  ].join('\n');
  return `${header}\n${head.trimEnd()}\n${out.map((s) => `---\n${s.trimEnd()}\n`).join('')}`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(REALISTIC_STAGES_PATH, realisticStagesYaml());
  console.log(`wrote ${REALISTIC_STAGES_PATH}`);
}
