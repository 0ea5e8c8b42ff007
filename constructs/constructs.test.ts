import { App, Chart, Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { DeployRegion, ExtendedDeployment, RenderError } from './index.js';

const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'web:1' }] } };

function setup(namespace?: string) {
  const app = Testing.app();
  const regionsChart = new Chart(app, 'regions', namespace !== undefined ? { namespace } : {});
  const amd = new DeployRegion(regionsChart, 'amd', { matchLabels: { arch: 'amd64' } });
  const arm = new DeployRegion(regionsChart, 'arm', { matchLabels: { arch: 'arm64' } });
  const chart = new Chart(app, 'web', { namespace: 'shop' });
  return { app, regionsChart, chart, amd, arm };
}

describe('DeployRegion', () => {
  it('is cluster-scoped even inside a namespaced chart', () => {
    const { regionsChart } = setup('somewhere');
    const [region] = Testing.synth(regionsChart);
    expect(region).toEqual({
      apiVersion: 'extendeddeployment.io/v1beta1',
      kind: 'DeployRegion',
      metadata: { name: 'amd', annotations: { 'argocd.argoproj.io/sync-wave': '-1' } },
      spec: { matchLabels: { arch: 'amd64' } },
    });
  });

  it('selects nodes by expressions too, and places pods with them', () => {
    const chart = new Chart(new App(), 'c');
    const general = new DeployRegion(chart, 'general', {
      matchLabels: { pool: 'general' },
      matchExpressions: [{ key: 'gpu', operator: 'DoesNotExist' }],
    });
    const gpu = new DeployRegion(chart, 'gpu', { matchExpressions: [{ key: 'gpu', operator: 'In', values: ['a100', 'h100'] }] });
    new ExtendedDeployment(chart, 'web', { replicas: 3, template, regions: [{ region: general }, { region: gpu }] });
    const objects = Testing.synth(chart);
    expect(objects.find((o) => o.metadata?.name === 'gpu')?.spec).toEqual({ matchExpressions: [{ key: 'gpu', operator: 'In', values: ['a100', 'h100'] }] });
    const terms = (name: string) =>
      objects.find((o) => o.kind === 'ReplicaSet' && o.metadata?.name === name)?.spec?.template?.spec?.affinity?.nodeAffinity
        ?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
    expect(terms('web-general')).toEqual([
      {
        matchExpressions: [
          { key: 'pool', operator: 'In', values: ['general'] },
          { key: 'gpu', operator: 'DoesNotExist' },
        ],
      },
    ]);
    expect(terms('web-gpu')).toEqual([{ matchExpressions: [{ key: 'gpu', operator: 'In', values: ['a100', 'h100'] }] }]);
  });

  it('rejects invalid props at synth time with the field path', () => {
    const app = new App();
    const chart = new Chart(app, 'c');
    expect(() => new DeployRegion(chart, 'Bad_Name', { matchLabels: {} })).toThrow(
      /DeployRegion Bad_Name: metadata\.name: must be a DNS label[\s\S]*DeployRegion Bad_Name: spec\.matchLabels: must name at least one label \(or a requirement in matchExpressions\)/,
    );
  });
});

describe('ExtendedDeployment', () => {
  it('renders the ExtendedDeployment and one ReplicaSet per region, in declared order, named <ed>-<region>', () => {
    const { chart, amd, arm } = setup();
    const ed = new ExtendedDeployment(chart, 'web', { replicas: 3, template, regions: [{ region: arm }, { region: amd }] });
    const objects = Testing.synth(chart);
    expect(objects.map((o) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`)).toEqual([
      'ExtendedDeployment/shop/web',
      'ReplicaSet/shop/web-arm',
      'ReplicaSet/shop/web-amd',
    ]);
    expect(ed.rendered.regions.map((r) => [r.name, r.replicas])).toEqual([
      ['arm', 2],
      ['amd', 1],
    ]);
    expect(objects[0].spec.selector).toEqual({ matchLabels: { app: 'web' } });
  });

  it("takes the namespace from props, else the chart's, else default, for itself and every workload", () => {
    const { app, chart, amd } = setup();
    const unnamespaced = new Chart(app, 'plain');
    new ExtendedDeployment(chart, 'web', { template, regions: [{ region: amd, replicas: 1 }] });
    new ExtendedDeployment(chart, 'api', { namespace: 'payments', template, regions: [{ region: amd, replicas: 1 }] });
    new ExtendedDeployment(unnamespaced, 'web', { template, regions: [{ region: amd, replicas: 1 }] });
    expect([...Testing.synth(chart), ...Testing.synth(unnamespaced)].map((o) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`)).toEqual([
      'ExtendedDeployment/shop/web',
      'ReplicaSet/shop/web-amd',
      'ExtendedDeployment/payments/api',
      'ReplicaSet/payments/api-amd',
      'ExtendedDeployment/default/web',
      'ReplicaSet/default/web-amd',
    ]);
  });

  it('turns per-region patches into upstream overriders and applies typed overrides first', () => {
    const { chart, amd, arm } = setup();
    new ExtendedDeployment(chart, 'web', {
      template,
      regions: [
        { region: amd, replicas: 1 },
        { region: arm, replicas: 1, overrides: { images: { web: 'web:1-arm' } }, patches: [{ op: 'add', path: '/spec/containers/0/args', value: ['--arm'] }] },
      ],
    });
    const [ed, , armRs] = Testing.synth(chart);
    expect(ed.spec.overriders).toEqual([{ name: 'arm', overriders: [{ op: 'add', path: '/spec/containers/0/args', value: ['--arm'] }] }]);
    expect(armRs.spec.template.spec.containers[0]).toEqual({ name: 'web', image: 'web:1-arm', args: ['--arm'] });
  });

  it('fails the synth listing every problem at once', () => {
    const { chart, amd } = setup();
    let error: unknown;
    try {
      new ExtendedDeployment(chart, 'web', {
        replicas: 2,
        template: { ...template, spec: { containers: [{ name: 'web', image: 'web:1' }], restartPolicy: 'Never' } },
        regions: [{ region: amd, replicas: '150%' }, { region: amd }],
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RenderError);
    expect(
      (error as RenderError).message
        .split('\n')
        .slice(1)
        .map((l) => l.trim()),
    ).toEqual([
      'ExtendedDeployment shop/web: spec.regions[0].replicas: "150%" exceeds 100%',
      'ExtendedDeployment shop/web: spec.regions[1].name: region "amd" is listed twice (first at spec.regions[0])',
      'ExtendedDeployment shop/web: spec.template.spec.restartPolicy: must be Always for a long-running workload, not "Never"',
    ]);
  });

  it('reports cross-field problems together', () => {
    const { chart, amd } = setup();
    expect(
      () =>
        new ExtendedDeployment(chart, 'web', {
          replicas: 2,
          template: { ...template, spec: { containers: [{ name: 'web', image: 'web:1' }], restartPolicy: 'Never' } },
          regions: [{ region: amd, replicas: 5 }, { region: amd }],
        }),
    ).toThrow(
      [
        'invalid specification:',
        '  ExtendedDeployment shop/web: spec.regions[1].name: region "amd" is listed twice (first at spec.regions[0])',
        '  ExtendedDeployment shop/web: spec.template.spec.restartPolicy: must be Always for a long-running workload, not "Never"',
        '  ExtendedDeployment shop/web: spec.regions: integer replicas add up to 5, more than spec.replicas (2)',
      ].join('\n'),
    );
  });

  it('fails the synth when two ExtendedDeployments of the app render the same workload name, naming both', () => {
    const { app, regionsChart, chart } = setup();
    const bc = new DeployRegion(regionsChart, 'b-c', { matchLabels: { zone: 'b-c' } });
    const c = new DeployRegion(regionsChart, 'c', { matchLabels: { zone: 'c' } });
    new ExtendedDeployment(chart, 'a', { replicas: 1, template, regions: [{ region: bc }] });
    // In another chart of the same app: still one synth, one namespace.
    const other = new Chart(app, 'other', { namespace: 'shop' });
    expect(() => new ExtendedDeployment(other, 'a-b', { replicas: 1, template, regions: [{ region: c }] })).toThrow(
      [
        'invalid specification:',
        "  ExtendedDeployment shop/a: spec.regions[0].name: workload a-b-c collides with ExtendedDeployment shop/a-b's region c",
        "  ExtendedDeployment shop/a-b: spec.regions[0].name: workload a-b-c collides with ExtendedDeployment shop/a's region b-c",
      ].join('\n'),
    );
    // Another namespace, or another app, is fine.
    new ExtendedDeployment(new Chart(app, 'elsewhere', { namespace: 'web' }), 'a-b', { replicas: 1, template, regions: [{ region: c }] });
    const fresh = setup();
    new ExtendedDeployment(fresh.chart, 'a-b', {
      replicas: 1,
      template,
      regions: [{ region: new DeployRegion(fresh.regionsChart, 'c', { matchLabels: { zone: 'c' } }) }],
    });
  });
});
