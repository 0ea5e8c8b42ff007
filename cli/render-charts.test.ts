import { describe, expect, it } from 'vitest';
import { appCharts } from '../constructs/chart-output.js';
import { renderedApp, renderedCharts } from './render-charts.js';
import { renderFiles } from './render-files.js';
import { fixture, regions, sample } from './test-support.js';

// renderedCharts makes without the app what the app's charts give: both side by side, over specs of every kind.
describe('renderedCharts', () => {
  const same = (paths: string[]) => {
    const loaded = renderFiles(paths);
    expect(JSON.stringify(renderedCharts(loaded))).toBe(JSON.stringify(appCharts(renderedApp(loaded))));
  };

  it('gives the charts of the app for the examples', () => {
    same(['examples/upstream-sample']);
    same(['examples/compat-mode']);
    same(['examples/gitops']);
  });

  it('gives them for other objects as they are, in files that share a chart, and without names', () => {
    const other = `apiVersion: v1
kind: ConfigMap
metadata: {generateName: web-, labels: {b: '1', a: '2'}, annotations: {}, finalizers: []}
data: {z: '1', a: null}
---
apiVersion: v1
kind: List
items: [{apiVersion: v1, kind: Service, metadata: {name: web}, spec: {selector: {}}}]
`;
    same([fixture({ 'regions.yaml': regions, 'Web App.yaml': sample, 'web-app.yml': other })]);
  });

  it('gives them for ExtendedDeployments with traffic, whatever the app emits of it', () => {
    const web = `apiVersion: extendeddeployment.io/v1beta1
kind: ExtendedDeployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: 'shop/web:1.0'}]}
  regions: [{name: region1}]
  strategy:
    traffic: {mode: Replicas, service: {port: 8080}, route: {parentRefs: [{name: public, namespace: gateways}]}}
`;
    const loaded = renderFiles([fixture({ 'regions.yaml': regions, 'web.yaml': web })]);
    expect(loaded.rendered.extendedDeployments[0]?.traffic).toHaveLength(2);
    same([fixture({ 'regions.yaml': regions, 'web.yaml': web })]);
    // Both paths write mode Replicas' Service and route next to the workloads.
    const objects = renderedCharts(loaded).flatMap((chart) => chart.objects as { kind?: string; metadata?: { name?: string } }[]);
    const kinds = objects.map((o) => `${o.kind}/${o.metadata?.name}`);
    expect(kinds).toEqual(expect.arrayContaining(['Service/web', 'HTTPRoute/web']));
  });

  it('leaves to the app what only it can tell, as the error a construct id it refuses makes', () => {
    const twice = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n';
    const loaded = renderFiles([fixture({ 'twice.yaml': twice })]);
    expect(() => renderedCharts(loaded)).toThrow("There is already a Construct with name 'ConfigMap--a' in Chart [twice]");
    const noApiVersion = renderFiles([fixture({ 'bare.yaml': 'kind: ConfigMap\nmetadata: {name: a}\n' })]);
    expect(() => renderedCharts(noApiVersion)).toThrow(/split/);
  });
});
