import { hash } from 'node:crypto';
import type { DeployRegion } from '../api/deploy-region.js';
import { extendedDeploymentStatus, movesEnabled, type ExtendedDeployment, type ExtendedDeploymentStatus } from '../api/extended-deployment.js';
import type { DeployRegionObject, ExtendedDeploymentObject, MetaObject } from '../kube/objects.js';
import { parseDeployRegion, parseExtendedDeployment } from '../parse.js';
import type { Result } from '../problems.js';

/** `value` and everything it reaches, frozen: a parse shared by many looks must not be changed by one of them. */
function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
  return value;
}

/**
 * `parse`, remembered per object and resourceVersion. A watch cache replaces an object whenever it changes (a new
 * object with a new resourceVersion), and the agent looks at an ExtendedDeployment on every event of its pods: parsing
 * its spec and status with the schema again each time was the largest single cost of a look (bench:peers, 200
 * rollouts at once: a fifth of the agent's CPU with the garbage it made). The result is frozen, so a look that
 * changed it would fail at once rather than change the next look's input. Objects without a resourceVersion
 * (hand-made ones) are parsed every time.
 */
export function perVersion<O extends MetaObject, T>(parse: (object: O) => T): (object: O) => T {
  const results = new WeakMap<O, { readonly resourceVersion: string; readonly value: T }>();
  return (object) => {
    const resourceVersion = object.metadata?.resourceVersion;
    if (resourceVersion === undefined) return parse(object);
    const known = results.get(object);
    if (known?.resourceVersion === resourceVersion) return known.value;
    const value = deepFreeze(parse(object));
    results.set(object, { resourceVersion, value });
    return value;
  };
}

/** The object without its status, which Git never writes and the spec schema does not describe. */
export function withoutStatus<T extends object>(object: T): Omit<T, 'status'> {
  const { status: _status, ...rest } = object as T & { status?: unknown };
  return rest;
}

/** How many ExtendedDeployments parsedExtendedDeployment remembers a parse for (the least recently used go). */
export const REMEMBERED_SPEC_PARSES = 1024;

/**
 * `parse`, remembered per object (namespace and name) for its latest content without status and resourceVersion: an
 * ExtendedDeployment gets a new version on every status write (about ten per rollout), and the agent's own copy of what
 * it wrote is another object again, while its spec and metadata change only when Git or a person changes them. Reading
 * the content as JSON costs a few microseconds, the parse a few hundred (bench:peers at 200 rollouts at once: 2.5 % of
 * the agent's CPU went to parsing unchanged specs). One parse per object: a new spec replaces the old one's, so a
 * rollout leaves nothing behind. The content is kept as its SHA-256, not as text: the parse already holds what it
 * says, and a second copy as JSON was 1.4 KiB per ExtendedDeployment (380 KiB of the agent's heap at 200 rollouts at
 * once). The result is frozen, as perVersion's, and carries the object's own resourceVersion. Objects without a
 * resourceVersion (hand-made ones) are parsed every time.
 */
function perContent<T extends { readonly metadata?: object }>(
  parse: (object: ExtendedDeploymentObject) => Result<T>,
): (object: ExtendedDeploymentObject) => Result<T> {
  const latest = new Map<string, { readonly digest: string; readonly result: Result<T> }>();
  return (object) => {
    const { resourceVersion, ...metadata } = object.metadata ?? {};
    if (resourceVersion === undefined) return parse(object);
    const digest = hash('sha256', JSON.stringify({ ...withoutStatus(object), metadata }), 'base64');
    const key = `${metadata.namespace ?? ''}/${metadata.name ?? ''}`;
    let known = latest.get(key);
    latest.delete(key);
    if (known?.digest !== digest) {
      known = { digest, result: deepFreeze(parse(object)) };
      if (latest.size >= REMEMBERED_SPEC_PARSES) latest.delete(latest.keys().next().value as string);
    }
    latest.set(key, known);
    const { result } = known;
    if (!result.ok) return result;
    return { ok: true, value: { ...result.value, metadata: { ...result.value.metadata, resourceVersion } } };
  };
}

/** An ExtendedDeployment's spec and metadata, parsed and defaulted (parseExtendedDeployment). */
export const parsedExtendedDeployment: (ed: ExtendedDeploymentObject) => Result<ExtendedDeployment> = perVersion(
  perContent((ed) => parseExtendedDeployment(withoutStatus(ed))),
);

/** An ExtendedDeployment's status as the schema reads it; undefined when it has none or it does not parse. */
export const parsedStatus: (ed: ExtendedDeploymentObject) => ExtendedDeploymentStatus | undefined = perVersion((ed) => {
  if (ed.status === undefined) return undefined;
  const result = extendedDeploymentStatus.safeParse(ed.status);
  return result.success ? result.data : undefined;
});

/** A DeployRegion, parsed and defaulted (parseDeployRegion). */
export const parsedDeployRegion: (region: DeployRegionObject) => Result<DeployRegion> = perVersion((region) => parseDeployRegion(withoutStatus(region)));

/**
 * Whether an ExtendedDeployment's strategy, valid or not, turns moves on (movesEnabled): asked on every look, before
 * the spec is known to be valid.
 */
export const parsedMovesEnabled: (ed: ExtendedDeploymentObject) => boolean = perVersion((ed) =>
  movesEnabled((ed.spec as { strategy?: unknown } | undefined)?.strategy),
);
