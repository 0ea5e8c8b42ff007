// Every write an agent sends to the API server, as a proxy between them sees it (api-proxy.ts): method, path, body,
// when it was sent, and when and with which code the API server answered (before the agent has the answer). The lab's
// audit policy (test/cluster/lab.ts) records ExtendedDeployment status writes in full but not the agent's HTTPRoute and
// Service writes; the traffic suite reads those from here.
import { startApiProxy, type ProxiedRequest } from './api-proxy.js';

/** One write the agent sent. */
export interface RecordedWrite {
  readonly method: string;
  /** The path without its query. */
  readonly path: string;
  /** The body, parsed as JSON (undefined when it is not JSON). */
  readonly body: unknown;
  /** Date.now() when the whole request had reached the proxy. */
  readonly sentAt: number;
  /** Date.now() when the API server's answer reached the proxy; undefined while there is none. */
  answeredAt?: number;
  code?: number;
}

export interface WriteRecorder {
  /** A kubeconfig file like the lab's, pointing at the proxy. */
  readonly kubeconfig: string;
  /** Every write so far, in the order the proxy received them. */
  readonly writes: readonly RecordedWrite[];
  close(): Promise<void>;
}

function parse(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString()) as unknown;
  } catch {
    return undefined;
  }
}

/** Starts a proxy that forwards everything and records every request but reads (GET). */
export async function recordWrites(name: string): Promise<WriteRecorder> {
  const writes: RecordedWrite[] = [];
  const pending = new Map<ProxiedRequest, RecordedWrite>();
  const proxy = await startApiProxy(
    name,
    (request) => {
      if (request.method !== 'GET') {
        const write: RecordedWrite = { method: request.method, path: request.path.split('?')[0] ?? '', body: parse(request.body), sentAt: request.at };
        writes.push(write);
        pending.set(request, write);
      }
      return 'forward';
    },
    {
      onResponse: ({ request, status }) => {
        const write = pending.get(request);
        if (!write) return;
        pending.delete(request);
        write.answeredAt = Date.now();
        write.code = status;
      },
    },
  );
  return { kubeconfig: proxy.kubeconfig, writes, close: () => proxy.close() };
}
