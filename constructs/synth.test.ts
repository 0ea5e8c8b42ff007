import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { toYaml } from './synth.js';

// Strings that YAML readers like to turn into something else.
const tricky = [
  'yes',
  'no',
  'on',
  'off',
  'y',
  'N',
  'true',
  'null',
  '~',
  '',
  '0755',
  '0x1f',
  '0b101',
  '1e3',
  '.5',
  '-.inf',
  '.nan',
  '1_000',
  '+1_0',
  '12:30',
  '2026-01-01',
  '<<',
  '- a',
  'a: b',
  '#x',
  '@x',
  '*x',
  '!x',
  '{a}',
  '[a]',
  ' lead',
  'trail ',
  'multi\nline',
  'tab\there',
  '"q"',
  "'s'",
];

describe('toYaml', () => {
  it.each(tricky)('keeps %j a string for YAML 1.1 readers (Kubernetes) and 1.2 readers', (value) => {
    const doc = { value, list: [value] };
    expect(parse(toYaml(doc), { version: '1.1' })).toEqual(doc);
    expect(parse(toYaml(doc), { version: '1.2' })).toEqual(doc);
  });

  it('round-trips any JSON value through a YAML 1.1 reader', () => {
    const scalar = fc.oneof(
      fc.string(),
      fc.constantFrom(...tricky),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
    );
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        scalar,
        fc.array(tie('node'), { maxLength: 4 }),
        fc.dictionary(fc.string({ minLength: 1 }), tie('node'), { maxKeys: 4 }),
      ),
    })).node;
    fc.assert(
      fc.property(fc.dictionary(fc.string({ minLength: 1 }), value, { maxKeys: 5 }), (doc) => {
        expect(parse(toYaml(doc), { version: '1.1' })).toEqual(JSON.parse(JSON.stringify(doc)));
      }),
      { seed: 20261121, numRuns: 500 },
    );
  });
});
