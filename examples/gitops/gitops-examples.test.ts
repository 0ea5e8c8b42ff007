import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { buildProgram } from '../../cli/program.js';

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
}

const workflow = parse(readFileSync('examples/gitops/github-actions-pr.yaml', 'utf8')) as {
  on: Record<string, unknown>;
  permissions: Record<string, string>;
  jobs: Record<string, { steps: Step[] }>;
};
const steps = Object.values(workflow.jobs).flatMap((job) => job.steps);
/** Index of the first step matching, or -1. */
const stepIndex = (match: (step: Step) => boolean) => steps.findIndex(match);
const runs = (text: string) => (step: Step) => (step.run ?? '').includes(text);

describe('examples/gitops/github-actions-pr.yaml', () => {
  it('runs on pull requests and may comment on them', () => {
    expect(Object.keys(workflow.on)).toEqual(['pull_request']);
    expect(workflow.permissions).toEqual({ contents: 'read', 'pull-requests': 'write' });
  });

  it('checks out the full history and sets up Node 22', () => {
    const checkout = steps[stepIndex((s) => (s.uses ?? '').startsWith('actions/checkout@'))];
    expect(checkout?.with?.['fetch-depth']).toBe(0);
    const node = steps[stepIndex((s) => (s.uses ?? '').startsWith('actions/setup-node@'))];
    expect(node?.with?.['node-version']).toBe(22);
  });

  it('installs, renders, fails on a stale dist/, validates, plans against the base branch and comments, in that order', () => {
    const order = [
      stepIndex((s) => (s.uses ?? '').startsWith('actions/checkout@')),
      stepIndex((s) => (s.uses ?? '').startsWith('actions/setup-node@')),
      stepIndex(runs('npm ci')),
      stepIndex(runs('npm run synth')),
      stepIndex((s) => runs('git status --porcelain dist')(s) && runs('exit 1')(s)),
      stepIndex(runs('npx edctl validate -f dist/')),
      stepIndex(runs('npx edctl plan -f dist/ --from origin/${{ github.base_ref }} --output markdown > plan.md')),
      stepIndex((s) => (s.uses ?? '').startsWith('marocchino/sticky-pull-request-comment@') && s.with?.['path'] === 'plan.md'),
    ];
    expect(
      order.every((i) => i >= 0),
      JSON.stringify(order),
    ).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it('uses only edctl options that exist', async () => {
    const program = await buildProgram();
    const longs = (name: string) => program.commands.find((c) => c.name() === name)?.options.map((o) => o.long) ?? [];
    expect(longs('validate')).toContain('--filename');
    expect(longs('plan')).toEqual(expect.arrayContaining(['--filename', '--from', '--output']));
  });
});

describe('examples/gitops Argo CD manifests', () => {
  it('the ApplicationSet generates one Application per opted-in cluster, syncing crds/ and dist/ with server-side apply', () => {
    const [appSet] = parseAllDocuments(readFileSync('examples/gitops/argocd-applicationset.yaml', 'utf8')).map((d) => d.toJS());
    expect(appSet.kind).toBe('ApplicationSet');
    expect(appSet.spec.generators[0].clusters.selector.matchLabels).toEqual({ 'extendeddeployment.io/enabled': 'true' });
    expect(appSet.spec.template.spec.destination).toEqual({ server: '{{ .server }}' });
    expect(appSet.spec.template.spec.sources.map((s: { path: string }) => s.path)).toEqual(['crds', 'dist']);
    expect(appSet.spec.template.spec.syncPolicy.syncOptions).toContain('ServerSideApply=true');
    expect(appSet.spec.template.spec).not.toHaveProperty('ignoreDifferences');
  });
});
