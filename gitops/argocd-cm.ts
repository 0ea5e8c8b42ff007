import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { API_GROUP, ED_KIND, REGION_KIND } from '../core/api/identity.js';

/** This folder (gitops/), wherever the repository is checked out. */
export const GITOPS_DIR = dirname(fileURLToPath(import.meta.url));
/** The generated argocd-cm snippet, committed next to the scripts. */
export const ARGOCD_CM_FILE = join(GITOPS_DIR, 'argocd', 'argocd-cm-resource-customizations.yaml');

/** The kinds that have an Argo CD health script, and the script's file under gitops/argocd/. */
export const HEALTH_SCRIPTS = [
  { kind: REGION_KIND, file: 'health-deployregion.lua' },
  { kind: ED_KIND, file: 'health-extendeddeployment.lua' },
] as const;

/** A kind with a health script. */
export type HealthKind = (typeof HEALTH_SCRIPTS)[number]['kind'];

/** The Lua source of a kind's health script: the one source both the argocd-cm snippet and the tests read. */
export function healthScript(kind: HealthKind): string {
  const entry = HEALTH_SCRIPTS.find((s) => s.kind === kind);
  if (!entry) throw new Error(`no health script for ${kind}`);
  return readFileSync(join(GITOPS_DIR, 'argocd', entry.file), 'utf8');
}

/** The argocd-cm key Argo CD reads a kind's health script from. */
export function healthKey(kind: HealthKind): string {
  return `resource.customizations.health.${API_GROUP}_${kind}`;
}

/**
 * The argocd-cm ConfigMap carrying both health scripts as block literals, byte for byte. Applied with server-side
 * apply, it adds these keys to the existing argocd-cm and leaves every other key alone.
 */
export function argocdCmYaml(): string {
  const indent = (text: string) =>
    text
      .split('\n')
      .map((line) => (line === '' ? '' : `    ${line}`))
      .join('\n');
  const data = HEALTH_SCRIPTS.map(({ kind }) => {
    const script = healthScript(kind);
    if (!script.endsWith('\n') || script.endsWith('\n\n')) throw new Error(`${kind} health script must end with exactly one newline`);
    return `  ${healthKey(kind)}: |\n${indent(script)}`;
  });
  return [
    '# Generated from gitops/argocd/health-*.lua by `npm run gitops`; edit the .lua files, not this one.',
    '# Argo CD health checks for ExtendedDeployment and DeployRegion (docs/argocd.md). Add them to argocd-cm with',
    '#   kubectl apply --server-side --field-manager=extended-deployment -f argocd-cm-resource-customizations.yaml',
    '# (server-side apply adds these keys and keeps the others), or merge them in the kustomization that installs Argo CD.',
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    '  name: argocd-cm',
    '  namespace: argocd',
    '  labels:',
    '    app.kubernetes.io/name: argocd-cm',
    '    app.kubernetes.io/part-of: argocd',
    'data:',
    ...data,
  ].join('\n');
}
