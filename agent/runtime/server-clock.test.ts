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

  it('bounds the offset by exactly the last 256 samples of the last 5 minutes, as intersecting them all would', () => {
    const local = new FakeClock(Date.UTC(2026, 0, 1));
    const clock = new ServerClock(local);
    // The definition, computed the long way: the window's samples intersected; disjoint ones keep only the newest.
    let window: { at: number; low: number; high: number }[] = [];
    const expected = () => {
      const low = Math.max(...window.map((w) => w.low));
      const high = Math.min(...window.map((w) => w.high));
      const offset = local.now() - local.monotonic();
      return local.monotonic() + (offset >= low && offset <= high ? offset : low);
    };
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    let skewMs = 0;
    for (let i = 0; i < 3_000; i++) {
      // The server's clock wanders (now and then a step), responses take 1-60 ms, gaps reach past the window.
      skewMs += random() < 0.01 ? 5_000 * (random() - 0.5) : 40 * (random() - 0.5);
      const gap = random() < 0.02 ? 200_000 * random() : 400 * random();
      local.advance(gap);
      const sentAt = local.monotonic();
      local.advance(1 + 59 * random());
      const date = Math.floor((local.now() + skewMs) / 1000) * 1000;
      const receivedAt = local.monotonic();
      clock.observe(date, sentAt, receivedAt);
      const sample = { at: receivedAt, low: date - receivedAt, high: date + 1000 - sentAt };
      window = [...window.filter((w) => receivedAt - w.at <= 5 * 60_000).slice(-255), sample];
      if (Math.max(...window.map((w) => w.low)) > Math.min(...window.map((w) => w.high))) window = [sample];
      expect(clock.now()).toBe(expected());
    }
  });
});
