import { App, Chart, YamlOutputType } from 'cdk8s';
import { Construct } from 'constructs';
import { existsSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { renderSet, type RenderedExtendedDeployment, type RenderedSet } from '../core/render.js';
import { emitManifest } from '../constructs/manifest.js';
import { emitRenderedDeployRegion, emitRenderedExtendedDeployment } from '../constructs/emit.js';
import { refOf } from '../core/parse.js';
import { ED_KIND, REGION_KIND } from '../core/api/identity.js';
import { pathsAtRef } from './git-files.js';
import { formatProblemsWithFiles, loadObjects, type LoadedObject } from './load.js';
import { UserError } from './user-error.js';

/** Loads and renders files; invalid input becomes a UserError listing every problem with its file. */
export function renderFiles(paths: readonly string[]): { objects: LoadedObject[]; rendered: RenderedSet } {
  const objects = loadObjects(paths);
  const result = renderSet(objects.map((o) => o.object));
  if (!result.ok) throw new UserError(formatProblemsWithFiles(result.problems, objects));
  return { objects, rendered: result.value };
}

/**
 * Renders the state before a change (`--from` of plan and diff): files that exist, or one git revision at which the
 * same paths as `paths` are read. Problems are prefixed with `in --from ...`.
 */
export function renderFrom(from: readonly string[], paths: readonly string[]): RenderedExtendedDeployment[] {
  const files = from.every((p) => existsSync(p)) ? from : from.length === 1 ? pathsAtRef(from[0] ?? '', paths) : undefined;
  if (!files) throw new UserError([`--from ${from.join(' ')}: give one git revision, or files that exist`]);
  try {
    return [...renderFiles(files).rendered.extendedDeployments];
  } catch (error) {
    if (error instanceof UserError) throw new UserError(error.lines.map((l) => `in --from ${from.join(' ')}: ${l}`));
    throw error;
  }
}

/**
 * Builds a cdk8s App from plain YAML specs: one chart per input file, named after it, holding the rendered
 * DeployRegions, ExtendedDeployments with their regional workloads, and every other object as it was. The same
 * emitters as the constructs write the objects, so both paths give the same output.
 */
export function appFromFiles(paths: readonly string[]): App {
  const { objects, rendered } = renderFiles(paths);
  const app = new App({ yamlOutputType: YamlOutputType.FILE_PER_CHART });
  const charts = new Map<string, Chart>();
  const chartFor = (file: string) => {
    const id = chartId(file);
    let chart = charts.get(id);
    if (!chart) {
      chart = new Chart(app, id);
      charts.set(id, chart);
    }
    return chart;
  };
  let r = 0;
  let e = 0;
  objects.forEach((loaded, i) => {
    const chart = chartFor(loaded.file);
    const ref = refOf(loaded.object);
    const id = `${ref.kind}-${ref.namespace ?? ''}-${ref.name ?? i}`;
    if (ref.kind === REGION_KIND) emitRenderedDeployRegion(chart, id, rendered.deployRegions[r++]!);
    else if (ref.kind === ED_KIND) emitRenderedExtendedDeployment(new Construct(chart, id), rendered.extendedDeployments[e++]!);
    else emitManifest(chart, id, loaded.object);
  });
  return app;
}

function chartId(file: string): string {
  const id = basename(file, extname(file))
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return id === '' ? 'objects' : id;
}
