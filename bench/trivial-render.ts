/**
 * bench/trivial-render: the floor `bench:render` holds `edctl render` against, a trivial YAML-in/YAML-out script. It
 * reads the same files with edctl's reader (cli/read-yaml.ts: js-yaml, with the `yaml` library for what only it reads
 * as edctl means it) and writes with edctl's serializer (constructs/synth.ts), one output file per input file. In between
 * it only copies: each object as it is and, per region of an ExtendedDeployment, one ReplicaSet-like object carrying
 * the pod template as written, so it writes as many documents as edctl, somewhat smaller ones. No validation,
 * distribution, overrides, placement, revision or key order.
 *
 *   node lib-bench/bench/trivial-render.js <input folder> <output folder>
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { readYamlFast } from '../cli/read-yaml.js';
import { toYaml } from '../constructs/synth.js';

interface Manifest {
  readonly kind?: string;
  readonly metadata?: { readonly name?: string; readonly namespace?: string };
  readonly spec?: { readonly selector?: unknown; readonly template?: unknown; readonly regions?: readonly { readonly name?: string }[] };
}

function replicaSets(ed: Manifest): Manifest[] {
  return (ed.spec?.regions ?? []).map((region) => ({
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: `${ed.metadata?.name}-${region.name}`, namespace: ed.metadata?.namespace },
    spec: { selector: ed.spec?.selector, template: ed.spec?.template },
  }));
}

/** Reads every `.yaml` file of `input` (sorted) and writes `<name>.k8s.yaml` for each into `output`. */
export function trivialRender(input: string, output: string): void {
  mkdirSync(output, { recursive: true });
  const files = readdirSync(input).filter((f) => f.endsWith('.yaml'));
  for (const file of files.sort()) {
    const objects: Manifest[] = [];
    const text = readFileSync(join(input, file), 'utf8');
    for (const value of readYamlFast(text) ?? parseAllDocuments(text).map((doc) => doc.toJS() as unknown)) {
      const object = value as Manifest;
      objects.push(object, ...(object.kind === 'ExtendedDeployment' ? replicaSets(object) : []));
    }
    writeFileSync(join(output, `${basename(file, extname(file))}.k8s.yaml`), objects.map(toYaml).join('---\n'));
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [input, output] = process.argv.slice(2);
  if (input === undefined || output === undefined) {
    process.stderr.write('usage: trivial-render <input folder> <output folder>\n');
    process.exit(2);
  }
  trivialRender(input, output);
}
