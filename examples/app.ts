import { App, Chart, YamlOutputType } from 'cdk8s';
import { AgentInstall } from '../constructs/index.js';
import { GpuInference } from './gpu-inference.js';
import { MultiArchWeb, type MultiArchWebRelease } from './multi-arch-web.js';
import { Regions } from './regions.js';
import { SessionStore } from './session-store.js';
import { UpstreamSample } from './upstream-sample.js';
import { ZonalApi } from './zonal-api.js';

/** The agent image the examples install: built from the repository's Dockerfile and pushed by the platform team. */
export const AGENT_IMAGE = 'registry.example.com/platform/extended-deployment:0.1.0';

/** How the examples' agent is installed, when not as dist/ holds it. */
export interface ExamplesInstall {
  /** AgentInstall's `traffic`: the agent may write the Services and HTTPRoute of traffic mode Weighted. Default: false. */
  readonly traffic?: boolean;
}

/**
 * Builds every example into one app: one file per chart, named after the chart. `web` renders another release of the
 * web service and `install` another agent install (the GitOps end-to-end suites commit such renders); the defaults are
 * what dist/ holds.
 */
export function examplesApp(web: MultiArchWebRelease = {}, install: ExamplesInstall = {}): App {
  const app = new App({ yamlOutputType: YamlOutputType.FILE_PER_CHART });
  new AgentInstall(new Chart(app, 'agent-install'), 'agent', { image: AGENT_IMAGE, ...(install.traffic && { traffic: true }) });
  const regions = new Regions(app, 'regions');
  new MultiArchWeb(app, 'multi-arch-web', regions, web);
  new ZonalApi(app, 'zonal-api', regions);
  new GpuInference(app, 'gpu-inference', regions);
  new UpstreamSample(app, 'upstream-sample', regions);
  new SessionStore(app, 'session-store', regions);
  return app;
}
