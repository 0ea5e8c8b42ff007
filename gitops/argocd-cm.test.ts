import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ARGOCD_CM_FILE, HEALTH_SCRIPTS, argocdCmYaml, healthKey, healthScript } from './argocd-cm.js';

describe('argocd-cm resource customizations', () => {
  it('are committed as generated from the .lua scripts (run `npm run gitops` after editing them)', () => {
    expect(readFileSync(ARGOCD_CM_FILE, 'utf8')).toBe(argocdCmYaml());
  });

  it('carry each health script byte for byte under the key Argo CD reads', () => {
    const cm = parse(readFileSync(ARGOCD_CM_FILE, 'utf8')) as { kind: string; metadata: { name: string; namespace: string }; data: Record<string, string> };
    expect(cm.kind).toBe('ConfigMap');
    expect(cm.metadata).toMatchObject({ name: 'argocd-cm', namespace: 'argocd' });
    expect(Object.keys(cm.data)).toEqual([
      'resource.customizations.health.extendeddeployment.io_DeployRegion',
      'resource.customizations.health.extendeddeployment.io_ExtendedDeployment',
    ]);
    for (const { kind } of HEALTH_SCRIPTS) expect(cm.data[healthKey(kind)]).toBe(healthScript(kind));
  });
});
