/**
 * bench/inplace: a full image-only rollout on the lab cluster, done in place (updateStrategy InPlaceIfPossible) and by
 * replacement (updateStrategy ReCreate), in the same run, under two sets of kwok timings. Prints a table per timing
 * set and image size, the ratios, and a summary; asserts nothing about time.
 *
 *   npm run bench:inplace -- [--timings kwok|realistic|both] [--image-sizes small,large] [--probe-period 10]
 *                            [--regions 3] [--replicas 4] [--batch 2] [--runs 3] [--grace 5] [--keep-lab] [--agent-log <file>]
 *
 * Timings (`--timings`, default both): `kwok` is the lab's default stage set (test/cluster/kwok.yaml: a new pod is
 * Running and Ready 0.2-1 s after it is bound; a restarted container is ready 1.5-3 s after its restart, and kwok
 * starts a stage's delay over whenever the pod changes, which the agent's swap bookkeeping does several times: that,
 * not the container restart itself, is why in-place swaps are slow there). `realistic` is
 * test/cluster/kwok-realistic.yaml, generated from one table (test/cluster/realistic-timings.ts) that models a real
 * node, with deadlines recorded in the pod so that pod changes do not restart them:
 *   - kubelet reaction to a pod change 0.1-0.5 s; pod sandbox (pause container, CNI) 0.5-1.5 s; container start
 *     (runc) 0.2-0.6 s; container stop after SIGTERM 0.2-1 s, capped by terminationGracePeriodSeconds (0 here).
 *     Source: the Kubernetes pod start-up SLO, p99 of creation -> containers started, excluding image pulls, <= 5 s
 *     (https://github.com/kubernetes/community/blob/master/sig-scalability/slos/pod_startup_latency.md); ~2 s on an
 *     idle kubeadm node (https://github.com/knative/serving/issues/2484).
 *   - image pull = 0.3-1 s of registry round trips + size / 40-80 MB/s (download and unpack), at every container
 *     start (new pod or in-place restart), serial within a pod (kubelet serializeImagePulls, the default:
 *     https://kubernetes.io/docs/concepts/containers/images/#serial-and-parallel-image-pulls). Sources: region-local
 *     registries deliver ~0.5-1 Gbit/s to a node and containerd gunzips after download; pulls take 76 % of container
 *     start time (Harter et al., "Slacker", FAST '16:
 *     https://www.usenix.org/conference/fast16/technical-sessions/presentation/harter); GKE image streaming exists
 *     because full pulls take tens of seconds (https://cloud.google.com/kubernetes-engine/docs/how-to/image-streaming).
 *   - readiness: the pods carry a readiness probe with `--probe-period` (default 10 s, the API default; 0: no probe)
 *     and initialDelaySeconds 0 (the default: https://kubernetes.io/docs/tasks/configure-pod-container/configure-liveness-readiness-startup-probes/#configure-probes);
 *     the application answers 2 s after it starts (an assumption), so the first probe that passes is the one at
 *     `--probe-period` s; then 0.1-0.5 s for the kubelet's status write.
 *   - an in-place swap is what the kubelet does on an image change
 *     (https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#container-restarts): kill, pull, start,
 *     probe, on the same node and sandbox; a replacement pays scheduling (the lab's real kube-scheduler), sandbox,
 *     pull, start, probe.
 *   Simplified: no node image cache (a kwok stage sees one pod, not what its node pulled before: every container
 *   start pulls, for both methods alike; a real node pulls once per image and shares it with later pods), no
 *   bandwidth shared between pods pulling at once on one node, no registry limits.
 * Image sizes (`--image-sizes`, default small,large = 50 MB and 800 MB; or numbers in MB): named in the image reference
 * (registry.example/bench-800mb:2), which the realistic stages read; the kwok timings ignore it, so they run once.
 *
 * Setup: a lab of its own, in LAB_DIR or else <repo>/.lab/bench-inplace (git-ignored), started or switched to the
 * timings with the lab's CLI (`tsx test/cluster/cli.ts up --timings <t>`: a running lab with the other timings is
 * started afresh); a lab the bench started is stopped at the end (`--keep-lab` keeps it), a lab it found
 * gets its timings back. The CRDs of crds/ are applied; one namespace and `--regions` DeployRegions on the lab's general-pool nodes (zone-a amd64, zone-b
 * amd64, arm64) are created for the run and deleted at the end. The agent is the compiled `edctl agent` as a child
 * process watching only that namespace.
 *
 * Each variant has its own ExtendedDeployment (`--regions` × `--replicas` pods; Beta groups of `--batch`,
 * scaleOutPriority, minReadySeconds 1, no gates; the variants differ only in updateStrategy): in place with
 * gracePeriodSeconds `--grace` (the default of the API is 5 s: how long a pod stays out of endpoints before its
 * images change), in place with no grace period (what the swap itself costs; left out when `--grace 0`), and by
 * replacement. A run applies v1 to each (untimed, until Healthy), then rolls each to a new image one after the
 * other, in an order that rotates between runs. The time of a rollout is from the apply (server-side, ExtendedDeployment then ReplicaSets, as a GitOps tool
 * does) to the status reporting Healthy at the new rollout revision with every pod Ready. A pod watch counts the pods
 * created (ADDED with a new UID) and removed during each rollout, the most pods a region had at once (terminating
 * included) and the fewest Ready pods of a region. The table shows medians over the runs; the ratio is the in-place
 * median over the replacement median.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { NAME_LABEL, REGION_LABEL } from '../core/labels.js';
import { renderSet, type RenderedExtendedDeployment } from '../core/render.js';
import { benchFlags, integerFlag, runBench, UsageError } from './command-line.js';
import { median, textTable } from './figures.js';
import { pullSeconds } from '../test/cluster/realistic-timings.js';
import { AgentChild } from './agent-child.js';
import { Api, GROUP, VERSION, installCrds, labDeployRegions, listWatch, log, namespacedAgentArgs, repoRoot, waitUntil } from './lab-kit.js';

// ---------------------------------------------------------------------------------------------------------------
// options

type Timings = 'kwok' | 'realistic';

interface Options {
  readonly timings: readonly Timings[];
  /** Image sizes in MB. */
  readonly imageSizes: readonly number[];
  /** The readiness probe's periodSeconds; 0: no probe. */
  readonly probePeriod: number;
  readonly keepLab: boolean;
  readonly regions: number;
  readonly replicas: number;
  readonly batch: number;
  readonly runs: number;
  readonly grace: number;
  readonly timeoutSeconds: number;
  /** Write the agent's log lines to this file. */
  readonly agentLog: string | undefined;
}

function options(argv: readonly string[]): Options {
  const values = benchFlags(argv, {
    regions: { type: 'string' },
    replicas: { type: 'string' },
    batch: { type: 'string' },
    runs: { type: 'string' },
    grace: { type: 'string' },
    'timeout-seconds': { type: 'string' },
    timings: { type: 'string', default: 'both' },
    'image-sizes': { type: 'string', default: 'small,large' },
    'probe-period': { type: 'string' },
    'keep-lab': { type: 'boolean', default: false },
    'agent-log': { type: 'string' },
  });
  const regions = integerFlag('regions', values.regions, 3, 1);
  if (regions > 3) throw new UsageError('--regions: the lab has three general-pool node sets');
  const t = values.timings;
  if (t !== 'kwok' && t !== 'realistic' && t !== 'both') throw new UsageError(`--timings must be kwok, realistic or both, not ${JSON.stringify(t)}`);
  const imageSizes = values['image-sizes'].split(',').map((x) => {
    const mb = x === 'small' ? 50 : x === 'large' ? 800 : Number(x);
    if (!Number.isInteger(mb) || mb < 1) throw new UsageError(`--image-sizes: "${x}" is not small, large or a size in MB`);
    return mb;
  });
  return {
    timings: t === 'both' ? ['kwok', 'realistic'] : [t],
    imageSizes,
    probePeriod: integerFlag('probe-period', values['probe-period'], 10, 0),
    keepLab: values['keep-lab'],
    regions,
    replicas: integerFlag('replicas', values.replicas, 4, 1),
    batch: integerFlag('batch', values.batch, 2, 1),
    runs: integerFlag('runs', values.runs, 3, 1),
    grace: integerFlag('grace', values.grace, 5, 0),
    timeoutSeconds: integerFlag('timeout-seconds', values['timeout-seconds'], 300, 10),
    agentLog: values['agent-log'],
  };
}

// ---------------------------------------------------------------------------------------------------------------
// objects

interface Variant {
  readonly key: string;
  readonly label: string;
  readonly updateStrategy: Record<string, unknown>;
  readonly inPlace: boolean;
}

function variants(o: Options): Variant[] {
  return [
    { key: 'ip', label: `in place (grace ${o.grace} s)`, updateStrategy: { type: 'InPlaceIfPossible', gracePeriodSeconds: o.grace }, inPlace: true },
    ...(o.grace !== 0
      ? [{ key: 'ipz', label: 'in place (grace 0 s)', updateStrategy: { type: 'InPlaceIfPossible', gracePeriodSeconds: 0 }, inPlace: true }]
      : []),
    { key: 'rc', label: 'replacement (ReCreate)', updateStrategy: { type: 'ReCreate' }, inPlace: false },
  ];
}

function renderEd(ns: string, regions: readonly KubernetesObject[], variant: Variant, o: Options, image: string): RenderedExtendedDeployment {
  const ed = {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'ExtendedDeployment',
    metadata: { name: variant.key, namespace: ns },
    spec: {
      selector: { matchLabels: { app: variant.key } },
      template: {
        metadata: { labels: { app: variant.key } },
        spec: {
          terminationGracePeriodSeconds: 0,
          containers: [
            {
              name: 'app',
              image,
              resources: { requests: { cpu: '10m', memory: '16Mi' } },
              ...(o.probePeriod > 0 && { readinessProbe: { httpGet: { path: '/ready', port: 8080 }, periodSeconds: o.probePeriod } }),
            },
          ],
        },
      },
      regions: regions.map((r) => ({ name: r.metadata?.name, replicas: o.replicas })),
      strategy: { minReadySeconds: 1, batchSize: o.batch, rolloutStrategy: 'Beta', upgradeMode: 'scaleOutPriority', updateStrategy: variant.updateStrategy },
    },
  };
  const result = renderSet([...regions, ed]);
  if (!result.ok) throw new Error(`render failed: ${JSON.stringify(result.problems)}`);
  const rendered = result.value.extendedDeployments[0];
  if (!rendered) throw new Error('nothing rendered');
  return rendered;
}

async function applyRendered(api: Api, r: RenderedExtendedDeployment): Promise<void> {
  await api.apply(r.manifest, 'extendeddeployments', true);
  for (const region of r.regions) await api.apply(region.workload, 'replicasets', true);
}

interface Status {
  phase?: string;
  revision?: string;
  totalGroups?: number;
  regions?: { name: string; swappedInPlace?: number; replaced?: number }[];
}

async function readStatus(api: Api, ns: string, name: string): Promise<Status> {
  const ed = await api.request<{ status?: Status }>('GET', `/apis/${GROUP}/${VERSION}/namespaces/${ns}/extendeddeployments/${name}`);
  return ed.status ?? {};
}

// ---------------------------------------------------------------------------------------------------------------
// the pod watch

interface PodView {
  region: string;
  ready: boolean;
  terminating: boolean;
}

/** Every pod of the namespace, from one watch: created UIDs, removals, and per ExtendedDeployment the extremes. */
class PodWatch {
  readonly pods = new Map<string, PodView & { ed: string }>();
  private readonly seen = new Set<string>();
  private window: { ed: string; created: number; removed: number; maxPods: Map<string, number>; minReady: Map<string, number> } | undefined;
  private watch: ReturnType<typeof listWatch> | undefined;

  constructor(
    private readonly api: Api,
    private readonly ns: string,
  ) {}

  async start(): Promise<void> {
    this.watch = listWatch<PodObject>(this.api, `/api/v1/namespaces/${this.ns}/pods`, (type, pod) => this.onEvent(type, pod));
    await this.watch.synced;
  }

  stop(): void {
    this.watch?.stop();
  }

  /** Starts counting for one ExtendedDeployment's rollout. */
  begin(ed: string): void {
    this.window = { ed, created: 0, removed: 0, maxPods: new Map(), minReady: new Map() };
    this.sample();
  }

  end(): { created: number; removed: number; maxPods: number; minReady: number } {
    const w = this.window;
    this.window = undefined;
    if (!w) throw new Error('no window');
    return { created: w.created, removed: w.removed, maxPods: Math.max(...w.maxPods.values()), minReady: Math.min(...w.minReady.values()) };
  }

  private onEvent(type: string, pod: PodObject): void {
    const uid = pod.metadata?.uid ?? '';
    const ed = pod.metadata?.labels?.[NAME_LABEL] ?? '';
    const w = this.window;
    if (type === 'DELETED') {
      if (w && w.ed === ed && this.pods.has(uid) && !this.pods.get(uid)?.terminating) w.removed++;
      this.pods.delete(uid);
    } else {
      if (!this.seen.has(uid)) {
        this.seen.add(uid);
        if (w && w.ed === ed) w.created++;
      }
      const before = this.pods.get(uid);
      const view = {
        ed,
        region: pod.metadata?.labels?.[REGION_LABEL] ?? '',
        ready: pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
        terminating: !!pod.metadata?.deletionTimestamp,
      };
      if (w && w.ed === ed && view.terminating && before && !before.terminating) w.removed++;
      this.pods.set(uid, view);
    }
    this.sample();
  }

  private sample(): void {
    const w = this.window;
    if (!w) return;
    const mine = [...this.pods.values()].filter((p) => p.ed === w.ed);
    for (const region of new Set(mine.map((p) => p.region))) {
      const pods = mine.filter((p) => p.region === region);
      w.maxPods.set(region, Math.max(w.maxPods.get(region) ?? 0, pods.length));
      w.minReady.set(region, Math.min(w.minReady.get(region) ?? Number.POSITIVE_INFINITY, pods.filter((p) => p.ready && !p.terminating).length));
    }
  }
}

interface PodObject extends KubernetesObject {
  status?: { conditions?: { type: string; status: string }[] };
}

// ---------------------------------------------------------------------------------------------------------------
// the run

interface Measurement {
  readonly variant: string;
  readonly run: number;
  readonly seconds: number;
  readonly created: number;
  readonly removed: number;
  readonly maxPods: number;
  readonly minReady: number;
  readonly swapped: number;
  readonly replaced: number;
}

async function waitHealthy(api: Api, ns: string, r: RenderedExtendedDeployment, watch: PodWatch, timeoutMs: number): Promise<Status> {
  const pods = r.regions.reduce((s, x) => s + x.replicas, 0);
  let healthy: Status | undefined;
  await waitUntil(
    `${r.parsed.metadata.name} Healthy at ${r.rolloutRevision}`,
    timeoutMs,
    async () => {
      const s = await readStatus(api, ns, r.parsed.metadata.name);
      if (s.phase !== 'Healthy' || s.revision !== r.rolloutRevision) return false;
      const live = [...watch.pods.values()].filter((p) => p.ed === r.parsed.metadata.name && !p.terminating);
      healthy = live.length === pods && live.every((p) => p.ready) ? s : undefined;
      return healthy !== undefined;
    },
    100,
  );
  return healthy!;
}

interface Row {
  label: string;
  seconds: number;
  all: string;
  created: number;
  removed: number;
  swapped: number;
  maxPods: number;
  minReady: number;
}

/** One bench on the running lab: every variant rolled `--runs` times to a new image of `sizeMb`; a row per variant. */
async function measure(api: Api, kubeconfig: string, o: Options, sizeMb: number): Promise<Row[]> {
  const id = randomBytes(3).toString('hex');
  const ns = `bench-inplace-${id}`;
  const regions = labDeployRegions(`bi-${id}`, o.regions);
  const vs = variants(o);
  const rollouts = o.runs * vs.length;
  log(`namespace ${ns}; ${o.regions} regions × ${o.replicas} pods, Beta batch ${o.batch}; ${o.runs} runs × ${vs.length} variants = ${rollouts} rollouts`);
  await api.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, 'namespaces', false);
  await waitUntil('the namespace default ServiceAccount', 60_000, () =>
    api.request('GET', `/api/v1/namespaces/${ns}/serviceaccounts/default`).then(() => true),
  );
  for (const r of regions) await api.apply(r, 'deployregions', false);
  const watch = new PodWatch(api, ns);
  await watch.start();
  const agent = new AgentChild(namespacedAgentArgs(kubeconfig, ns, `bench-${ns}`, 2), o.agentLog);
  const measurements: Measurement[] = [];
  try {
    await agent.waitLeading(120_000);
    // v1 everywhere, untimed.
    const image = (v: number) => `registry.example/bench-${sizeMb}mb:${v}`;
    for (const v of vs) await applyRendered(api, renderEd(ns, regions, v, o, image(1)));
    for (const v of vs) await waitHealthy(api, ns, renderEd(ns, regions, v, o, image(1)), watch, o.timeoutSeconds * 1000);
    for (let run = 1; run <= o.runs; run++) {
      const order = vs.map((_, i) => vs[(i + run - 1) % vs.length]!);
      for (const v of order) {
        const next = renderEd(ns, regions, v, o, image(run + 1));
        watch.begin(v.key);
        const started = performance.now();
        await applyRendered(api, next);
        const status = await waitHealthy(api, ns, next, watch, o.timeoutSeconds * 1000);
        const seconds = (performance.now() - started) / 1000;
        const pods = watch.end();
        const swapped = (status.regions ?? []).reduce((s, r) => s + (r.swappedInPlace ?? 0), 0);
        const replaced = (status.regions ?? []).reduce((s, r) => s + (r.replaced ?? 0), 0);
        measurements.push({ variant: v.key, run, seconds, ...pods, swapped, replaced });
        log(
          `  run ${run} ${v.label}: ${seconds.toFixed(1)} s, ${pods.created} pods created, ${pods.removed} removed, ${swapped} swapped in place, ${status.totalGroups ?? '?'} groups`,
        );
      }
    }
  } finally {
    await agent.stop();
    watch.stop();
    for (const v of vs) await api.deleteIgnoringMissing(`/apis/${GROUP}/${VERSION}/namespaces/${ns}/extendeddeployments/${v.key}`).catch(() => undefined);
    await api.deleteIgnoringMissing(`/api/v1/namespaces/${ns}`).catch(() => undefined);
    for (const r of regions) await api.deleteIgnoringMissing(`/apis/${GROUP}/${VERSION}/deployregions/${r.metadata?.name}`).catch(() => undefined);
  }

  return vs.map((v) => {
    const ms = measurements.filter((m) => m.variant === v.key);
    return {
      label: v.label,
      seconds: median(ms.map((m) => m.seconds)),
      all: ms.map((m) => m.seconds.toFixed(1)).join(' / '),
      created: median(ms.map((m) => m.created)),
      removed: median(ms.map((m) => m.removed)),
      swapped: median(ms.map((m) => m.swapped)),
      maxPods: Math.max(...ms.map((m) => m.maxPods)),
      minReady: Math.min(...ms.map((m) => m.minReady)),
    };
  });
}

// ---------------------------------------------------------------------------------------------------------------
// the lab of the bench

const benchLabDir = process.env['LAB_DIR'] || join(repoRoot, '.lab', 'bench-inplace');

function labCli(args: readonly string[], quiet = false): number {
  const r = spawnSync(join(repoRoot, 'node_modules', '.bin', 'tsx'), [join(repoRoot, 'test', 'cluster', 'cli.ts'), ...args], {
    cwd: repoRoot,
    env: { ...process.env, LAB_DIR: benchLabDir },
    // the lab CLI's stdout (its `export KUBECONFIG=…` line) goes to stderr: stdout is the report
    stdio: ['ignore', quiet ? 'ignore' : 2, quiet ? 'ignore' : 2],
  });
  return r.status ?? 1;
}

/** The timings of the lab in the bench's LAB_DIR when it is healthy, else undefined. */
function runningLab(): Timings | undefined {
  if (labCli(['status'], true) !== 0) return undefined;
  try {
    return (JSON.parse(readFileSync(join(benchLabDir, 'state.json'), 'utf8')) as { timings?: Timings }).timings ?? 'kwok';
  } catch {
    return 'kwok';
  }
}

function labUp(timings: Timings): void {
  log(`lab ${benchLabDir}: ${timings} timings`);
  if (labCli(['up', '--timings', timings]) !== 0) throw new Error(`the lab did not start with ${timings} timings`);
}

// ---------------------------------------------------------------------------------------------------------------
// the report

const REALISTIC_NOTE = (mb: number) => {
  const image = `x-${mb}mb`;
  const pull = `${pullSeconds(image, 'min').toFixed(1)}-${pullSeconds(image, 'max').toFixed(1)} s`;
  return `realistic timings (kwok-realistic.yaml), image ${mb} MB: pull ${pull} at every container start`;
};

function table(title: string, rows: readonly Row[]): string[] {
  const header = ['variant', 'median s', 'runs (s)', 'pods created', 'pods removed', 'swapped in place', 'most pods/region', 'fewest ready/region'];
  const cells = rows.map((r) => [
    r.label,
    r.seconds.toFixed(1),
    r.all,
    String(r.created),
    String(r.removed),
    String(r.swapped),
    String(r.maxPods),
    String(r.minReady),
  ]);
  const out = ['', title, ...textTable(header, cells)];
  const replace = rows.find((r) => r.label.startsWith('replacement'));
  for (const r of rows.filter((x) => x !== replace)) {
    if (replace && replace.seconds > 0)
      out.push(`ratio ${r.label} / replacement: ${(r.seconds / replace.seconds).toFixed(2)} (time), pods created ${r.created} vs ${replace.created}`);
  }
  return out;
}

async function main(argv: readonly string[]): Promise<void> {
  const o = options(argv);
  const t0 = Date.now();
  const found = runningLab();
  const results: { title: string; key: string; rows: Row[] }[] = [];
  try {
    for (const timings of o.timings) {
      labUp(timings);
      const kubeconfig = join(benchLabDir, 'kubeconfig');
      const api = new Api(kubeconfig);
      await installCrds(api);
      for (const mb of timings === 'kwok' ? [o.imageSizes[0]!] : o.imageSizes) {
        const title =
          timings === 'kwok'
            ? 'kwok timings (kwok.yaml, the lab default): no image pulls, probes ignored; a new pod is Ready 0.2-1 s after it is bound, a restarted container 1.5-3 s after its restart, and every pod change restarts the pending delay'
            : REALISTIC_NOTE(mb);
        log(title);
        results.push({ title, key: timings === 'kwok' ? 'kwok (any size)' : `realistic ${mb} MB`, rows: await measure(api, kubeconfig, o, mb) });
      }
    }
  } finally {
    if (!found && !o.keepLab) {
      log(`stopping the lab the bench started (${benchLabDir})`);
      labCli(['down']);
    } else if (found && o.timings[o.timings.length - 1] !== found) labUp(found);
  }

  const total = o.regions * o.replicas;
  const out = [
    `bench:inplace — image-only rollout of ${total} pods (${o.regions} regions × ${o.replicas}), Beta batch ${o.batch}, scaleOutPriority, minReadySeconds 1, no gates, readiness probe ${o.probePeriod > 0 ? `every ${o.probePeriod} s` : 'none'}; ${o.runs} runs, medians`,
    'realistic timings: one table (test/cluster/realistic-timings.ts), sources in the header of bench/inplace.ts and test/cluster/kwok-realistic.yaml',
    ...results.flatMap((r) => table(r.title, r.rows)),
    '',
    'summary (median s):',
  ];
  const labels = results[0]?.rows.map((r) => r.label) ?? [];
  const ratioLabels = labels.filter((l) => !l.startsWith('replacement')).map((l) => `${l.replace(/ \(.*\)$/, '')} ${/\((.*)\)/.exec(l)?.[1] ?? ''} / repl.`);
  out.push(
    ...textTable(
      ['timings', ...labels, ...ratioLabels],
      results.map((r) => {
        const repl = r.rows.find((x) => x.label.startsWith('replacement'))?.seconds ?? Number.NaN;
        return [
          r.key,
          ...r.rows.map((x) => x.seconds.toFixed(1)),
          ...r.rows.filter((x) => !x.label.startsWith('replacement')).map((x) => (x.seconds / repl).toFixed(2)),
        ];
      }),
    ),
  );
  out.push(`total bench time ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  process.stdout.write(`${out.join('\n')}\n`);
}

await runBench(import.meta.url, main);
