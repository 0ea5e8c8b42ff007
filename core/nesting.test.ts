import { describe, expect, it } from 'vitest';
import { API_VERSION } from './api/identity.js';
import { MAX_NESTING, nestingViolation } from './nesting.js';
import { parseDeployRegion, parseExtendedDeployment } from './parse.js';
import { formatProblem, type FieldPath } from './problems.js';
import { renderExtendedDeployment, renderSet } from './render.js';

/** `{a: {a: … {}}}`, `levels` levels deep (`{}` is one level), built without recursion. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 1; i < levels; i++) value = { a: value };
  return value;
}

const region = { apiVersion: API_VERSION, kind: 'DeployRegion', metadata: { name: 'amd' }, spec: { matchLabels: { 'kubernetes.io/arch': 'amd64' } } };

/** An ExtendedDeployment whose container carries `x` (the container is level 6: x is level 7). */
function withContainerField(x: unknown, spec: Record<string, unknown> = {}) {
  return {
    apiVersion: API_VERSION,
    kind: 'ExtendedDeployment',
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'web:1', x }] } },
      regions: [{ name: 'amd' }],
      ...spec,
    },
  };
}

const CONTAINER_X: FieldPath = ['spec', 'template', 'spec', 'containers', 0, 'x'];

/** The path of the first object past the limit under the container's `x` (a chain of `a` keys). */
const pathPastLimit = [...CONTAINER_X, ...Array<string>(MAX_NESTING - CONTAINER_X.length).fill('a')];

describe('nestingViolation', () => {
  it('counts objects and lists, and reports the path of the first one past the limit', () => {
    expect(nestingViolation({ a: { b: [{ c: 1 }] } }, 4)).toBeUndefined();
    expect(nestingViolation({ a: { b: [{ c: 1 }] } }, 3)).toEqual({ path: ['a', 'b', 0], limit: 3 });
    expect(nestingViolation('text', 0)).toBeUndefined();
  });

  it('reports the first violation in document order', () => {
    expect(nestingViolation({ short: { a: {} }, deep: { b: { c: {} } }, deeper: { d: { e: { f: {} } } } }, 3)?.path).toEqual(['deep', 'b', 'c']);
  });

  it('walks 100,000 levels without overflowing the stack, and a cycle ends at the limit', () => {
    expect(nestingViolation(nested(100_000))?.path).toEqual(Array<string>(MAX_NESTING).fill('a'));
    const cycle: Record<string, unknown> = {};
    cycle['self'] = cycle;
    expect(nestingViolation(cycle)?.path).toHaveLength(MAX_NESTING);
  });
});

describe('nesting limit of rendered objects', () => {
  it('renders an object exactly at the limit', () => {
    // x is level 7, so its deepest object is level MAX_NESTING.
    expect(renderSet([region, withContainerField(nested(MAX_NESTING - 6))]).ok).toBe(true);
  });

  it('reports an object one level past the limit with the path where it crosses it', () => {
    const result = renderSet([region, withContainerField(nested(MAX_NESTING - 5))]);
    expect(result.ok ? [] : result.problems).toEqual([
      {
        object: { kind: 'ExtendedDeployment', name: 'web', namespace: 'shop' },
        path: pathPastLimit,
        message: `nesting deeper than ${MAX_NESTING} levels`,
        inputs: [1],
      },
    ]);
    expect(result.ok ? '' : formatProblem(result.problems[0]!)).toMatch(
      /^ExtendedDeployment shop\/web: spec\.template\.spec\.containers\[0\]\.x(\.a){94}: nesting deeper than 100 levels$/,
    );
  });

  it('gives a template 2,000 levels deep one problem, not a throw, also together with other problems and without the guard of renderSet', () => {
    const deep = withContainerField(nested(2_000), { replicas: -1, historyLimit: 'many' });
    const expected = [
      { object: { kind: 'ExtendedDeployment', name: 'web', namespace: 'shop' }, path: pathPastLimit, message: 'nesting deeper than 100 levels' },
    ];
    expect(parseExtendedDeployment(deep)).toEqual({ ok: false, problems: expected });
    // renderExtendedDeployment is what the agent calls: no renderSet guard around it turns a throw into a problem.
    expect(renderExtendedDeployment(deep, new Map())).toEqual({ ok: false, problems: expected });
    expect(renderSet([region, deep])).toEqual({ ok: false, problems: expected.map((p) => ({ ...p, inputs: [1] })) });
  });

  it('reports a DeployRegion nested too deep', () => {
    const deep = { ...region, spec: { ...region.spec, extra: nested(2_000) } };
    expect(parseDeployRegion(deep)).toMatchObject({
      ok: false,
      problems: [{ path: ['spec', 'extra', ...Array<string>(MAX_NESTING - 2).fill('a')], message: 'nesting deeper than 100 levels' }],
    });
    expect(renderSet([deep]).ok).toBe(false);
  });

  it('reports patches that together nest the template too deep, although each value is within the limit', () => {
    // The first patch adds x, 60 levels deep, at level 5 of the template; the second adds b below x's deepest object.
    const under = `/spec/containers/0/x/${Array<string>(59).fill('a').join('/')}/b`;
    const overriders = [
      {
        name: 'amd',
        overriders: [
          { op: 'add', path: '/spec/containers/0/x', value: nested(60) },
          { op: 'add', path: under, value: nested(60) },
        ],
      },
    ];
    const result = renderSet([region, withContainerField(undefined, { overriders })]);
    const problems = result.ok ? [] : result.problems.map(formatProblem);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /^ExtendedDeployment shop\/web: spec\.overriders\[0\]\.overriders: leave the pod template of region amd invalid: spec\.containers\[0\]\.x(\.a){59}\.b(\.a){36}: nesting deeper than 100 levels$/,
    );
  });
});
