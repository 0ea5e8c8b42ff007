// The pure part of the pod runner (pod-runner.ts): which addresses a pod serves on, how its image tag makes it behave,
// and what it answers. Kept free of I/O so the unit tests (test/unit/pod-behaviour.test.ts) cover it without a lab.
import { REVISION_LABEL } from '../../core/labels.js';

/** The port a container serves on when its spec declares none (what most HTTP images listen on). */
export const DEFAULT_PORT = 8080;

/** What an image's tag asks of the fake application. */
export interface Behaviour {
  /** Percentage (0–100) of requests answered 500, spread evenly: `:err-N`. */
  readonly errorPercent: number;
  /** Added latency per request, ms: `:slow-N`. */
  readonly delayMs: number;
}

/** The tag of an image reference (`registry:5000/web:err-10` → `err-10`; none → ''); a digest is not a tag. */
export function imageTag(image: string): string {
  const name = image.split('@')[0] ?? '';
  const lastSlash = name.lastIndexOf('/');
  const colon = name.indexOf(':', lastSlash + 1);
  return colon < 0 ? '' : name.slice(colon + 1);
}

/**
 * The behaviour an image's tag selects. Parts may be combined (`:err-10-slow-200`); anything else in the tag (`:v2`)
 * is a plain healthy, fast version. `:broken` needs nothing here: kwok never lets such a container run (kwok.yaml).
 */
export function behaviourOf(image: string): Behaviour {
  const tag = imageTag(image);
  const err = /(?:^|[-_.])err-(\d+)/.exec(tag);
  const slow = /(?:^|[-_.])slow-(\d+)/.exec(tag);
  return {
    errorPercent: err ? Math.min(100, Number(err[1])) : 0,
    delayMs: slow ? Number(slow[1]) : 0,
  };
}

/**
 * Whether the n-th request (1-based) of a server fails, so that exactly floor(n·p/100) of the first n fail, spread as
 * evenly as possible: 50 % fails every 2nd, 10 % every 10th, 25 % every 4th. Deterministic, so an analysis gate sees
 * the same error rate on every run, and any 100 consecutive requests hold exactly p failures.
 */
export function failsRequest(n: number, errorPercent: number): boolean {
  return Math.floor((n * errorPercent) / 100) > Math.floor(((n - 1) * errorPercent) / 100);
}

/** One address a running container serves on. */
export interface Endpoint {
  /** `ip:port`: one server per key. */
  readonly key: string;
  readonly ip: string;
  readonly port: number;
  readonly namespace: string;
  readonly pod: string;
  readonly container: string;
  readonly image: string;
  readonly revision?: string;
  /** Changes whenever the container is a new one (restart, new image): its server starts over, counters at zero. */
  readonly instance: string;
}

/** The fields of a Pod the runner reads (client-node's V1Pod has them all). */
export interface PodLike {
  metadata?: { name?: string; namespace?: string; uid?: string; labels?: Record<string, string> };
  spec?: { containers: { name: string; image?: string; ports?: { containerPort: number; protocol?: string }[] }[] };
  status?: {
    phase?: string;
    podIP?: string;
    containerStatuses?: { name: string; image?: string; containerID?: string; state?: { running?: unknown } }[];
  };
}

/**
 * The addresses a pod serves on: every TCP port of every container that is running (its status says so), on the pod's
 * IP, while the pod is Running. A container that is not running (kwok's `:broken` crash loop, a restart in progress)
 * serves nothing; a pod that is terminating still serves, as a real container does until the kubelet stops it.
 */
export function endpointsOf(pod: PodLike): Endpoint[] {
  const { name, namespace, uid } = pod.metadata ?? {};
  const ip = pod.status?.podIP;
  if (!name || !namespace || !uid || !ip || pod.status?.phase !== 'Running') return [];
  const revision = pod.metadata?.labels?.[REVISION_LABEL];
  const out: Endpoint[] = [];
  for (const c of pod.spec?.containers ?? []) {
    const st = pod.status.containerStatuses?.find((s) => s.name === c.name);
    if (!st?.state?.running) continue;
    // What runs is what the status reports; during an image change the spec is ahead of it.
    const image = st.image || c.image || '';
    const tcp = (c.ports ?? []).filter((p) => (p.protocol ?? 'TCP') === 'TCP').map((p) => p.containerPort);
    for (const port of tcp.length > 0 ? tcp : [DEFAULT_PORT]) {
      out.push({
        key: `${ip}:${port}`,
        ip,
        port,
        namespace,
        pod: name,
        container: c.name,
        image,
        ...(revision !== undefined ? { revision } : {}),
        instance: `${uid}/${c.name}/${st.containerID ?? ''}/${image}`,
      });
    }
  }
  return out;
}

/** The JSON body of every answer: who answered (the e2e suites count answers by revision). */
export function answerBody(ep: Endpoint, failed: boolean): string {
  return JSON.stringify({
    pod: ep.pod,
    namespace: ep.namespace,
    revision: ep.revision ?? null,
    image: ep.image,
    ...(failed ? { error: `injected: ${behaviourOf(ep.image).errorPercent}% of requests fail (image tag)` } : {}),
  });
}
