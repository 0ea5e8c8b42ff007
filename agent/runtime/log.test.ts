import { describe, expect, it } from 'vitest';
import { batchedWriter, jsonLogger } from './log.js';

describe('jsonLogger', () => {
  it('writes one JSON object per line with time, level, msg and fields', () => {
    const lines: string[] = [];
    const log = jsonLogger({ write: (l) => lines.push(l), now: () => Date.UTC(2026, 0, 1), fields: { component: 'agent' } });
    log.info('action', { ed: 'shop/web', replicas: 3, skipped: undefined });
    log.with({ ed: 'shop/api' }).warn('failed', { error: new Error('boom') });
    log.debug('hidden');
    expect(lines.every((l) => l.endsWith('\n') && !l.slice(0, -1).includes('\n'))).toBe(true);
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual([
      { time: '2026-01-01T00:00:00.000Z', level: 'info', msg: 'action', component: 'agent', ed: 'shop/web', replicas: 3 },
      { time: '2026-01-01T00:00:00.000Z', level: 'warn', msg: 'failed', component: 'agent', ed: 'shop/api', error: 'boom' },
    ]);
  });
});

describe('batchedWriter', () => {
  it('hands the lines of one turn of the event loop to the stream in one write, in order', async () => {
    const writes: string[] = [];
    const synced: string[] = [];
    const { write } = batchedWriter({ write: (c) => writes.push(c), writeSync: (c) => synced.push(c) });
    write('a\n');
    write('b\n');
    expect(writes).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    write('c\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual(['a\nb\n', 'c\n']);
    expect(synced).toEqual([]);
  });

  it('writes what is pending synchronously when asked (at exit), and nothing twice', async () => {
    const writes: string[] = [];
    const synced: string[] = [];
    const { write, flushSync } = batchedWriter({ write: (c) => writes.push(c), writeSync: (c) => synced.push(c) });
    write('a\n');
    flushSync();
    flushSync();
    await new Promise((resolve) => setImmediate(resolve));
    expect(synced).toEqual(['a\n']);
    expect(writes).toEqual([]);
  });
});
