// The history end to end (issue 18): on the lab, with the agent in-process under the rendered install's RBAC and
// admission policies, every rollout revision that becomes current is recorded as a ControllerRevision owned by the
// ExtendedDeployment, holding the templates the regional workloads ran; `edctl history` lists them in order and
// `--revision` prints one's templates; a revert renumbers a revision; spec.historyLimit prunes the oldest.
import { expect, vi } from 'vitest';
import { parse } from 'yaml';
import { run } from '../../cli/run.js';
import type { HistoryItem } from '../../cli/commands/history.js';
import type { RegionTemplate } from '../../core/history/entries.js';
import { CHANGE_CAUSE_ANNOTATION, NAME_LABEL } from '../../core/labels.js';
import type { RenderedExtendedDeployment } from '../../core/render.js';
import { kubeconfigPath } from '../cluster/lab.js';
import { clients, test, waitFor } from './helpers.js';
import { apply, ED_NAME, extendedDeployment, podCounts, readStatus, render, withRolloutEnv, type RolloutEnv } from './rollout-kit.js';

/** `edctl history web -n <ns> <args>` in-process, its stdout captured; fails on a non-zero exit. */
async function history(ns: string, ...args: string[]): Promise<string> {
  let out = '';
  let err = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((out += String(chunk)), true));
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((err += String(chunk)), true));
  try {
    const code = await run(['history', ED_NAME, '-n', ns, '--kubeconfig', kubeconfigPath(), ...args]);
    expect(code, err).toBe(0);
    return out;
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}

/** The ExtendedDeployment running `image` in regions a (2 replicas) and b (1), with a change cause and maybe a historyLimit. */
function release(env: RolloutEnv, image: string, historyLimit?: number): RenderedExtendedDeployment {
  const ed = extendedDeployment(env.ns, env.suffix, { image, replicas: [2, 1, undefined] }) as { metadata: object; spec: object };
  return render([
    ...env.regions,
    {
      ...ed,
      metadata: { ...ed.metadata, annotations: { [CHANGE_CAUSE_ANNOTATION]: `roll ${image}` } },
      spec: { ...ed.spec, ...(historyLimit !== undefined && { historyLimit }) },
    },
  ]);
}

/** Applies `to` as Git would and waits until every pod runs it and the rollout is Healthy. */
async function rollTo(ns: string, to: RenderedExtendedDeployment): Promise<void> {
  await apply(to);
  const expected = JSON.stringify(to.regions.map((r) => ({ name: r.name, updated: r.replicas, old: 0 })));
  await waitFor(
    `${to.rolloutRevision} rolled out and Healthy`,
    async () => {
      const s = await readStatus(ns);
      return s.phase === 'Healthy' && s.revision === to.rolloutRevision && JSON.stringify(await podCounts(ns, to)) === expected;
    },
    { timeoutMs: 180_000, describe: async () => ({ status: await readStatus(ns), pods: await podCounts(ns, to) }) },
  );
}

/** The ControllerRevisions labelled with the ExtendedDeployment's name, as `name#revision`, oldest first. */
async function recorded(ns: string): Promise<string[]> {
  const list = await clients().apps.listNamespacedControllerRevision({ namespace: ns, labelSelector: `${NAME_LABEL}=${ED_NAME}` });
  return list.items.sort((a, b) => a.revision - b.revision).map((r) => `${r.metadata?.name}#${r.revision}`);
}

test('the agent records each rollout revision; edctl history lists them in order and prints one; a revert renumbers; historyLimit prunes', async ({ ns }) => {
  await withRolloutEnv(ns, 'history', async (env) => {
    const images = ['registry.example/web:1', 'registry.example/web:2', 'registry.example/web:3'];
    const releases = images.map((image) => release(env, image));
    const names = releases.map((r) => `${ED_NAME}-${r.rolloutRevision}`);
    for (const [i, to] of releases.entries()) {
      await rollTo(ns, to);
      // Recorded when its workloads carried its templates, so by the time the rollout is done.
      await waitFor(`revision ${i + 1} recorded`, async () => (await recorded(ns)).length === i + 1, { describe: () => recorded(ns) });
    }
    expect(await recorded(ns)).toEqual(names.map((name, i) => `${name}#${i + 1}`));

    const listed = JSON.parse(await history(ns, '-o', 'json')) as HistoryItem[];
    expect(listed.map((h) => [h.revision, h.rolloutRevision, h.current, h.changeCause])).toEqual(
      releases.map((r, i) => [i + 1, r.rolloutRevision, i === 2, `roll ${images[i]}`]),
    );
    expect(listed.map((h) => h.regions)).toEqual(releases.map((r) => r.regions.map((region) => ({ region: region.name, revision: region.revision }))));
    const table = (await history(ns)).trimEnd().split('\n');
    console.log(`[history] edctl history:\n${table.join('\n')}`);
    expect(table.map((line) => line.split(/\s+/)[0])).toEqual(['REVISION', '1', '2', '3']);
    expect(table[3]).toContain('(current)');

    // The first revision's templates, although Git has overwritten the workloads twice since.
    const first = parse(await history(ns, '--revision', '1', '-o', 'yaml')) as RegionTemplate[];
    expect(first.map((r) => [r.region, r.revision, r.template.spec?.containers?.map((c) => c.image)])).toEqual(
      releases[0]!.regions.map((r) => [r.name, r.revision, [images[0]]]),
    );
    const second = JSON.parse(await history(ns, '--revision', releases[1]!.rolloutRevision, '-o', 'json')) as RegionTemplate[];
    expect(second.map((r) => r.template.spec?.containers?.[0]?.image)).toEqual([images[1], images[1]]);

    // A revert in Git to the second image: its revision is renumbered the newest, not recorded twice.
    await rollTo(ns, releases[1]!);
    await waitFor('the reverted revision renumbered', async () => (await recorded(ns)).includes(`${names[1]}#4`), { describe: () => recorded(ns) });
    expect(await recorded(ns)).toEqual([`${names[0]}#1`, `${names[2]}#3`, `${names[1]}#4`]);

    // historyLimit 1: the current revision and one older one stay. The templates are unchanged, so no rollout starts.
    await apply(release(env, images[1]!, 1), 'ed');
    await waitFor('the oldest revision pruned', async () => (await recorded(ns)).length === 2, { describe: () => recorded(ns) });
    expect(await recorded(ns)).toEqual([`${names[2]}#3`, `${names[1]}#4`]);
    const kept = JSON.parse(await history(ns, '-o', 'json')) as HistoryItem[];
    expect(kept.map((h) => [h.revision, h.rolloutRevision, h.current])).toEqual([
      [3, releases[2]!.rolloutRevision, false],
      [4, releases[1]!.rolloutRevision, true],
    ]);
  });
});
