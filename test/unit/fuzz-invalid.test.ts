// Property: invalid specs never crash anything and always come back as problems, each naming its object and a field
// path, all of them at once. Inputs are valid generated sets (spec-arbitraries.ts) broken on purpose: k independent
// mutations of known fields (spec-mutations.ts), random JSON or removal at a random path of any object, and garbage
// in the revisions annotation the agent reads. Checked through the render (core/render.ts: edctl, constructs) and the
// agent's snapshot (agent/snapshot.ts: what the agent reports in the Valid condition).
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { observe, type Observation } from '../../core/observe/observe.js';
import type { ExtendedDeploymentObject } from '../../core/kube/objects.js';
import { REVISIONS_ANNOTATION } from '../../core/labels.js';
import { formatPath, formatProblem, type FieldPath, type Problem } from '../../core/problems.js';
import { renderSet } from '../../core/render.js';
import { fuzz, FUZZ_TIMEOUT_MS, Tally } from './fuzz-settings.js';
import { objectsOf, validSpecSet, type Json, type JsonObject } from './spec-arbitraries.js';
import { MUTATION_SLOTS, pathsIn, setAt, slotChoices } from './spec-mutations.js';

const tally = new Tally();
afterAll(() => tally.print('invalid specs'));

const startsWith = (path: FieldPath, prefix: FieldPath) => prefix.every((part, i) => path[i] === part);
const nameOf = (o: JsonObject) => (o['metadata'] as { name: string }).name;

/** The agent's view of one ExtendedDeployment: no workloads or pods yet, the set's DeployRegions. */
function agentSnapshot(ed: JsonObject, regions: readonly JsonObject[]): Observation {
  const object = { ...ed, metadata: { ...(ed['metadata'] as object), generation: 1 } } as ExtendedDeploymentObject;
  return observe(object, regions, { replicaSets: [], deployments: [] }, [], Date.parse('2026-01-01T00:00:00Z'));
}

/** Every problem names an object of a known kind and a field inside it; none is a crash turned into a problem. */
function expectWellFormed(problems: readonly Problem[]): void {
  for (const p of problems) {
    expect(p.path.length, formatProblem(p)).toBeGreaterThan(0);
    expect(p.object.kind, formatProblem(p)).toMatch(/^(ExtendedDeployment|DeployRegion|object)$/);
    expect(p.message, formatProblem(p)).not.toMatch(/could not be rendered|TypeError|undefined is not|Cannot read/);
  }
}

describe('invalid specs (generated)', { timeout: FUZZ_TIMEOUT_MS }, () => {
  it('k independent mutations of one ExtendedDeployment give a problem at each mutated path, all at once, and none on the other objects', () => {
    fc.assert(
      fc.property(validSpecSet, slotChoices, (set, choices) => {
        const objects = structuredClone(objectsOf(set));
        const target = objects[set.regions.length]!;
        const expected = choices
          .filter(({ slot }) => MUTATION_SLOTS[slot]!.applicable(target))
          .map(({ slot, value }) => ({ slot: MUTATION_SLOTS[slot]!.name, path: MUTATION_SLOTS[slot]!.apply(target, value) }));
        fc.pre(expected.length > 0);
        tally.add('independent mutations');
        tally.add('mutations applied', expected.length);

        const result = renderSet(objects);
        expect(result.ok).toBe(false);
        const problems = result.ok ? [] : result.problems;
        expectWellFormed(problems);
        const shown = problems.map(formatProblem).join('\n');
        for (const p of problems) expect({ kind: p.object.kind, name: p.object.name }, shown).toEqual({ kind: 'ExtendedDeployment', name: nameOf(target) });
        for (const { slot, path } of expected) {
          expect(
            problems.some((p) => startsWith(p.path, path)),
            `${slot}: nothing reported at ${formatPath(path)}; got:\n${shown}`,
          ).toBe(true);
        }
        expect(problems.length).toBeGreaterThanOrEqual(expected.length);

        // The agent reports the same problems in the object's Valid condition.
        const snapshot = agentSnapshot(target, set.regions);
        expect(snapshot.ok).toBe(false);
        const agentProblems = snapshot.ok ? [] : snapshot.problems;
        expectWellFormed(agentProblems);
        const agentShown = agentProblems.map(formatProblem).join('\n');
        for (const { slot, path } of expected) {
          expect(
            agentProblems.some((p) => startsWith(p.path, path)),
            `agent, ${slot}: nothing reported at ${formatPath(path)}; got:\n${agentShown}`,
          ).toBe(true);
        }
      }),
      fuzz(0.4),
    );
  });

  it('random JSON (or nothing) at a random path of any object: no crash, and either a valid render or well-formed problems', () => {
    const garbage = fc.oneof(fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>, fc.constant(undefined));
    fc.assert(
      fc.property(validSpecSet, fc.nat(), fc.nat(), garbage, (set, which, where, value) => {
        tally.add('random value at random path');
        const objects = structuredClone(objectsOf(set));
        const object = objects[which % objects.length]!;
        const paths = pathsIn(object);
        const path = paths[where % paths.length]!;
        setAt(object, path, value);

        const result = renderSet(objects);
        if (!result.ok) expectWellFormed(result.problems);
        for (const ed of objects.filter((o) => o['kind'] === 'ExtendedDeployment')) {
          const snapshot = agentSnapshot(
            ed,
            objects.filter((o) => o['kind'] === 'DeployRegion'),
          );
          if (!snapshot.ok) expectWellFormed(snapshot.problems);
        }
      }),
      fuzz(1),
    );
  });

  it('garbage in the revisions annotation: the agent reports it at the annotation, unless it is a map of every region to a revision', () => {
    const annotation = fc.oneof(
      fc.string(),
      fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
      fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.integer())).map((v) => JSON.stringify(v)),
    );
    fc.assert(
      fc.property(validSpecSet, annotation, (set, text) => {
        tally.add('revisions annotation');
        const ed = structuredClone(set.extendedDeployments[0]!) as JsonObject & {
          metadata: { annotations?: Record<string, string> };
          spec: { regions: { name: string }[] };
        };
        ed.metadata.annotations = { ...ed.metadata.annotations, [REVISIONS_ANNOTATION]: text };
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        const isMap = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) && Object.values(parsed).every((v) => typeof v === 'string');
        const usable = isMap && ed.spec.regions.every((r) => Object.hasOwn(parsed as object, r.name));
        const snapshot = agentSnapshot(ed, set.regions);
        expect(snapshot.ok).toBe(usable);
        if (!snapshot.ok) expect(snapshot.problems.map((p) => p.path)).toEqual([['metadata', 'annotations', REVISIONS_ANNOTATION]]);
      }),
      fuzz(0.5),
    );
  });

  it('the agent accepts every valid rendered ExtendedDeployment and targets the revisions the render recorded', () => {
    fc.assert(
      fc.property(validSpecSet, (set) => {
        tally.add('agent accepts rendered');
        const result = renderSet(objectsOf(set));
        if (!result.ok) throw new Error(result.problems.map(formatProblem).join('\n'));
        for (const ed of result.value.extendedDeployments) {
          const snapshot = agentSnapshot(ed.manifest as JsonObject, set.regions);
          if (!snapshot.ok) throw new Error(snapshot.problems.map(formatProblem).join('\n'));
          expect(snapshot.input.regions.map((r) => [r.name, r.targetRevision, r.desired])).toEqual(ed.regions.map((r) => [r.name, r.revision, r.replicas]));
          expect(snapshot.input.rolloutRevision).toBe(ed.rolloutRevision);
        }
      }),
      fuzz(0.3),
    );
  });
});
