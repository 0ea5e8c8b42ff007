import { describe, expect, it } from 'vitest';
import { LEADER_ELECTION_DEFAULTS, leaderElectionTiming, timingProblem } from './runtime/leader-election.js';
import { mustStepDown } from './runtime/lease-decision.js';
import { DEFAULT_LEASE_DURATION_SECONDS, agentSettings, parseLeaseDurationSeconds } from './options.js';

describe('--lease-duration', () => {
  it('defaults to 15 s, which gives exactly the default timing', () => {
    expect(agentSettings({}).leaseDurationSeconds).toBe(15);
    expect(DEFAULT_LEASE_DURATION_SECONDS).toBe(15);
    expect(leaderElectionTiming(15)).toEqual(LEADER_ELECTION_DEFAULTS);
  });

  it('scales the renew deadline (2/3), the retry period (2/15) and the try timeout (half the deadline) with the lease', () => {
    expect(leaderElectionTiming(3)).toEqual({ leaseDurationSeconds: 3, retryPeriodMs: 400, renewDeadlineMs: 2_000, attemptTimeoutMs: 1_000 });
    expect(leaderElectionTiming(30)).toEqual({ leaseDurationSeconds: 30, retryPeriodMs: 4_000, renewDeadlineMs: 20_000, attemptTimeoutMs: 10_000 });
  });

  it('keeps the safety order for every allowed duration: retry (with 20 % jitter) < renew deadline < lease', () => {
    for (let s = 2; s <= 3600; s++) {
      const t = leaderElectionTiming(s);
      expect(t.retryPeriodMs * 1.2).toBeLessThan(t.renewDeadlineMs);
      expect(t.renewDeadlineMs).toBeLessThan(s * 1000);
      expect(timingProblem(t)).toBeUndefined();
      // A leader whose renewals fail steps down before the lease can expire for a standby.
      expect(mustStepDown(0, t.renewDeadlineMs + 1, t.renewDeadlineMs)).toBe(true);
    }
  });

  it('parses whole seconds, with or without an s suffix, within bounds', () => {
    expect(parseLeaseDurationSeconds('15')).toBe(15);
    expect(parseLeaseDurationSeconds('4s')).toBe(4);
    expect(parseLeaseDurationSeconds('2')).toBe(2);
    for (const bad of ['', 's', '1', '0', '-5', '2.5', 'abc', '3601', '15m'])
      expect(() => parseLeaseDurationSeconds(bad), bad).toThrow(/whole seconds from 2 to 3600/);
  });
});
