// Shared pieces of the rollout end-to-end suites (rollout.e2e.test.ts, compat-mode.e2e.test.ts): CRDs, three
// DeployRegions per test on disjoint node sets, ExtendedDeployment manifests rendered by core and applied as a GitOps
// tool would (server-side apply), the agent in-process, the invariant watcher beside it, `edctl` controls, and the
// rollout followed gate by gate against core's simulateRollout.
import type { KubeConfig, KubernetesObject, V1Pod } from '@kubernetes/client-node';
import { expect } from 'vitest';
import { startAgent, type Agent } from '../../agent/agent.js';
import { impersonating, renderedIdentity, type AgentIdentity } from './agent-identity.js';
import { jsonLogger, silentLogger } from '../../agent/runtime/log.js';
import { run } from '../../cli/run.js';
import type { ExtendedDeploymentStatus } from '../../core/api/extended-deployment.js';
import { NAME_LABEL, REGION_LABEL, REVISION_LABEL } from '../../core/labels.js';
import { renderSet, type RenderedExtendedDeployment } from '../../core/render.js';
import { startFromRender } from '../../core/simulate/from-render.js';
import { simulateRollout, type Simulation } from '../../core/simulate/simulate.js';
import { isPodActive } from '../../core/rollout/pod-activity.js';
import { kubeconfigPath } from '../cluster/lab.js';
import { clients, serverSideApply, sleep, uniqueName, waitFor } from './helpers.js';
import { waitMatchesGit } from './git-match.js';
import { start as startWatcher, stopAndReport, type InvariantWatch, type Violation } from './invariants.js';

export const GROUP = 'extendeddeployment.io';
export const VERSION = 'v1beta1';
export const ED_NAME = 'web';

import { installCrds } from './crds.js';

export { installCrds };

/** Node sets of the lab (disjoint): general-pool nodes of zone-a (amd64), zone-b (amd64) and zone-c (arm64). */
const NODE_SETS = [
  { 'extendeddeployment.io/pool': 'general', 'kubernetes.io/arch': 'amd64', 'topology.kubernetes.io/zone': 'zone-a' },
  { 'extendeddeployment.io/pool': 'general', 'kubernetes.io/arch': 'amd64', 'topology.kubernetes.io/zone': 'zone-b' },
  { 'extendeddeployment.io/pool': 'general', 'kubernetes.io/arch': 'arm64', 'topology.kubernetes.io/zone': 'zone-c' },
] as const;

/** Three DeployRegions named per test (they are cluster-scoped): `a-<suffix>`, `b-<suffix>`, `c-<suffix>`. */
export function deployRegions(suffix: string): KubernetesObject[] {
  return ['a', 'b', 'c'].map((letter, i) => ({
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'DeployRegion',
    metadata: { name: `${letter}-${suffix}` },
    spec: { matchLabels: { ...NODE_SETS[i] } },
  }));
}

export interface EdOptions {
  readonly image: string;
  /** Replicas per region, in the order a, b, c (a region with undefined is left out). */
  readonly replicas: readonly (number | undefined)[];
  readonly strategy?: Record<string, unknown>;
  /** Per-region overrides by region letter (a, b, c). */
  readonly overrides?: Readonly<Record<string, Record<string, unknown>>>;
  /** Per-region partitions by region letter (a, b, c): old pods the region keeps. */
  readonly partitions?: Readonly<Record<string, number | string>>;
  /** Per-region `adopt` references by region letter (a, b, c). */
  readonly adopt?: Readonly<Record<string, { kind: 'Deployment' | 'ReplicaSet' | 'InplaceSet'; name: string }>>;
  readonly subsetType?: 'ReplicaSet' | 'Deployment' | 'StatefulSet';
  /** spec.statefulSet (StatefulSet regions). */
  readonly statefulSet?: Record<string, unknown>;
  /** Fields added to the container (volumeMounts, say). */
  readonly container?: Record<string, unknown>;
  /** Labels added to the pod template, and fields of its spec (replacing the defaults: terminationGracePeriodSeconds 0). */
  readonly pod?: { readonly labels?: Record<string, string>; readonly spec?: Record<string, unknown> };
}

/** An ExtendedDeployment as Git holds it. Small pods, no grace period, minReadySeconds 1 unless the strategy says otherwise. */
export function extendedDeployment(ns: string, suffix: string, o: EdOptions): Record<string, unknown> {
  const regions = ['a', 'b', 'c'].flatMap((letter, i) => {
    const replicas = o.replicas[i];
    if (replicas === undefined) return [];
    const overrides = o.overrides?.[letter];
    const partition = o.partitions?.[letter];
    const adopt = o.adopt?.[letter];
    return [{ name: `${letter}-${suffix}`, replicas, ...(partition !== undefined && { partition }), ...(overrides && { overrides }), ...(adopt && { adopt }) }];
  });
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'ExtendedDeployment',
    metadata: { name: ED_NAME, namespace: ns },
    spec: {
      ...(o.subsetType && { subsetType: o.subsetType }),
      ...(o.statefulSet && { statefulSet: o.statefulSet }),
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web', ...o.pod?.labels } },
        spec: {
          terminationGracePeriodSeconds: 0,
          ...o.pod?.spec,
          containers: [{ name: 'app', image: o.image, resources: { requests: { cpu: '50m', memory: '32Mi' } }, ...o.container }],
        },
      },
      regions,
      strategy: { minReadySeconds: 1, batchSize: 1, ...o.strategy },
    },
  };
}

/** Renders DeployRegions and one ExtendedDeployment with core, as `cdk8s synth` / `edctl render` would. */
export function render(objects: readonly unknown[]): RenderedExtendedDeployment {
  const result = renderSet(objects);
  if (!result.ok) throw new Error(`render failed: ${JSON.stringify(result.problems)}`);
  const [ed] = result.value.extendedDeployments;
  if (!ed) throw new Error('nothing rendered');
  return ed;
}

/** Applies the rendered ExtendedDeployment and its regional workloads as a GitOps tool would (ED first). */
export async function apply(ed: RenderedExtendedDeployment, parts: 'all' | 'ed' | 'workloads' = 'all'): Promise<void> {
  if (parts !== 'workloads') await serverSideApply(ed.manifest as KubernetesObject);
  if (parts !== 'ed') for (const region of ed.regions) await serverSideApply(region.workload as KubernetesObject);
}

export interface EdObject {
  metadata?: { resourceVersion?: string; generation?: number; annotations?: Record<string, string> };
  status?: ExtendedDeploymentStatus;
}

export async function readEd(ns: string): Promise<EdObject> {
  return clients().objects.read<EdObject>({ apiVersion: `${GROUP}/${VERSION}`, kind: 'ExtendedDeployment', metadata: { name: ED_NAME, namespace: ns } });
}

export async function readStatus(ns: string): Promise<ExtendedDeploymentStatus> {
  return (await readEd(ns)).status ?? {};
}

export interface RegionPods {
  readonly name: string;
  readonly updated: number;
  readonly old: number;
}

/** An Event as the tests read it. */
export interface EdEvent {
  readonly type: string;
  readonly reason: string;
  readonly message: string;
}

/** How long `edEvents` reads again for the Events `until` expects. */
const EVENTS_WAIT_MS = 30_000;

/**
 * The Events recorded on the ExtendedDeployment `name` (the kit's object unless named). The agent creates Events after
 * the status write they go with, off the reconcile's path, so a test that has just seen the status can list before
 * they exist: with `until`, the list is read again until `until` holds of it, for up to 30 s; then the last list is
 * returned, for the test's assertion to fail on with what was there.
 */
export async function edEvents(ns: string, { until, name = ED_NAME }: { until?: (events: EdEvent[]) => boolean; name?: string } = {}): Promise<EdEvent[]> {
  const read = async (): Promise<EdEvent[]> =>
    (await clients().core.listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.name=${name}` })).items
      .filter((e) => e.involvedObject.kind === 'ExtendedDeployment')
      .map((e) => ({ type: e.type ?? '', reason: e.reason ?? '', message: e.message ?? '' }));
  const deadline = Date.now() + EVENTS_WAIT_MS;
  for (;;) {
    const events = await read();
    if (!until || until(events) || Date.now() > deadline) return events;
    await sleep(250);
  }
}

/** Whether `event` is the RolloutCompleted Event of `revision`. */
const completes = (event: EdEvent, revision: string) => event.reason === 'RolloutCompleted' && event.message.includes(revision);

/** For `edEvents`' `until`: the RolloutCompleted Event of `revision` is there. */
export function completedEvent(revision: string): (events: EdEvent[]) => boolean {
  return (events) => events.some((e) => completes(e, revision));
}

/** The RolloutCompleted Event of `revision`, once there (undefined after `edEvents`' wait). */
export async function completedEventOf(ns: string, revision: string): Promise<EdEvent | undefined> {
  return (await edEvents(ns, { until: completedEvent(revision) })).find((e) => completes(e, revision));
}

/** Every pod of the ExtendedDeployment, Failed and terminating ones included. */
export async function edPods(ns: string): Promise<V1Pod[]> {
  return (await clients().core.listNamespacedPod({ namespace: ns, labelSelector: `${NAME_LABEL}=${ED_NAME}` })).items;
}

/** Whether a pod counts as the ReplicaSet controller and the agent count it: neither Failed/Succeeded nor terminating. */
export function isLive(pod: V1Pod): boolean {
  return isPodActive({ phase: pod.status?.phase, terminating: !!pod.metadata?.deletionTimestamp });
}

/** Live pods (see isLive) per region: at the region's rendered revision, and the others. */
export async function podCounts(ns: string, rendered: RenderedExtendedDeployment): Promise<RegionPods[]> {
  const pods = (await edPods(ns)).filter(isLive);
  return rendered.regions.map((r) => {
    const mine = pods.filter((p) => p.metadata?.labels?.[REGION_LABEL] === r.name);
    const updated = mine.filter((p) => p.metadata?.labels?.[REVISION_LABEL] === r.revision).length;
    return { name: r.name, updated, old: mine.length - updated };
  });
}

/** Live pods per region and revision: `{region: {revision: count}}`, the starting point of a simulation. */
export async function runningByRevision(ns: string): Promise<Record<string, Record<string, number>>> {
  const pods = (await edPods(ns)).filter(isLive);
  const out: Record<string, Record<string, number>> = {};
  for (const p of pods) {
    const region = p.metadata?.labels?.[REGION_LABEL] ?? '';
    const revision = p.metadata?.labels?.[REVISION_LABEL] ?? '';
    const byRevision = (out[region] ??= {});
    byRevision[revision] = (byRevision[revision] ?? 0) + 1;
  }
  return out;
}

/** `edctl <command> web -n <ns>` against the lab; returns the exit code. */
export function edctl(ns: string, command: 'approve' | 'pause' | 'resume' | 'abort'): Promise<number> {
  return run([command, ED_NAME, '-n', ns, '--kubeconfig', kubeconfigPath()]);
}

/** Waits until the status reports `phase` in `group` of rollout `revision`. */
export async function waitForPhase(
  ns: string,
  revision: string,
  group: number,
  phase: string,
  timeoutMs = 180_000,
  rendered?: RenderedExtendedDeployment,
): Promise<ExtendedDeploymentStatus> {
  return waitFor(
    `rollout ${revision}: ${phase} in group ${group}`,
    async () => {
      const s = await readStatus(ns);
      return s.revision === revision && s.currentGroup === group && s.phase === phase ? s : undefined;
    },
    { timeoutMs, describe: async () => ({ status: await readStatus(ns), pods: rendered ? await podCounts(ns, rendered) : undefined }) },
  );
}

/** Waits until the live pods per region are exactly `expected` (terminating pods gone). */
export async function waitForPods(
  ns: string,
  rendered: RenderedExtendedDeployment,
  expected: readonly RegionPods[],
  what: string,
  timeoutMs = 60_000,
): Promise<void> {
  await waitFor(
    `${what}: pods per region ${JSON.stringify(expected)}`,
    async () => JSON.stringify(await podCounts(ns, rendered)) === JSON.stringify(expected),
    {
      timeoutMs,
      describe: async () => ({ expected, actual: await podCounts(ns, rendered), status: await readStatus(ns) }),
    },
  );
}

/**
 * Lets the rollout go on when it waits for confirmation: `edctl approve`, as an operator would. A gated
 * ExtendedDeployment is created by groups too (Beta: one pod per region first), so filling one passes its gates.
 */
export async function approveIfWaiting(ns: string): Promise<void> {
  if ((await readStatus(ns)).phase === 'WaitingForConfirmation') expect(await edctl(ns, 'approve')).toBe(0);
}

/**
 * Waits until every region of `rendered` runs exactly its replicas at its revision and nothing else, approving the
 * gates on the way: a gated ExtendedDeployment is created by groups too.
 */
export async function waitFilled(ns: string, rendered: RenderedExtendedDeployment, what: string, timeoutMs = 150_000): Promise<void> {
  const expected = rendered.regions.map((r) => ({ name: r.name, updated: r.replicas, old: 0 }));
  await waitFor(
    `${what}: pods per region ${JSON.stringify(expected)}`,
    async () => {
      await approveIfWaiting(ns);
      return JSON.stringify(await podCounts(ns, rendered)) === JSON.stringify(expected);
    },
    { timeoutMs, describe: async () => ({ expected, actual: await podCounts(ns, rendered), status: await readStatus(ns) }) },
  );
}

/** Applies the ExtendedDeployment rendered from `o` and waits until every region runs it and nothing else, Healthy. */
export async function fill(env: RolloutEnv, o: EdOptions): Promise<RenderedExtendedDeployment> {
  const v1 = env.render(o);
  await apply(v1);
  await waitFilled(env.ns, v1, `${o.image} filled`);
  await waitFor(
    `${o.image} Healthy`,
    async () => {
      const s = await readStatus(env.ns);
      return s.phase === 'Healthy' && s.revision === v1.rolloutRevision;
    },
    { timeoutMs: 60_000, describe: () => readStatus(env.ns) },
  );
  return v1;
}

/** Fails if the new-revision pods per region change during `ms` (a gate, pause or abort holds). */
export async function assertHolds(
  ns: string,
  rendered: RenderedExtendedDeployment,
  ms: number,
  expectStatus: (s: ExtendedDeploymentStatus) => void,
): Promise<RegionPods[]> {
  const before = await podCounts(ns, rendered);
  const until = Date.now() + ms;
  while (Date.now() < until) {
    await sleep(500);
    expect(await podCounts(ns, rendered)).toEqual(before);
    expectStatus(await readStatus(ns));
  }
  return before;
}

/** What simulateRollout predicts from what the pods run now, toward `to`. */
export async function simulateFromCluster(ns: string, to: RenderedExtendedDeployment): Promise<Simulation> {
  const running = await runningByRevision(ns);
  return simulateRollout(
    startFromRender(to, (name) => {
      const pods = running[name] ?? {};
      return { replicas: Object.values(pods).reduce((a, b) => a + b, 0), running: pods };
    }),
  );
}

/** What simulateRollout predicts for creating `to` from nothing (Git creates its ReplicaSets with one replica). */
export function simulateCreation(to: RenderedExtendedDeployment): Simulation {
  return simulateRollout(startFromRender(to, () => ({ replicas: undefined, running: {} })));
}

/** One group boundary as observed: the group, and new/old pods per region. */
export interface ObservedGroup {
  readonly group: number;
  readonly regions: readonly RegionPods[];
}

/**
 * Follows a rollout toward `to` gate by gate (confirmation on): at each gate (WaitingForConfirmation, and Healthy after
 * the last group) the status must show the simulated group and the pods per region must be exactly what `sim`
 * predicts for it; then `edctl approve` lets the next group start. `fromGroup` skips groups already passed. With
 * `watch`, the cluster must match Git at the end (git-match.ts). Returns what was observed after every group.
 */
export async function rollThroughGates(
  ns: string,
  to: RenderedExtendedDeployment,
  sim: Simulation,
  fromGroup = 1,
  watch?: InvariantWatch,
): Promise<ObservedGroup[]> {
  const observed: ObservedGroup[] = [];
  for (const group of sim.groups.filter((g) => g.group >= fromGroup)) {
    const last = group.group === sim.totalGroups;
    const status = await waitForPhase(ns, to.rolloutRevision, group.group, last ? 'Healthy' : 'WaitingForConfirmation', 180_000, to);
    expect(status.totalGroups).toBe(sim.totalGroups);
    // The gate holds the pods where the group left them: once terminating pods are gone, they match the simulation.
    const expected = group.regions.map((r) => ({ name: r.name, updated: r.updated, old: r.old }));
    await waitForPods(ns, to, expected, `group ${group.group}`);
    observed.push({ group: group.group, regions: await podCounts(ns, to) });
    if (!last) expect(await edctl(ns, 'approve')).toBe(0);
  }
  if (watch) expect(await waitMatchesGit(watch, to), 'the cluster matches Git').toEqual([]);
  return observed;
}

/** Everything a rollout test runs beside: its regions, the agent, the invariant watcher. */
export interface RolloutEnv {
  readonly ns: string;
  readonly suffix: string;
  readonly regions: readonly KubernetesObject[];
  readonly agent: Agent;
  readonly watch: InvariantWatch;
  /** Renders the ExtendedDeployment with these options against this test's regions. */
  render(o: EdOptions): RenderedExtendedDeployment;
}

/** Options of {@link withRolloutEnv}. */
export interface RolloutEnvOptions {
  /** The agent talks to the API server through this (e.g. a proxy's), still as the rendered install's ServiceAccount. */
  readonly agentKubeConfig?: KubeConfig;
  /** Rules a test breaks on purpose from outside the agent (failed nodes take their pods out of service: `floor`). */
  readonly ignore?: readonly Violation['kind'][];
  /** The test's DeployRegions (default deployRegions: `a-`, `b-`, `c-<suffix>` by matchLabels). */
  readonly regions?: (suffix: string) => KubernetesObject[];
  /** The agent's identity is the install with AgentInstall's `traffic` on (its `<name>-traffic` role). */
  readonly traffic?: boolean;
}

/**
 * Creates three DeployRegions for the test, starts the invariant watcher and the agent (in-process, as the rendered
 * install's ServiceAccount with only its RBAC and under its admission policies, leader election on a Lease in the
 * test namespace), runs `body`, then stops both, prints what the watcher saw and fails on any violation.
 */
export async function withRolloutEnv(ns: string, label: string, body: (env: RolloutEnv) => Promise<void>, options: RolloutEnvOptions = {}): Promise<void> {
  await installCrds();
  const suffix = uniqueName('r').slice(2);
  const regions = (options.regions ?? deployRegions)(suffix);
  for (const region of regions) await serverSideApply(region);
  const watch = await startWatcher({ kubeConfig: clients().kc, namespace: ns, name: ED_NAME });
  let agent: Agent | undefined;
  let identity: AgentIdentity | undefined;
  let failed = false;
  try {
    // The agent runs with exactly the rendered install's RBAC and admission policies (the rollout suite passes with
    // that ClusterRole and under those policies), also through a proxy: it forwards the Impersonate-User header.
    identity = await renderedIdentity(ns, suffix, { traffic: options.traffic ?? false });
    const kubeConfig = options.agentKubeConfig ? impersonating(options.agentKubeConfig, identity.subject) : identity.kubeConfig;
    agent = await startAgent({
      kubeConfig,
      // E2E_AGENT_LOG=1 prints the agent's log (JSON lines on stderr) when a suite needs explaining.
      log: process.env['E2E_AGENT_LOG'] ? jsonLogger({ level: 'info', write: (l) => process.stderr.write(l + '\n') }) : silentLogger,
      namespaces: [ns],
      metricsBindAddress: '127.0.0.1:0',
      healthProbeBindAddress: '127.0.0.1:0',
      leaseNamespace: ns,
      identity: `e2e-${label}`,
      workers: 2,
    });
    const env: RolloutEnv = {
      ns,
      suffix,
      regions,
      agent,
      watch,
      render: (o) => render([...regions, extendedDeployment(ns, suffix, o)]),
    };
    await body(env);
  } catch (e) {
    failed = true;
    throw e;
  } finally {
    await agent?.stop();
    await identity?.remove();
    // Ignored rules are still printed, only not failed on.
    const violations = (await stopAndReport(watch, label, failed)).filter((v) => !options.ignore?.includes(v.kind));
    for (const region of regions) {
      try {
        await clients().objects.delete(region);
      } catch {
        // already gone
      }
    }
    if (!failed) expect(violations).toEqual([]);
  }
}

/**
 * Per region, the most pods (terminating included) and the fewest available pods among the states the watcher saw
 * since `since` (ms), in declared order.
 */
export function observedExtremes(watch: InvariantWatch, since: number, regions: readonly string[]): { name: string; maxPods: number; minAvailable: number }[] {
  const states = watch.samples.filter((s) => s.at >= since);
  return regions.map((name) => {
    const parts = states.map((s) => s.regions[name]?.split('/').map(Number)).filter((p): p is number[] => p !== undefined);
    return { name, maxPods: Math.max(...parts.map((p) => p[0] ?? 0)), minAvailable: Math.min(...parts.map((p) => p[2] ?? 0)) };
  });
}

/** The agent's Prometheus text, as /metrics serves it. */
export async function agentMetrics(agent: Agent): Promise<string> {
  return (await fetch(`http://127.0.0.1:${agent.address.port}/metrics`)).text();
}

/** Sum of a counter's samples in Prometheus text (every label set). */
export function counterSum(metrics: string, name: string): number {
  return metrics
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

/** extendeddeployment_agent_api_requests_total as `{ "<VERB> <resource>": count }`. */
export function apiRequests(metrics: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of metrics.split('\n')) {
    if (!line.startsWith('extendeddeployment_agent_api_requests_total{')) continue;
    const verb = /verb="([^"]*)"/.exec(line)?.[1] ?? '?';
    const resource = /resource="([^"]*)"/.exec(line)?.[1] ?? '?';
    out[`${verb} ${resource}`] = Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return out;
}

/** Sum of a counter's samples for one label value. */
export function counterValue(metrics: string, name: string, label: string, value: string): number {
  return metrics
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) && l.includes(`${label}="${value}"`))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}
