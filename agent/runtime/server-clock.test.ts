import { describe, expect, it } from 'vitest';
import { FakeClock } from './clock.js';
import { ServerClock } from './server-clock.js';

/** A server whose clock is `skewMs` off this host's; each request takes `rttMs` and is stamped halfway. */
function exchange(local: FakeClock, server: ServerClock, skewMs: number, rttMs: number): void {
  const sentAt = local.monotonic();
  local.advance(rttMs / 2);
  const serverNow = local.now() + skewMs;
  local.advance(rttMs / 2);
  server.observe(Math.floor(serverNow / 1000) * 1000, sentAt, local.monotonic());
}

describe('ServerClock', () => {
  it('is the local wall clock until a response arrives', () => {
    const local = new FakeClock(Date.UTC(2026, 0, 1));
    const clock = new ServerClock(local);
    expect(clock.now()).toBe(local.now());
    expect(clock.skewMs()).toBe(0);
  });

  it('keeps a correct local clock exactly, however coarse the evidence (one whole-second header)', () => {
    const local = new FakeClock(Date.UTC(2026, 0, 1, 0, 0, 0, 900));
    const clock = new ServerClock(local);
    exchange(local, clock, 0, 10);
    local.advance(1_234);
    expect(clock.now()).toBe(local.now());
  });

  it.each([30_000, -30_000, 1_234])('corrects a local clock %i ms off to within the round trip, from whole-second Date headers', (skewMs) => {
    const local = new FakeClock(Date.UTC(2026, 0, 1, 0, 0, 0, 123));
    const clock = new ServerClock(local);
    // Requests at many sub-second phases narrow the one-second uncertainty of the header.
    for (let i = 0; i < 40; i++) {
      exchange(local, clock, skewMs, 10);
      local.advance(137);
    }
    // Within the width of the evidence: the round trip plus how finely the samples' phases cut the second.
    expect(Math.abs(clock.now() - (local.now() + skewMs))).toBeLessThanOrEqual(50);
    expect(Math.abs(clock.skewMs() - skewMs)).toBeLessThanOrEqual(50);
  });

  it.each([30_000, -30_000])(
    'corrected from the first header alone, a clock %i ms off is never ahead of the server, and at most the evidence behind',
    (skewMs) => {
      // One response: the header says which second it was, not where in it.
      for (const phase of [0, 100, 500, 900, 999]) {
        const local = new FakeClock(Date.UTC(2026, 0, 1, 0, 0, 0, phase));
        const clock = new ServerClock(local);
        exchange(local, clock, skewMs, 10);
        local.advance(300);
        const server = local.now() + skewMs;
        expect(clock.now()).toBeLessThanOrEqual(server);
        expect(clock.now()).toBeGreaterThanOrEqual(server - 1_000 - 10);
      }
    },
  );

  it('ignores a step of the local wall clock (it is anchored on the monotonic clock)', () => {
    const local = new FakeClock(Date.UTC(2026, 0, 1));
    const clock = new ServerClock(local);
    for (let i = 0; i < 20; i++) {
      exchange(local, clock, 0, 10);
      local.advance(333);
    }
    const before = clock.now();
    local.stepWall(-3_600_000);
    local.advance(1_000);
    expect(Math.abs(clock.now() - before - 1_000)).toBeLessThanOrEqual(50);
  });

  it('follows a server clock that was stepped (disjoint evidence keeps only the newest)', () => {
    const local = new FakeClock(Date.UTC(2026, 0, 1));
    const clock = new ServerClock(local);
    for (let i = 0; i < 10; i++) {
      exchange(local, clock, 0, 10);
      local.advance(250);
    }
    exchange(local, clock, 60_000, 10);
    expect(Math.abs(clock.now() - (local.now() + 60_000))).toBeLessThanOrEqual(1_000);
  });
});
