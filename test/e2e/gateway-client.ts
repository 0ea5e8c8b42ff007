// HTTP through the lab's gateway (test/cluster/traffic.ts), for the traffic suites: requests for one host name,
// answered by the pod runner's pods (their revision in the body) or by the gateway itself (`-`: no pod answered).
import { Agent, request } from 'node:http';

/** One answer: its status code and the answering pod's revision, `-` when the gateway answered itself. */
export interface Answer {
  readonly code: number;
  readonly revision: string;
}

/** A client of the gateway for `host`; `sent` counts every answer it got, by `revision code`. */
export interface GatewayClient {
  get(): Promise<Answer>;
  /** `n` requests, `concurrency` at a time; their counts by `revision code`. */
  send(n: number, concurrency?: number): Promise<Record<string, number>>;
  readonly sent: Map<string, number>;
  close(): void;
}

export function gatewayClient(url: string, host: string): GatewayClient {
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  const sent = new Map<string, number>();
  const get = (): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const req = request(`${url}/`, { agent, headers: { host }, timeout: 10_000 }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => {
          let revision = '-';
          try {
            revision = (JSON.parse(body) as { revision?: string }).revision ?? '-';
          } catch {
            /* not a pod's answer */
          }
          const answer = { code: res.statusCode ?? 0, revision };
          const key = `${answer.revision} ${answer.code}`;
          sent.set(key, (sent.get(key) ?? 0) + 1);
          resolve(answer);
        });
      });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', reject);
      req.end();
    });
  const send = async (n: number, concurrency = 8): Promise<Record<string, number>> => {
    const counts: Record<string, number> = {};
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < n) {
          next++;
          const a = await get();
          const key = `${a.revision} ${a.code}`;
          counts[key] = (counts[key] ?? 0) + 1;
        }
      }),
    );
    return counts;
  };
  return { get, send, sent, close: () => agent.destroy() };
}

/**
 * `exact` when `counts` are what a run of consecutive picks of Traefik's weighted round robin can give for those exact
 * shares, else `counts` unchanged (so a failing `toEqual(exact)` shows the real counts). Traefik picks the earliest
 * deadline and adds 1/weight to it per pick in float64 (pkg/server/service/loadbalancer/wrr/wrr.go), so where two
 * deadlines meet at a period's end rounding breaks the tie either way, and a run of picks can hold one pick more or
 * less of a backend than its exact share: 1,799 to 1,801 of 2,000 at 90/10, depending on where the run starts. A
 * backend with no share never gets a pick, and the total must match.
 */
export function roundRobinCounts(counts: Record<string, number>, exact: Record<string, number>): Record<string, number> {
  const total = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);
  const keys = new Set([...Object.keys(counts), ...Object.keys(exact)]);
  const withinOnePick = [...keys].every((k) => {
    const got = counts[k] ?? 0;
    const share = exact[k] ?? 0;
    return share === 0 ? got === 0 : Math.abs(got - share) <= 1;
  });
  return withinOnePick && total(counts) === total(exact) ? exact : counts;
}
