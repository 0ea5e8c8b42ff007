import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { GITOPS_DIR } from './argocd-cm.js';

/** A status fixture: a whole object as `kubectl get -o yaml` shows it, status included. */
export type Fixture = { metadata: { name: string; generation?: number; namespace?: string }; status?: Record<string, unknown> } & Record<string, unknown>;

/** Where the fixtures live: one folder per kind, named after the kind in lower case. */
export const FIXTURES_DIR = join(GITOPS_DIR, 'fixtures');

/** The fixture folders (kinds in lower case), sorted. */
export function fixtureDirs(): string[] {
  return readdirSync(FIXTURES_DIR, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

/** The fixture names of a kind (gitops/fixtures/<kind, lower case>/<name>.yaml). */
export function fixtureNames(kind: string): string[] {
  return readdirSync(join(FIXTURES_DIR, kind.toLowerCase()))
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => f.slice(0, -'.yaml'.length))
    .sort();
}

/** The absolute path of one fixture, for tools that read files (e.g. Argo CD's own health code in an e2e test). */
export function fixtureFile(kind: string, name: string): string {
  return join(FIXTURES_DIR, kind.toLowerCase(), `${name}.yaml`);
}

/** One fixture, parsed. */
export function loadFixture(kind: string, name: string): Fixture {
  return parse(readFileSync(fixtureFile(kind, name), 'utf8')) as Fixture;
}
