import { describe, expect, it } from 'vitest';
import { API_VERSION } from './api/identity.js';
import { formatProblem } from './problems.js';
import { selectorClashes } from './selector-clashes.js';

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
const selects = (a: string, b: string) => `ExtendedDeployment ${a}: spec.selector: also selects the pods of ExtendedDeployment ${b}: ${CONSEQUENCE}`;
const selectedBy = (a: string, b: string) =>
  `ExtendedDeployment ${a}: spec.template.metadata.labels: are also selected by the selector of ExtendedDeployment ${b}: ${CONSEQUENCE}`;

describe('selectorClashes: ExtendedDeployments of one namespace that select each other’s pods', () => {
  const table: [string, unknown[], string[]][] = [
    ['distinct labels', [ed('web'), ed('api')], []],
    [
      'the same selector and labels',
      [ed('web'), ed('api', { selector: { matchLabels: { app: 'web' } }, labels: { app: 'web' } })],
      [selects('web', 'api'), selects('api', 'web')],
    ],
    [
      'a selector that selects a subset of the other’s pods',
      [ed('web'), ed('canary', { selector: { matchLabels: { app: 'web', track: 'canary' } }, labels: { app: 'web', track: 'canary' } })],
      [selects('web', 'canary'), selectedBy('canary', 'web')],
    ],
    [
      'a matchExpressions selector',
      [ed('web', { selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'api'] }] } }), ed('api')],
      [selects('web', 'api'), selectedBy('api', 'web')],
    ],
    [
      'pods of one region labelled into the other’s selector by a typed override',
      [
        ed('web', { regions: [{ name: 'amd' }, { name: 'arm', overrides: { labels: { tier: 'x' } } }] }),
        ed('x', { selector: { matchLabels: { tier: 'x' } }, labels: { app: 'x', tier: 'x' } }),
      ],
      [selectedBy('web', 'x'), selects('x', 'web')],
    ],
    [
      'the same labels in different namespaces',
      [ed('web', { namespace: 'a' }), ed('api', { namespace: 'b', selector: { matchLabels: { app: 'web' } }, labels: { app: 'web' } })],
      [],
    ],
    [
      'no namespace is the default one',
      [ed('web'), ed('api', { namespace: 'default', selector: { matchLabels: { app: 'web' } }, labels: { app: 'web' } })],
      [selects('web', 'default/api'), selects('default/api', 'web')],
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
