import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LabelSelector } from './api/common.js';
import { API_VERSION } from './api/identity.js';
import { NAME_LABEL, REGION_LABEL } from './labels.js';
import { formatProblem } from './problems.js';
import { selectorClashes } from './selector-clashes.js';
import { selectorMatches } from './selector.js';

interface Options {
  readonly namespace?: string;
  readonly selector?: unknown;
  readonly labels?: Record<string, string>;
  readonly regions?: readonly { name: string; overrides?: { labels: Record<string, string> } }[];
}

/** A raw ExtendedDeployment selecting `app: <name>` with pods labelled so, unless the options say otherwise. */
function ed(name: string, o: Options = {}): unknown {
  return {
    apiVersion: API_VERSION,
    kind: 'ExtendedDeployment',
    metadata: { name, ...(o.namespace !== undefined && { namespace: o.namespace }) },
    spec: {
      selector: o.selector ?? { matchLabels: { app: name } },
      template: { metadata: { labels: o.labels ?? { app: name } }, spec: { containers: [{ name: 'app', image: 'web:1' }] } },
      regions: o.regions ?? [{ name: 'amd' }, { name: 'arm' }],
    },
  };
}

const CONSEQUENCE = "autoscalers, PodDisruptionBudgets and kubectl would count the pods of both as one's; give each ExtendedDeployment labels of its own";
const selectsLine = (a: string, b: string) => `ExtendedDeployment ${a}: spec.selector: also selects the pods of ExtendedDeployment ${b}: ${CONSEQUENCE}`;
const selectedBy = (a: string, b: string) =>
  `ExtendedDeployment ${a}: spec.template.metadata.labels: are also selected by the selector of ExtendedDeployment ${b}: ${CONSEQUENCE}`;

describe('selectorClashes: ExtendedDeployments of one namespace that select each other’s pods', () => {
  const table: [string, unknown[], string[]][] = [
    ['distinct labels', [ed('web'), ed('api')], []],
    [
      'the same selector and labels',
      [ed('web'), ed('api', { selector: { matchLabels: { app: 'web' } }, labels: { app: 'web' } })],
      [selectsLine('web', 'api'), selectsLine('api', 'web')],
    ],
    [
      'a selector that selects a subset of the other’s pods',
      [ed('web'), ed('canary', { selector: { matchLabels: { app: 'web', track: 'canary' } }, labels: { app: 'web', track: 'canary' } })],
      [selectsLine('web', 'canary'), selectedBy('canary', 'web')],
    ],
    [
      'a matchExpressions selector',
      [ed('web', { selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'api'] }] } }), ed('api')],
      [selectsLine('web', 'api'), selectedBy('api', 'web')],
    ],
    [
      'pods of one region labelled into the other’s selector by a typed override',
      [
        ed('web', { regions: [{ name: 'amd' }, { name: 'arm', overrides: { labels: { tier: 'x' } } }] }),
        ed('x', { selector: { matchLabels: { tier: 'x' } }, labels: { app: 'x', tier: 'x' } }),
      ],
      [selectedBy('web', 'x'), selectsLine('x', 'web')],
    ],
    [
      'the same labels in different namespaces',
      [ed('web', { namespace: 'a' }), ed('api', { namespace: 'b', selector: { matchLabels: { app: 'web' } }, labels: { app: 'web' } })],
      [],
    ],
    [
      'no namespace is the default one',
      [ed('web'), ed('api', { namespace: 'default', selector: { matchLabels: { app: 'web' } }, labels: { app: 'web' } })],
      [selectsLine('web', 'default/api'), selectsLine('default/api', 'web')],
    ],
    ['one object defined twice', [ed('web'), ed('web', { namespace: 'default' })], []],
    ['an empty selector (its own problem)', [ed('web'), ed('api', { selector: {}, labels: { app: 'web' } })], []],
    ['a selector that does not parse (its own problem)', [ed('web'), ed('api', { selector: 'app=web', labels: { app: 'web' } })], []],
    ['null and objects without a name', [null, 42, { kind: 'ExtendedDeployment', spec: null }, ed('web')], []],
  ];

  it.each(table)('%s', (_name, objects, expected) => {
    expect(selectorClashes(objects).map(formatProblem)).toEqual(expected);
  });
});

describe('selectorClashes: the index finds what comparing every pair finds', () => {
  const labels = fc.dictionary(fc.constantFrom('app', 'tier', 'track'), fc.constantFrom('a', 'b'), { maxKeys: 3 });
  const selector: fc.Arbitrary<LabelSelector> = fc.oneof(
    labels.filter((l) => Object.keys(l).length > 0).map((matchLabels) => ({ matchLabels })),
    fc.record({
      matchLabels: labels,
      matchExpressions: fc.array(
        fc.record({
          key: fc.constantFrom('app', 'tier', NAME_LABEL),
          operator: fc.constantFrom('In', 'NotIn', 'Exists', 'DoesNotExist'),
          values: fc.constant<string[]>(['a', 'x']),
        }),
        { minLength: 1, maxLength: 2 },
      ),
    }),
  );
  const object = fc.record({
    name: fc.constantFrom('x', 'y', 'z', 'a'),
    namespace: fc.constantFrom(undefined, 'default', 'other'),
    selector,
    labels,
    regions: fc.subarray(['amd', 'arm', 'a'], { minLength: 1 }),
  });

  it('for any objects, in the same order', () => {
    fc.assert(
      fc.property(fc.array(object, { maxLength: 8 }), (specs) => {
        const raws = specs.map((o) =>
          ed(o.name, {
            ...(o.namespace !== undefined && { namespace: o.namespace }),
            selector: o.selector,
            labels: o.labels,
            regions: o.regions.map((name) => ({ name })),
          }),
        );
        // Every pair compared, by the definition: a selects b when its selector matches the labels of a pod of b.
        const pods = (o: (typeof specs)[number]) => o.regions.map((region) => ({ ...o.labels, [NAME_LABEL]: o.name, [REGION_LABEL]: region }));
        const selects = (a: (typeof specs)[number], b: (typeof specs)[number]) => pods(b).some((l) => selectorMatches(a.selector, l));
        const key = (o: (typeof specs)[number]) => `${o.namespace ?? 'default'}/${o.name}`;
        const named = (o: (typeof specs)[number]) => (o.namespace === undefined ? o.name : `${o.namespace}/${o.name}`);
        const expected = specs.flatMap((a) =>
          specs
            .filter((b) => (b.namespace ?? 'default') === (a.namespace ?? 'default') && key(b) !== key(a) && (selects(a, b) || selects(b, a)))
            .map((b) => (selects(a, b) ? selectsLine(named(a), named(b)) : selectedBy(named(a), named(b)))),
        );
        expect(selectorClashes(raws).map(formatProblem)).toEqual(expected);
      }),
      { seed: 20261128, numRuns: 500 },
    );
  });
});
