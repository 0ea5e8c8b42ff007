import { describe, expect, it } from 'vitest';
import {
  PROGRESS_WRITE_INTERVAL_MS,
  PROGRESS_WRITES_PER_SECOND,
  progressWriteWait,
  rolloutUnderWay,
  SYNC_WAIT_REPORT_GRACE_MS,
  syncWaitReportWait,
  type ProgressPacingInput,
} from './status-pacing.js';
import { Phases } from './reasons.js';

const NOW = 100_000;

describe('progressWriteWait', () => {
  const rows: { name: string; input: Omit<ProgressPacingInput, 'now'>; waitMs: number }[] = [
    { name: 'counts of an object never written go out at once', input: { writers: 1 }, waitMs: Number.NEGATIVE_INFINITY },
    { name: 'a second after the last write, they go out', input: { writers: 1, lastWrite: NOW - 1_000 }, waitMs: 0 },
    { name: 'within a second of the last write, they wait for the rest of it', input: { writers: 1, lastWrite: NOW - 300 }, waitMs: 700 },
    {
      name: 'an action just now moves the pacing on, but not past one interval since the counts came',
      input: { writers: 1, lastWrite: NOW, pendingSince: NOW - 600 },
      waitMs: 400,
    },
    {
      name: 'counts that waited a whole interval go out, however recent the last action',
      input: { writers: 1, lastWrite: NOW, pendingSince: NOW - 1_000 },
      waitMs: 0,
    },
    {
      name: 'many objects that may write stretch the interval to their number over the rate',
      input: { writers: 50, lastWrite: NOW },
      waitMs: (50 * 1000) / PROGRESS_WRITES_PER_SECOND,
    },
    {
      name: 'a look due within the interval holds the counts for it (a pod turning available ends the group)',
      input: { writers: 1, lastWrite: NOW - 200, lookAgainInMs: 900 },
      waitMs: 900,
    },
    {
      name: 'a look due after the counts waited an interval still holds them, up to two intervals in all',
      input: { writers: 1, lastWrite: NOW - 900, pendingSince: NOW - 900, lookAgainInMs: 1_000 },
      waitMs: 1_000,
    },
    {
      name: 'a look due later than two intervals after the counts came holds nothing: the interval decides',
      input: { writers: 1, lastWrite: NOW - 900, pendingSince: NOW - 900, lookAgainInMs: 1_200 },
      waitMs: 100,
    },
    {
      name: 'counts that waited two intervals go out even with a look due at once',
      input: { writers: 1, lastWrite: NOW, pendingSince: NOW - 2_000, lookAgainInMs: 0 },
      waitMs: 0,
    },
  ];
  it.each(rows)('$name', ({ input, waitMs }) => {
    expect(progressWriteWait({ now: NOW, ...input })).toBe(waitMs);
  });

  it('paces each object to one interval, and all of them to the rate in all', () => {
    expect(PROGRESS_WRITE_INTERVAL_MS).toBe(1_000);
    for (const writers of [1, PROGRESS_WRITES_PER_SECOND, 200])
      expect(progressWriteWait({ now: NOW, writers, lastWrite: NOW })).toBe(Math.max(1_000, (writers * 1000) / PROGRESS_WRITES_PER_SECOND));
  });

  it('writes the counts of a group whose pods come one by one no later than two intervals after they came', () => {
    // A pod turns available every 800 ms and the planner looks at each: the looks due at 800 and 1,600 ms hold the
    // counts; the one due at 2,400 is past two intervals, so the look at 1,600 writes them.
    const pendingSince = NOW;
    let now = NOW;
    let writtenAt: number | undefined;
    while (writtenAt === undefined && now < NOW + 10_000) {
      const waitMs = progressWriteWait({ now, pendingSince, lastWrite: NOW - 5_000, writers: 1, lookAgainInMs: 800 });
      if (waitMs <= 0) writtenAt = now;
      else now += Math.min(800, waitMs);
    }
    expect(writtenAt).toBe(NOW + 1_600);
  });
});

describe('rolloutUnderWay', () => {
  it.each([
    [Phases.Progressing, 1, true],
    [Phases.Progressing, 6, true],
    [Phases.Progressing, 0, false],
    [Phases.Progressing, undefined, false],
    [Phases.Paused, 2, false],
    [Phases.WaitingForConfirmation, 2, false],
    [Phases.Healthy, 6, false],
    [Phases.Degraded, 2, false],
    [undefined, undefined, false],
  ])('%s in group %s: %s', (phase, currentGroup, underWay) => {
    expect(rolloutUnderWay({ phase, currentGroup })).toBe(underWay);
  });
});

describe('syncWaitReportWait', () => {
  it.each([
    ['a wait that begins now waits the whole grace', undefined, SYNC_WAIT_REPORT_GRACE_MS],
    ['a wait seen before waits for the rest of it', NOW - 500, SYNC_WAIT_REPORT_GRACE_MS - 500],
    ['a wait as long as the grace is reported', NOW - SYNC_WAIT_REPORT_GRACE_MS, 0],
    ['a wait longer than the grace is overdue', NOW - 3 * SYNC_WAIT_REPORT_GRACE_MS, -2 * SYNC_WAIT_REPORT_GRACE_MS],
  ])('%s', (_name, since, waitMs) => {
    expect(syncWaitReportWait(NOW, since)).toBe(waitMs);
  });
});
