import { ApiObject, Chart, JsonPatch } from 'cdk8s';
import type { Construct } from 'constructs';
import type { JsonObject } from '../core/overrides.js';

/**
 * Adds a rendered manifest to the construct tree as it is. Names come from the manifest, never from the construct
 * path, so output stays stable and readable. A cluster-scoped object never takes the chart's default namespace.
 */
export function emitManifest(scope: Construct, id: string, manifest: JsonObject, clusterScoped = false): ApiObject {
  const { apiVersion, kind, metadata, ...rest } = manifest as { apiVersion: string; kind: string; metadata: JsonObject };
  const object = new ApiObject(scope, id, { apiVersion, kind, metadata, ...rest });
  // cdk8s names an object without a name after its construct path; one that names none (generateName) stays so.
  if (typeof metadata?.['name'] !== 'string') object.addJsonPatch(JsonPatch.remove(metadata === undefined ? '/metadata' : '/metadata/name'));
  if (clusterScoped && Chart.of(scope).namespace !== undefined) object.addJsonPatch(JsonPatch.remove('/metadata/namespace'));
  return object;
}
