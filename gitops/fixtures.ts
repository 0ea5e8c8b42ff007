import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { GITOPS_DIR } from './argocd-cm.js';

/** A status fixture: a whole object as `kubectl get -o yaml` shows it, status included. */
export type Fixture = { metadata: { name: string; generation?: number; namespace?: string }; status?: Record<string, unknown> } & Record<string, unknown>;

/** The fixture names of a kind (gitops/fixtures/<kind, lower case>/<name>.yaml). */
export function fixtureNames(kind: string): string[] {
  return readdirSync(join(GITOPS_DIR, 'fixtures', kind.toLowerCase()))
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => f.slice(0, -'.yaml'.length))
    .sort();
}

/** One fixture, parsed. */
export function loadFixture(kind: string, name: string): Fixture {
  return parse(readFileSync(join(GITOPS_DIR, 'fixtures', kind.toLowerCase(), `${name}.yaml`), 'utf8')) as Fixture;
}
