import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import jsyaml from 'js-yaml';

// The int and float grammars of the YAML 1.1 type repository (yaml.org/type/int.html, float.html), sexagesimal included.
const YAML11_INT = /^([-+]?0b[01_]+|[-+]?0[0-7_]+|[-+]?(0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(:[0-5]?[0-9])+)$/;
const YAML11_FLOAT = /^([-+]?([0-9][0-9_]*)?\.[0-9.]*([eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN))$/;
/**
 * Plain scalars that YAML 1.1 readers (Kubernetes' Go YAML among them) take for numbers although the 1.2 core
 * schema does not: `0b101`, `1_000`, `1:30`, even a lone `.`. Declaring them as an
 * implicit type makes the dumper quote such strings, so every string reaches the API server as a string.
 */
const yaml11Number = new jsyaml.Type('tag:yaml.org,2002:yaml11-number', {
  kind: 'scalar',
  resolve: (data: unknown) => typeof data === 'string' && (YAML11_INT.test(data) || YAML11_FLOAT.test(data)),
});

const SCHEMA = jsyaml.DEFAULT_SCHEMA.extend({ implicit: [yaml11Number] });

/** One Kubernetes object as YAML. Keys keep the order cdk8s gave them (sorted); strings YAML 1.1 would misread are quoted. */
export function toYaml(object: unknown): string {
  return jsyaml.dump(object, { schema: SCHEMA, lineWidth: -1, noRefs: true });
}

/** The objects of one chart, as its toJson() gives them. */
export interface ChartObjects {
  readonly id: string;
  readonly objects: readonly unknown[];
}

/** Writes one `<id>.k8s.yaml` per chart into `outdir` (created), with toYaml. */
export function writeCharts(charts: readonly ChartObjects[], outdir: string): string[] {
  mkdirSync(outdir, { recursive: true });
  return charts.map((chart) => {
    const file = join(outdir, `${chart.id}.k8s.yaml`);
    writeFileSync(file, chart.objects.map((object) => toYaml(object)).join('---\n'));
    return file;
  });
}
