import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnalysisQuery } from '../core/traffic/observation.js';
import { queryAll, queryPrometheus } from './prometheus.js';

/**
 * A Prometheus stand-in on 127.0.0.1 that answers by the query's text: `up` with a vector, `bad(` with Prometheus'
 * 400 JSON error, `proxy` with a 502 HTML page, `hang` never, `slowbody` with headers and then nothing. It records
 * every query and how many were in flight at most.
 */
describe('queryPrometheus and queryAll against a local HTTP server', () => {
  let server: Server;
  let base = '';
  const seen: { path: string; accept: string | undefined }[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      const url = new URL(req.url ?? '', 'http://x');
      const query = url.searchParams.get('query') ?? '';
      seen.push({ path: url.pathname, accept: req.headers.accept });
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      res.on('close', () => inFlight--);
      if (query === 'up') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [{ metric: {}, value: [1, '1'] }] } }));
      } else if (query === 'bad(') {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ status: 'error', errorType: 'bad_data', error: 'parse error' }));
      } else if (query === 'proxy') {
        res.writeHead(502, { 'content-type': 'text/html' });
        res.end('<html><body>\n  <h1>502 Bad Gateway</h1>\n</body></html>');
      } else if (query === 'slowbody') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"status":');
      } else if (query.startsWith('slow')) {
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ status: 'success', data: { resultType: 'scalar', result: [1, query] } }));
        }, 20);
      }
      // 'hang': no answer at all.
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const query = (promql: string, timeoutSeconds = 5, address = base): AnalysisQuery => ({
    metric: 'errors',
    role: 'candidate',
    query: promql,
    url: `${address}/api/v1/query?query=${encodeURIComponent(promql)}`,
    timeoutSeconds,
  });
  const at = () => 1_234;

  it('hands back the JSON body of an answer, with the query and the time it came', async () => {
    const q = query('up');
    const answer = await queryPrometheus(q, at);
    expect(answer).toEqual({
      query: q,
      body: { status: 'success', data: { resultType: 'vector', result: [{ metric: {}, value: [1, '1'] }] } },
      at: 1_234,
    });
    expect(seen.at(-1)).toEqual({ path: '/api/v1/query', accept: 'application/json' });
  });

  it("reads a 400's JSON body as an answer: Prometheus' own error, for core to report", async () => {
    const answer = await queryPrometheus(query('bad('), at);
    expect(answer.error).toBeUndefined();
    expect(answer.body).toEqual({ status: 'error', errorType: 'bad_data', error: 'parse error' });
  });

  it('turns a body that is not JSON into an error naming the HTTP status and the start of the body', async () => {
    const answer = await queryPrometheus(query('proxy'), at);
    expect(answer.body).toBeUndefined();
    expect(answer.error).toBe(
      `query to ${base}/api/v1/query answered HTTP 502 with a body that is not JSON: <html><body> <h1>502 Bad Gateway</h1> </body></html>`,
    );
    expect(answer.at).toBe(1_234);
  });

  it('gives up after timeoutSeconds, on a server that never answers or stalls in the body, without throwing', async () => {
    for (const promql of ['hang', 'slowbody']) {
      const started = Date.now();
      const answer = await queryPrometheus(query(promql, 1), at);
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
      expect(Date.now() - started).toBeLessThan(4_000);
      expect(answer.body).toBeUndefined();
      expect(answer.error).toBe(`query to ${base}/api/v1/query failed: no answer within 1s (timeout)`);
    }
  });

  it('names a refused connection', async () => {
    // A port that was just free: nothing listens there.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const answer = await queryPrometheus(query('up', 5, `http://127.0.0.1:${port}`), at);
    expect(answer.body).toBeUndefined();
    expect(answer.error).toMatch(new RegExp(`^query to http://127\\.0\\.0\\.1:${port}/api/v1/query failed: connection refused`));
  });

  it('names a URL fetch cannot use', async () => {
    const answer = await queryPrometheus({ ...query('up'), url: 'not a url' }, at);
    expect(answer.body).toBeUndefined();
    expect(answer.error).toMatch(/^query to not a url failed: /);
  });

  it('queryAll answers every query in order, never more than `concurrency` at once, whatever each gives', async () => {
    maxInFlight = 0;
    const queries = ['slow1', 'slow2', 'bad(', 'slow3', 'slow4', 'proxy', 'slow5'].map((q) => query(q));
    const answers = await queryAll(queries, 2, at);
    expect(answers.map((a) => a.query.query)).toEqual(queries.map((q) => q.query));
    expect(answers.map((a) => (a.error !== undefined ? 'error' : (a.body as { status: string }).status))).toEqual([
      'success',
      'success',
      'error',
      'success',
      'success',
      'error',
      'success',
    ]);
    expect(answers[2]?.body).toMatchObject({ errorType: 'bad_data' });
    expect(maxInFlight).toBe(2);
    expect(await queryAll([], 2, at)).toEqual([]);
  });
});
