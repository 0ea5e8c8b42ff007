// Property: `edctl validate` and `edctl render` on files never crash: generated valid specs exit 0 and render the same
// bytes twice; generated invalid specs (spec-mutations.ts) and garbage YAML exit non-zero with one `error:` line per
// problem, each naming its file, and no stack trace. In-process through run() with EDCTL_DEBUG=1, which makes any
// unexpected failure print its stack (user errors never do), plus a handful of cases through the real process.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { run } from '../../cli/run.js';
import { captured, captureOutput, fixture } from '../../cli/test-support.js';
import { fuzz, FUZZ_TIMEOUT_MS, Tally } from './fuzz-settings.js';
import { validSpecSet, type JsonObject, type SpecSet } from './spec-arbitraries.js';
import { MUTATION_SLOTS, slotChoices } from './spec-mutations.js';

captureOutput();
const tally = new Tally();
afterAll(() => tally.print('edctl on files'));
beforeEach(() => {
  process.env['EDCTL_DEBUG'] = '1';
  return () => delete process.env['EDCTL_DEBUG'];
});

const STACK_LINE = /^\s+at /m;
const documents = (objects: readonly JsonObject[]) => objects.map((o) => stringify(o)).join('---\n');
/** A folder with the set's regions and ExtendedDeployments in two files. */
const folderOf = (set: SpecSet) => fixture({ 'regions.yaml': documents(set.regions), 'apps.yaml': documents(set.extendedDeployments) });

/** The set with its first ExtendedDeployment broken by the chosen slots; the number of independent problems made. */
function broken(set: SpecSet, choices: readonly { slot: number; value: JsonObject[string] }[]): { set: SpecSet; made: number } {
  const [first, ...rest] = structuredClone(set.extendedDeployments);
  let made = 0;
  for (const { slot, value } of choices) {
    if (!MUTATION_SLOTS[slot]!.applicable(first!)) continue;
    MUTATION_SLOTS[slot]!.apply(first!, value);
    made += 1;
  }
  return { set: { regions: set.regions, extendedDeployments: [first!, ...rest] }, made };
}

/** Text a user might save by mistake: a valid file cut short, or with characters YAML gives meaning to dropped in. */
const garbled = (text: string) =>
  fc.oneof(
    fc.nat(text.length).map((n) => text.slice(0, n)),
    fc
      .array(
        fc.tuple(
          fc.nat(text.length),
          fc.constantFrom(':', '- ', '[', '{', '}', '&a', '*b', '!!int ', '|', '>', '"', "'", '%', '@', '`', '\t', '\n  ', '#', '---\n', '?'),
        ),
        { minLength: 1, maxLength: 4 },
      )
      .map((edits) => edits.reduce((t, [at, s]) => t.slice(0, at) + s + t.slice(at), text)),
    fc.string({ unit: 'binary', maxLength: 200 }),
  );

async function edctl(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  captured.out = '';
  captured.err = '';
  const code = await run(args);
  return { code, out: captured.out, err: captured.err };
}

/** A user error: exit 1, only `error:` lines, no stack. */
function expectUserError(r: { code: number; err: string }): string[] {
  expect(r.err).not.toMatch(STACK_LINE);
  expect(r.code, r.err).toBe(1);
  const lines = r.err.trimEnd().split('\n');
  for (const line of lines) expect(line).toMatch(/^error: \S/);
  return lines;
}

describe('edctl on generated files', { timeout: FUZZ_TIMEOUT_MS }, () => {
  it('valid specs: validate exits 0; render exits 0 and prints the same YAML twice', async () => {
    await fc.assert(
      fc.asyncProperty(validSpecSet, async (set) => {
        tally.add('valid');
        const dir = folderOf(set);
        const validated = await edctl('validate', '-f', dir);
        expect(validated.err).toBe('');
        expect(validated.code).toBe(0);
        const first = await edctl('render', '-f', dir);
        expect(first.code, first.err).toBe(0);
        const second = await edctl('render', '-f', dir);
        expect(second.out).toBe(first.out);
        const workloads = set.extendedDeployments.reduce((n, ed) => n + (ed['spec'] as { regions: unknown[] }).regions.length, 0);
        expect(first.out.match(/^kind: (ReplicaSet|Deployment|StatefulSet)$/gm)).toHaveLength(workloads);
      }),
      fuzz(0.1),
    );
  });

  it('invalid specs: validate and render exit 1 with at least one error line per problem, each naming the file', async () => {
    await fc.assert(
      fc.asyncProperty(validSpecSet, slotChoices, async (valid, choices) => {
        const { set, made } = broken(valid, choices);
        fc.pre(made > 0);
        tally.add('invalid');
        const dir = folderOf(set);
        for (const command of ['validate', 'render']) {
          const lines = expectUserError(await edctl(command, '-f', dir));
          expect(lines.length).toBeGreaterThanOrEqual(made);
          for (const line of lines) expect(line.startsWith(`error: ${join(dir, 'apps.yaml')}: ExtendedDeployment `), line).toBe(true);
        }
        const report = await edctl('validate', '-f', dir, '-o', 'json');
        expect(report.code).toBe(1);
        const problems = (JSON.parse(report.out) as { problems: { file?: string; object?: string; path?: string }[] }).problems;
        expect(problems.length).toBeGreaterThanOrEqual(made);
        for (const p of problems) expect(p.file && p.object && p.path, JSON.stringify(p)).toBeTruthy();
      }),
      fuzz(0.1),
    );
  });

  it('garbled YAML: no crash; validate and render agree, and a failure is error lines only', async () => {
    await fc.assert(
      fc.asyncProperty(
        validSpecSet.chain((set) => garbled(documents(set.extendedDeployments)).map((apps) => ({ set, apps }))),
        async ({ set, apps }) => {
          tally.add('garbled');
          const dir = fixture({ 'regions.yaml': documents(set.regions), 'apps.yaml': apps });
          const validated = await edctl('validate', '-f', dir);
          const rendered = await edctl('render', '-f', dir);
          for (const r of [validated, rendered]) {
            expect(r.err).not.toMatch(STACK_LINE);
            if (r.code !== 0) expectUserError(r);
          }
          expect(rendered.code).toBe(validated.code);
        },
      ),
      fuzz(0.2),
    );
  });
});

describe('edctl as a process on generated files', { timeout: FUZZ_TIMEOUT_MS }, () => {
  const main = join('cli', 'main.ts');
  const edctlProcess = (...args: string[]) => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', main, ...args], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, EDCTL_DEBUG: '' } });
    return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
  };

  it('a folder with invalid and garbled files: exit 1, error lines only, no stack trace', () => {
    // Each spawn costs a second or two (tsx compiles the CLI): one folder per 100 runs, holding a broken
    // ExtendedDeployment, a garbled file and a document that is no object.
    const cases = fc.sample(
      fc
        .tuple(
          validSpecSet,
          slotChoices,
          validSpecSet.chain((set) => garbled(documents(set.extendedDeployments))),
        )
        .map(([valid, choices, apps]) => {
          const { set } = broken(valid, choices);
          return fixture({
            'regions.yaml': documents(set.regions),
            'apps.yaml': documents(set.extendedDeployments),
            'more.yaml': `${apps}\n---\n[not, an, object]\n`,
          });
        }),
      fuzz(0.01),
    );
    for (const dir of cases) {
      tally.add('process');
      const r = edctlProcess('validate', '-f', dir);
      expect(r.err).not.toMatch(STACK_LINE);
      expectUserError(r);
    }
  });
});
