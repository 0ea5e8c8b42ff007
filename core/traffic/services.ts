import type { TrafficService } from '../api/traffic.js';
import { ED_KIND } from '../api/identity.js';
import { NAME_LABEL, REVISION_LABEL } from '../labels.js';
import type { Problem } from '../problems.js';
import { AGENT_MANAGER, MANAGED_BY_LABEL, trafficOwnerReference, type ServiceObject, type ServicePort, type TrafficOwner } from './objects.js';

/** The longest name a Service may have: a DNS-1035 label. */
export const MAX_SERVICE_NAME = 63;

/**
 * The name of a revision's Service: `<ed>-<revision>`. An ExtendedDeployment name may take 63 characters and a
 * revision 10, so the name part is cut to fit 63, deterministically and without a random suffix: the same revision
 * always finds the same Service, and a clash with another ExtendedDeployment cut to the same prefix shows up as a
 * Service this one does not own (`ownsObject`), never as a silent takeover.
 */
export function revisionServiceName(ed: string, revision: string): string {
  const room = MAX_SERVICE_NAME - revision.length - 1;
  const prefix = ed.length > room ? ed.slice(0, room).replace(/-+$/, '') : ed;
  return `${prefix}-${revision}`;
}

/**
 * The problem of an ExtendedDeployment name no Service can carry: Service names are DNS-1035 labels, which start with
 * a letter, while an ExtendedDeployment's name is a DNS-1123 label, which may start with a digit. Checked where traffic
 * is configured, so `1web` fails validation rather than every Service write.
 */
export function serviceNameProblem(ed: { readonly name: string; readonly namespace?: string }): Problem | undefined {
  if (/^[a-z]/.test(ed.name)) return undefined;
  return {
    object: { kind: ED_KIND, name: ed.name, ...(ed.namespace !== undefined && { namespace: ed.namespace }) },
    path: ['metadata', 'name'],
    message: 'must start with a letter with spec.strategy.traffic: the Services `<name>` and `<name>-<revision>` are named after it',
  };
}

/**
 * The Service port, every field spelled out as the API server would default it (protocol TCP, targetPort the port):
 * a Git-rendered Service then shows no defaulting diff in Argo CD, and the agent's apply changes nothing it re-reads.
 */
export function servicePort(settings: TrafficService): ServicePort {
  return {
    name: settings.name,
    port: settings.port,
    targetPort: settings.targetPort ?? settings.port,
    protocol: 'TCP',
    ...(settings.appProtocol !== undefined && { appProtocol: settings.appProtocol }),
  };
}

/**
 * The Service of one live revision (mode Weighted), `<ed>-<revision>`, created and owned by the agent: it selects the
 * ExtendedDeployment's pods of that revision by the labels the renderer owns on every pod (name and revision; a Service
 * selector takes no set expressions, so not spec.selector). Revision Services cannot live in Git: Git would prune the
 * stable revision's Service while it still carries most of the traffic.
 */
export function revisionService(owner: TrafficOwner, revision: string, settings: TrafficService): ServiceObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: revisionServiceName(owner.name, revision),
      namespace: owner.namespace,
      labels: { [NAME_LABEL]: owner.name, [REVISION_LABEL]: revision, [MANAGED_BY_LABEL]: AGENT_MANAGER },
      ownerReferences: [trafficOwnerReference(owner)],
    },
    spec: { type: 'ClusterIP', selector: { [NAME_LABEL]: owner.name, [REVISION_LABEL]: revision }, ports: [servicePort(settings)] },
  };
}

/**
 * The Service `<ed>` of mode Replicas, rendered into Git: every pod of the ExtendedDeployment whatever its revision or
 * region, so the traffic share of a revision is its share of Ready pods. No ownerReference: Git owns it.
 */
export function replicasService(ed: { readonly name: string; readonly namespace: string }, settings: TrafficService): ServiceObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: ed.name, namespace: ed.namespace, labels: { [NAME_LABEL]: ed.name } },
    spec: { type: 'ClusterIP', selector: { [NAME_LABEL]: ed.name }, ports: [servicePort(settings)] },
  };
}
