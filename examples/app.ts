import { App, YamlOutputType } from 'cdk8s';
import { GpuInference } from './gpu-inference.js';
import { MultiArchWeb } from './multi-arch-web.js';
import { Regions } from './regions.js';
import { UpstreamSample } from './upstream-sample.js';
import { ZonalApi } from './zonal-api.js';

/** Builds every example into one app: one file per chart, named after the chart. */
export function examplesApp(): App {
  const app = new App({ yamlOutputType: YamlOutputType.FILE_PER_CHART });
  const regions = new Regions(app, 'regions');
  new MultiArchWeb(app, 'multi-arch-web', regions);
  new ZonalApi(app, 'zonal-api', regions);
  new GpuInference(app, 'gpu-inference', regions);
  new UpstreamSample(app, 'upstream-sample', regions);
  return app;
}
