import { App, Chart, YamlOutputType } from 'cdk8s';
import { Construct } from 'constructs';
import { basename, extname } from 'node:path';
import type { ChartObjects } from '../constructs/chart-files.js';
import { appCharts } from '../constructs/chart-output.js';
import { emitRenderedDeployRegion, emitRenderedExtendedDeployment, renderedExtendedDeploymentManifests } from '../constructs/emit.js';
import { emitManifest } from '../constructs/manifest.js';
import { manifestJson, type SanitizedLists } from '../constructs/manifest-json.js';
import { ED_KIND, REGION_KIND } from '../core/api/identity.js';
import type { JsonObject } from '../core/overrides.js';
import { refOf } from '../core/parse.js';
import type { RenderedSet } from '../core/render.js';
import type { LoadedObject } from './load.js';

/** Objects read from files and their render, as renderFiles gives them. */
interface Rendered {
  readonly objects: readonly LoadedObject[];
  readonly rendered: RenderedSet;
}

/**
 * The App of appFromFiles (render-files.ts) from objects already loaded and rendered: one chart per input file, named
 * after it, each object under a construct id of its kind, namespace and name.
 */
export function renderedApp({ objects, rendered }: Rendered): App {
  const app = new App({ yamlOutputType: YamlOutputType.FILE_PER_CHART });
  const charts = new Map<string, Chart>();
  let r = 0;
  let e = 0;
  objects.forEach((loaded, i) => {
    const { chart: file, id, kind } = constructPlace(loaded, i);
    let chart = charts.get(file);
    if (!chart) {
      chart = new Chart(app, file);
      charts.set(file, chart);
    }
    if (kind === REGION_KIND) emitRenderedDeployRegion(chart, id, rendered.deployRegions[r++]!);
    else if (kind === ED_KIND) emitRenderedExtendedDeployment(new Construct(chart, id), rendered.extendedDeployments[e++]!);
    else emitManifest(chart, id, loaded.object);
  });
  return app;
}

/**
 * The charts of renderedApp as their `toJson()` gives them (appCharts), as `edctl render` writes them. For specs of
 * plain JSON (what YAML gives) they are made without the app, several times faster (constructs/manifest-json.ts);
 * anything else, or construct ids the construct tree would refuse, takes the app itself, which gives the same or
 * throws the same.
 */
export function renderedCharts(loaded: Rendered): ChartObjects[] {
  return plainCharts(loaded) ?? appCharts(renderedApp(loaded));
}

/** renderedApp's charts, object by object in the same order, or undefined for what only the app can tell. */
function plainCharts({ objects, rendered }: Rendered): ChartObjects[] | undefined {
  const charts = new Map<string, { readonly id: string; readonly objects: JsonObject[]; readonly ids: Set<string> }>();
  // A construct id the construct tree would change (a path separator in it) or refuse (taken) is left to the app.
  const fresh = (ids: Set<string>, id: string) => {
    if (/[/\n]/.test(id) || ids.has(id)) return false;
    ids.add(id);
    return true;
  };
  let r = 0;
  let e = 0;
  for (const [i, loaded] of objects.entries()) {
    const { chart: file, id, kind } = constructPlace(loaded, i);
    let chart = charts.get(file);
    if (!chart) {
      chart = { id: file, objects: [], ids: new Set() };
      charts.set(file, chart);
    }
    if (!fresh(chart.ids, id)) return undefined;
    const manifests: JsonObject[] = [];
    if (kind === REGION_KIND) manifests.push(rendered.deployRegions[r++]!.manifest);
    else if (kind === ED_KIND) {
      // The children emitRenderedExtendedDeployment gives the ExtendedDeployment's construct, under their ids.
      const children = renderedExtendedDeploymentManifests(rendered.extendedDeployments[e++]!);
      const ids = new Set<string>();
      if (!children.every(([child]) => fresh(ids, child))) return undefined;
      manifests.push(...children.map(([, manifest]) => manifest));
    } else manifests.push(loaded.object);
    const lists: SanitizedLists = new Map();
    for (const manifest of manifests) {
      const json = manifestJson(manifest, lists);
      if (!json) return undefined;
      chart.objects.push(json);
    }
  }
  return [...charts.values()].map(({ id, objects }) => ({ id, objects }));
}

/** The chart an object goes into (named after its file), its construct id there, and its kind. */
function constructPlace(loaded: LoadedObject, index: number): { chart: string; id: string; kind: string } {
  const ref = refOf(loaded.object);
  return { chart: chartId(loaded.file), id: `${ref.kind}-${ref.namespace ?? ''}-${ref.name ?? index}`, kind: ref.kind };
}

function chartId(file: string): string {
  const id = basename(file, extname(file))
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return id === '' ? 'objects' : id;
}
