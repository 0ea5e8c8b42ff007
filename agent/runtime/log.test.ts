import { describe, expect, it } from 'vitest';
import { jsonLogger } from './log.js';

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
