/**
 * What the API server and its default admission plugins add to a pod created from a template. A pod field the
 * template does not have is tolerated only when listed here; anything else counts as a change (so the pod is
 * replaced, never swapped on a guess).
 */

/** Pod spec fields the API server defaults or admission sets. */
export const DEFAULTED_POD_FIELDS: ReadonlySet<string> = new Set([
  'dnsPolicy',
  'restartPolicy',
  'schedulerName',
  'securityContext',
  'terminationGracePeriodSeconds',
  'serviceAccountName',
  'serviceAccount',
  'enableServiceLinks',
  'priority',
  'preemptionPolicy',
  'nodeName',
  'hostname',
]);

/** Container fields the API server defaults. */
export const DEFAULTED_CONTAINER_FIELDS: ReadonlySet<string> = new Set(['terminationMessagePath', 'terminationMessagePolicy', 'imagePullPolicy', 'resources']);

/** Probe fields the API server defaults, with their default values. */
export const PROBE_DEFAULTS: Readonly<Record<string, unknown>> = { timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 };

/** Handler fields the API server defaults inside probes and lifecycle hooks. */
export const HANDLER_DEFAULTS: Readonly<Record<string, unknown>> = { scheme: 'HTTP', path: '/' };

/** Container port fields the API server defaults. */
export const PORT_DEFAULTS: Readonly<Record<string, unknown>> = { protocol: 'TCP' };

/** The service-account token volume the ServiceAccount admission plugin adds, and where it mounts it. */
export const TOKEN_VOLUME_PREFIX = 'kube-api-access-';
export const TOKEN_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';

/** Tolerations the DefaultTolerationSeconds admission plugin adds. */
export const ADMISSION_TOLERATION_KEYS: ReadonlySet<string> = new Set(['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']);
