/**
 * bench/inplace: a full image-only rollout on the lab cluster, done in place (updateStrategy InPlaceIfPossible) and by
 * replacement (updateStrategy ReCreate), in the same run. Prints a table and the ratio; asserts nothing about time.
 *
 *   npm run bench:inplace -- [--regions 3] [--replicas 4] [--batch 2] [--runs 3] [--grace 5] [--agent-log <file>]
 *
 * Setup: the lab is reused when healthy, else started with its own CLI (`tsx test/cluster/cli.ts up`); the CRDs of
 * crds/ are applied; one namespace and `--regions` DeployRegions on the lab's general-pool nodes (zone-a amd64, zone-b
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
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import type { KubernetesObject } from '@kubernetes/client-node';
import { NAME_LABEL, REGION_LABEL } from '../core/labels.js';
import { renderSet, type RenderedExtendedDeployment } from '../core/render.js';
import { median, textTable } from './figures.js';
import { AgentChild } from './agent-child.js';
import { Api, GROUP, VERSION, ensureLab, installCrds, kubeconfigPath, labDeployRegions, listWatch, log, waitUntil } from './lab-kit.js';

// ---------------------------------------------------------------------------------------------------------------
// options

interface Options {
  readonly regions: number;
  readonly replicas: number;
  readonly batch: number;
  readonly runs: number;
  readonly grace: number;
  readonly timeoutSeconds: number;
  /** Write the agent's log lines to this file. */
  readonly agentLog: string | undefined;
}

function options(): Options {
  const { values } = parseArgs({
    options: {
      regions: { type: 'string', default: '3' },
      replicas: { type: 'string', default: '4' },
      batch: { type: 'string', default: '2' },
      runs: { type: 'string', default: '3' },
      grace: { type: 'string', default: '5' },
      'timeout-seconds': { type: 'string', default: '300' },
      'agent-log': { type: 'string' },
    },
  });
  const int = (name: string, v: string | undefined, min: number) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be an integer >= ${min}`);
    return n;
  };
  const regions = int('regions', values.regions, 1);
  if (regions > 3) throw new Error('--regions: the lab has three general-pool node sets');
  return {
    regions,
    replicas: int('replicas', values.replicas, 1),
    batch: int('batch', values.batch, 1),
    runs: int('runs', values.runs, 1),
    grace: int('grace', values.grace, 0),
    timeoutSeconds: int('timeout-seconds', values['timeout-seconds'], 10),
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
        spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'app', image, resources: { requests: { cpu: '10m', memory: '16Mi' } } }] },
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

async function main(): Promise<void> {
  const o = options();
  ensureLab();
  const api = new Api(kubeconfigPath);
  await installCrds(api);
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
  const agent = new AgentChild(
    [
      '--kubeconfig',
      kubeconfigPath,
      '--namespace',
      ns,
      '--lease-namespace',
      ns,
      '--metrics-bind-address',
      '127.0.0.1:0',
      '--health-probe-bind-address',
      '127.0.0.1:0',
      '--identity',
      `bench-${ns}`,
      '--workers',
      '2',
    ],
    o.agentLog,
  );
  const measurements: Measurement[] = [];
  const t0 = Date.now();
  try {
    await agent.waitLeading(120_000);
    // v1 everywhere, untimed.
    const image = (v: number) => `registry.example/bench:${v}`;
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

  // ---- report
  const rows = vs.map((v) => {
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
  const total = o.regions * o.replicas;
  const out = [
    `bench:inplace — image-only rollout of ${total} pods (${o.regions} regions × ${o.replicas}), Beta batch ${o.batch}, scaleOutPriority, minReadySeconds 1, no gates; ${o.runs} runs, medians`,
    'lab caveat: kwok has no image pulls and no scheduling cost; a new pod is Running and Ready ~0.2-1 s after it is bound, while a restarted container (an in-place swap) becomes ready 1.5-4.5 s after its restart (kwok.yaml delays)',
    ...textTable(header, cells),
  ];
  const replace = rows.find((r) => r.label.startsWith('replacement'));
  for (const r of rows.filter((x) => x !== replace)) {
    if (replace && replace.seconds > 0)
      out.push(`ratio ${r.label} / replacement: ${(r.seconds / replace.seconds).toFixed(2)} (time), pods created ${r.created} vs ${replace.created}`);
  }
  out.push(`total bench time ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  process.stdout.write(`${out.join('\n')}\n`);
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    log(`failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    process.exit(1);
  },
);
