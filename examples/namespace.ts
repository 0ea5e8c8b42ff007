import { k8s } from 'cdk8s-plus-28';
import type { Construct } from 'constructs';
import { SYNC_WAVE_ANNOTATION } from '../core/labels.js';
import { REGION_SYNC_WAVE } from '../core/render.js';

/** The application's Namespace, synced with the regions, before the workloads. */
export function applicationNamespace(scope: Construct, name: string): k8s.KubeNamespace {
  return new k8s.KubeNamespace(scope, 'namespace', { metadata: { name, annotations: { [SYNC_WAVE_ANNOTATION]: REGION_SYNC_WAVE } } });
}
