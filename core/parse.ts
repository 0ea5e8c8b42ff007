import type { z } from 'zod';
import { deployRegion, type DeployRegion } from './api/deploy-region.js';
import { extendedDeployment, type ExtendedDeployment } from './api/extended-deployment.js';
import { failed, ok, type ObjectRef, type Problem, type Result } from './problems.js';

/** The reference of a raw object, read as far as it can be (for messages about objects that failed to parse). */
export function refOf(raw: unknown): ObjectRef {
  const object = (raw ?? {}) as { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } };
  const kind = typeof object.kind === 'string' ? object.kind : 'object';
  const name = typeof object.metadata?.name === 'string' ? object.metadata.name : undefined;
  const namespace = typeof object.metadata?.namespace === 'string' ? object.metadata.namespace : undefined;
  return { kind, ...(name !== undefined && { name }), ...(namespace !== undefined && { namespace }) };
}

/** Turns zod issues into problems with paths, one per field (an unknown key is reported at its own path). */
export function issuesToProblems(object: ObjectRef, issues: readonly z.core.$ZodIssue[]): Problem[] {
  const problems: Problem[] = [];
  for (const issue of issues) {
    const path = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) problems.push({ object, path: [...path, key], message: 'unknown field' });
    } else if (issue.code === 'invalid_type' && issue.input === undefined) {
      problems.push({ object, path, message: 'is required' });
    } else if (issue.code === 'invalid_value' && 'values' in issue) {
      problems.push({ object, path, message: `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}` });
    } else {
      problems.push({ object, path, message: lowerFirst(issue.message) });
    }
  }
  return problems;
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

function parseWith<S extends z.ZodType>(schema: S, raw: unknown): Result<z.output<S>> {
  const result = schema.safeParse(raw);
  return result.success ? ok(result.data) : failed(issuesToProblems(refOf(raw), result.error.issues));
}

/** Parses and defaults a DeployRegion. */
export function parseDeployRegion(raw: unknown): Result<DeployRegion> {
  return parseWith(deployRegion, raw);
}

/** Parses and defaults an ExtendedDeployment (schema rules only; see validate.ts for the cross-field rules). */
export function parseExtendedDeployment(raw: unknown): Result<ExtendedDeployment> {
  return parseWith(extendedDeployment, raw);
}
