import { describe, expect, it } from 'vitest';
import { parseBindAddress } from './http-server.js';

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
