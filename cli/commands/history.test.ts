import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CHANGE_CAUSE_ANNOTATION, CURRENT_SINCE_ANNOTATION, NAME_LABEL, REVISION_LABEL, ROLLOUT_REVISION_ANNOTATION } from '../../core/labels.js';
import { fakeApi } from '../api-test-support.js';
import { run } from '../run.js';
import { captured, captureOutput } from '../test-support.js';

const api = fakeApi();
captureOutput();

/** A revision of web's history as the agent records it: regions a and b running `image`; `owner` another controller. */
const recorded = (rollout: string, revision: number, image: string, o: { cause?: string; owner?: string } = {}) => ({
  metadata: {
    name: `web-${rollout}`,
    namespace: 'shop',
    uid: `u-${rollout}`,
    labels: { [NAME_LABEL]: 'web' },
    annotations: {
      [ROLLOUT_REVISION_ANNOTATION]: rollout,
      [CURRENT_SINCE_ANNOTATION]: `2026-01-0${revision}T10:00:00.000Z`,
      ...(o.cause !== undefined && { [CHANGE_CAUSE_ANNOTATION]: o.cause }),
    },
    ownerReferences: [{ apiVersion: 'extendeddeployment.io/v1beta1', kind: o.owner ?? 'ExtendedDeployment', name: 'web', uid: 'u-web', controller: true }],
  },
  revision,
  data: {
    regions: ['a', 'b'].map((region) => ({
      region,
      revision: `${region}-${rollout}`,
      template: { metadata: { labels: { [REVISION_LABEL]: `${region}-${rollout}` } }, spec: { containers: [{ name: 'app', image }] } },
    })),
  },
});

const history = (...args: string[]) => run(['history', 'web', '-n', 'shop', '--kubeconfig', api.kubeconfig, ...args]);

/** web reverted to R1 after R2: R1 renumbered 3, current (its status names the rollout with a session suffix). */
function reverted(): void {
  api.ed = { metadata: { uid: 'u-web' }, status: { revision: 'R1+1' } };
  api.revisions = [
    recorded('R1', 3, 'web:1', { cause: 'back to 1' }),
    recorded('R0', 1, 'web:0'),
    recorded('R2', 2, 'web:2', { cause: 'image 2' }),
    recorded('S1', 4, 'web:x', { owner: 'StatefulSet' }),
  ];
}

describe('edctl history', () => {
  it('lists the recorded revisions oldest first, the current one marked, ignoring revisions of other controllers', async () => {
    reverted();
    expect(await history()).toBe(0);
    expect(captured.out.split('\n')).toEqual([
      'REVISION     ROLLOUT  CREATED               REGIONS  CHANGE-CAUSE',
      '1            R0       2026-01-01T10:00:00Z  a,b',
      '2            R2       2026-01-02T10:00:00Z  a,b      image 2',
      '3 (current)  R1       2026-01-03T10:00:00Z  a,b      back to 1',
      '',
    ]);
  });

  it('prints the list as JSON (and YAML) without the templates', async () => {
    reverted();
    expect(await history('-o', 'json')).toBe(0);
    const items = JSON.parse(captured.out) as { revision: number; rolloutRevision: string; current: boolean; regions: unknown[] }[];
    expect(items.map((i) => [i.revision, i.rolloutRevision, i.current])).toEqual([
      [1, 'R0', false],
      [2, 'R2', false],
      [3, 'R1', true],
    ]);
    expect(items[2]).toEqual({
      revision: 3,
      rolloutRevision: 'R1',
      current: true,
      currentSince: '2026-01-03T10:00:00Z',
      changeCause: 'back to 1',
      regions: [
        { region: 'a', revision: 'a-R1' },
        { region: 'b', revision: 'b-R1' },
      ],
    });
    captured.out = '';
    expect(await history('-o', 'yaml')).toBe(0);
    expect(parse(captured.out)).toEqual(items);
  });

  it.each([
    ['its number', '2'],
    ['its rollout revision', 'R2'],
  ])('--revision names a revision by %s and prints what each region ran, as YAML to paste into Git', async (_by, revision) => {
    reverted();
    expect(await history('--revision', revision, '-o', 'yaml')).toBe(0);
    expect(parse(captured.out)).toEqual(recorded('R2', 2, 'web:2').data.regions);
    captured.out = '';
    expect(await history('--revision', revision)).toBe(0);
    expect(captured.out.split('\n')[0]).toBe('# revision 2 (rollout R2, current since 2026-01-02T10:00:00Z)');
    expect(parse(captured.out)).toEqual(recorded('R2', 2, 'web:2').data.regions);
  });

  it('says so when nothing is recorded yet', async () => {
    api.ed = { metadata: { uid: 'u-web' } };
    expect(await history()).toBe(0);
    expect(captured.out).toBe('ExtendedDeployment shop/web: no revision recorded yet (the agent records one once a rollout revision is synced)\n');
  });

  it('an unknown revision or ExtendedDeployment is one line and exit 1', async () => {
    reverted();
    expect(await history('--revision', '4')).toBe(1);
    expect(captured.err).toBe('error: ExtendedDeployment shop/web has no recorded revision 4 (edctl history web lists them)\n');
    captured.err = '';
    expect(await run(['history', 'nope', '-n', 'shop', '--kubeconfig', api.kubeconfig])).toBe(1);
    expect(captured.err).toBe('error: ExtendedDeployment shop/nope not found\n');
  });
});
