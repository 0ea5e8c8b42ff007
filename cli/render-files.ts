import type { App } from 'cdk8s';
import { existsSync } from 'node:fs';
import { renderSet, type RenderedSet } from '../core/render.js';
import { renderFleet, type ClusterRender, type FleetRender } from '../core/fleet/render.js';
import { readAtRevision } from './git-files.js';
import { formatProblemsWithFiles, loadObjects, type LoadedObject } from './load.js';
import { renderedApp } from './render-charts.js';
import { UserError } from './user-error.js';

/**
 * Loads and renders files; invalid input becomes a UserError listing every problem with its file. With `command`,
 * finding no object is an error (see loadObjects).
 */
export function renderFiles(paths: readonly string[], command?: string): { objects: LoadedObject[]; rendered: RenderedSet } {
  const objects = loadObjects(paths, command);
  const result = renderSet(objects.map((o) => o.object));
  if (!result.ok) throw new UserError(formatProblemsWithFiles(result.problems, objects));
  return { objects, rendered: result.value };
}

/**
 * Loads and renders files as `edctl render` and `edctl validate` do: once per member cluster when they hold Cluster
 * objects (core/fleet renderFleet), else as renderFiles. Invalid input becomes a UserError listing every problem.
 */
export function renderFleetFiles(paths: readonly string[], command?: string): { objects: LoadedObject[]; rendered: FleetRender } {
  const objects = loadObjects(paths, command);
  const result = renderFleet(objects.map((o) => o.object));
  if (!result.ok) throw new UserError(formatProblemsWithFiles(result.problems, objects));
  return { objects, rendered: result.value };
}

/** The App of one member cluster (renderedApp of the objects it gets), each object still named after its file. */
export function clusterApp(objects: readonly LoadedObject[], cluster: ClusterRender): App {
  const gets = cluster.inputs.map((input, k) => ({ ...objects[input]!, object: cluster.objects[k] as Record<string, unknown> }));
  return renderedApp({ objects: gets, rendered: cluster.rendered });
}

/** Both sides of a change, as plan and diff compare them. */
export interface RenderedChange {
  readonly after: RenderedSet;
  /** Absent without `from`. */
  readonly before?: RenderedSet;
}

/** The side of a change that has no files. */
const NOTHING: RenderedSet = { deployRegions: [], extendedDeployments: [] };

/**
 * Renders `paths` (the state after a change) and, given `from` (`--from` of plan and diff), the state before it: files
 * that exist, or one git revision at which the same paths are read. Against a revision, a path that held no file there
 * is new and one that no longer exists is removed; a path on neither side is an error. Problems of the state before
 * are prefixed with `in --from ...`. `command` names the command in the error for files that hold no object (not
 * raised against a revision, where a change may remove every file).
 */
export function renderChange(paths: readonly string[], from?: readonly string[], command?: string): RenderedChange {
  return changeOf(paths, from, command, (files, name) => renderFiles(files, name).rendered, NOTHING);
}

/** Both sides of a change as `edctl plan` compares them: laid out per cluster where they hold Cluster objects. */
export interface RenderedFleetChange {
  readonly after: FleetRender;
  /** Absent without `from`. */
  readonly before?: FleetRender;
}

/** renderChange, with each side rendered as `edctl render` does (renderFleetFiles): per member cluster with Cluster objects. */
export function renderFleetChange(paths: readonly string[], from?: readonly string[], command?: string): RenderedFleetChange {
  return changeOf(paths, from, command, (files, name) => renderFleetFiles(files, name).rendered, { layout: 'flat', rendered: NOTHING });
}

/** renderChange's reading of both sides, with `render` for each side and `nothing` for a side without files. */
function changeOf<T>(
  paths: readonly string[],
  from: readonly string[] | undefined,
  command: string | undefined,
  render: (files: readonly string[], command?: string) => T,
  nothing: T,
): { after: T; before?: T } {
  if (from === undefined) return { after: render(paths, command) };
  // `named` gives a file of the state before the name people know it by (a checked-out file by its path in the repository).
  const beforeFrom = (files: readonly string[], named = (line: string) => line) => {
    if (files.length === 0) return nothing;
    try {
      return render(files);
    } catch (error) {
      if (error instanceof UserError) throw new UserError(error.lines.map((l) => `in --from ${from.join(' ')}: ${named(l)}`));
      throw error;
    }
  };
  if (from.every((p) => existsSync(p))) return { after: render(paths, command), before: beforeFrom(from) };
  const [ref] = from;
  if (from.length !== 1 || ref === undefined) throw new UserError([`--from ${from.join(' ')}: give one git revision, or files that exist`]);
  if (paths.includes('-')) throw new UserError([`--from ${ref} reads the paths of -f at that revision: give files or folders, not -`]);
  return readAtRevision(ref, paths, (atRef) => {
    const missing = paths.filter((p, i) => atRef[i] === undefined && !existsSync(p));
    if (missing.length > 0) throw new UserError(missing.map((p) => `${p}: no such file or directory, here or at ${ref}`));
    const now = paths.filter((p) => existsSync(p));
    return {
      after: now.length > 0 ? render(now) : nothing,
      before: beforeFrom(
        atRef.filter((p) => p !== undefined),
        (line) => atRef.reduce((text: string, p, i) => (p === undefined ? text : text.replaceAll(p, paths[i] ?? p)), line),
      ),
    };
  });
}

/**
 * Builds a cdk8s App from plain YAML specs: one chart per input file, named after it, holding the rendered
 * DeployRegions, ExtendedDeployments with their regional workloads, and every other object as it was. The same
 * emitters as the constructs write the objects, so both paths give the same output.
 */
export function appFromFiles(paths: readonly string[]): App {
  return renderedApp(renderFiles(paths, 'render'));
}
