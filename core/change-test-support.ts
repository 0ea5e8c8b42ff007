/**
 * Renders for tests of what a change does: a small ExtendedDeployment `web` over DeployRegions `a`, `b` and `c`, with
 * the spec fields a test sets merged in.
 */
import { API_VERSION, ED_KIND, REGION_KIND } from './api/identity.js';
import { renderSet, type RenderedExtendedDeployment } from './render.js';

/** Regions `a`, `b`, `c`, each the nodes labelled `zone: <name>`. */
const regions = ['a', 'b', 'c'].map((name) => ({ apiVersion: API_VERSION, kind: REGION_KIND, metadata: { name }, spec: { matchLabels: { zone: name } } }));

/** The spec every test starts from: 6 replicas, 4 in `a` and 2 in `b`, image `web:1`. */
export const baseSpec = {
  replicas: 6,
  selector: { matchLabels: { app: 'web' } },
  template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'web:1' }] } },
  regions: [
    { name: 'a', replicas: 4 },
    { name: 'b', replicas: 2 },
  ],
} as const;

/** `web` rendered with `spec` merged over baseSpec (top-level keys replaced) and the given labels. */
export function renderWeb(spec: Record<string, unknown> = {}, labels?: Record<string, string>): RenderedExtendedDeployment {
  const ed = {
    apiVersion: API_VERSION,
    kind: ED_KIND,
    metadata: { name: 'web', namespace: 'shop', ...(labels && { labels }) },
    spec: { ...baseSpec, ...spec },
  };
  const result = renderSet([...regions, ed]);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  const [rendered] = result.value.extendedDeployments;
  if (!rendered) throw new Error('nothing rendered');
  return rendered;
}
