import { describe, expect, it } from 'vitest';
import { parseBindAddress, startHealthServer, type HealthSource } from './http-server.js';
import { silentLogger } from './log.js';

describe('parseBindAddress', () => {
  it('reads host:port forms', () => {
    expect(parseBindAddress('127.0.0.1:8080')).toEqual({ host: '127.0.0.1', port: 8080 });
    expect(parseBindAddress('0.0.0.0:9090')).toEqual({ host: '0.0.0.0', port: 9090 });
    expect(parseBindAddress(':8080')).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(parseBindAddress('[::1]:0')).toEqual({ host: '::1', port: 0 });
    expect(parseBindAddress('localhost:1')).toEqual({ host: 'localhost', port: 1 });
  });

  it('rejects anything else with a readable message', () => {
    for (const bad of ['8080', '127.0.0.1', '127.0.0.1:', 'a:b', '1.2.3.4:70000', '::1:80']) {
      expect(() => parseBindAddress(bad), bad).toThrow(/invalid bind address/);
    }
  });
});

describe('health server', () => {
  it('answers the probes from the health source, with the reason when failing, and serves nothing else', async () => {
    let notLive: string | undefined;
    let notReady: string | undefined = 'informers not synced: pods';
    const health: HealthSource = { notLive: () => notLive, notReady: () => notReady };
    const server = await startHealthServer({ host: '127.0.0.1', port: 0 }, health, silentLogger);
    const get = async (path: string) => {
      const res = await fetch(`http://127.0.0.1:${server.address.port}${path}`);
      return `${res.status} ${await res.text()}`;
    };
    try {
      expect(await get('/healthz')).toBe('200 ok\n');
      expect(await get('/livez')).toBe('200 ok\n');
      expect(await get('/readyz')).toBe('503 not ready: informers not synced: pods\n');
      notReady = undefined;
      notLive = 'informer pods: no list, watch event or watch end for 721 s (bound 720 s)';
      expect(await get('/readyz')).toBe('200 ok\n');
      expect(await get('/healthz')).toBe('500 not live: informer pods: no list, watch event or watch end for 721 s (bound 720 s)\n');
      expect(await get('/livez')).toMatch(/^500 not live: /);
      expect(await get('/metrics')).toBe('404 not found\n');
    } finally {
      await server.close();
    }
  });
});
