import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { apportionByRoom } from './apportion.js';

describe('apportionByRoom', () => {
  it.each([
    [
      4,
      [
        { name: 'a', room: 10 },
        { name: 'b', room: 10 },
      ],
      { a: 2, b: 2 },
    ],
    [
      3,
      [
        { name: 'a', room: 10 },
        { name: 'b', room: 10 },
      ],
      { a: 2, b: 1 },
    ],
    [
      3,
      [
        { name: 'a', room: 2 },
        { name: 'b', room: 6 },
      ],
      { a: 1, b: 2 },
    ],
    [
      5,
      [
        { name: 'a', room: 1 },
        { name: 'b', room: 1 },
      ],
      { a: 1, b: 1 },
    ],
    [
      3,
      [
        { name: 'a', room: 0 },
        { name: 'b', room: 5 },
      ],
      { b: 3 },
    ],
    [2, [{ name: 'a', room: 0 }], {}],
  ])('%d replicas over %j', (count, recipients, expected) => {
    expect(Object.fromEntries(apportionByRoom(count, recipients))).toEqual(expected);
  });

  it('never exceeds a room, hands out min(count, total room), and is proportional within one', () => {
    fc.assert(
      fc.property(fc.nat(50), fc.array(fc.nat(20), { minLength: 1, maxLength: 6 }), (count, rooms) => {
        const recipients = rooms.map((room, i) => ({ name: `r${i}`, room }));
        const shares = apportionByRoom(count, recipients);
        const total = rooms.reduce((a, b) => a + b, 0);
        const seats = Math.min(count, total);
        expect([...shares.values()].reduce((a, b) => a + b, 0)).toBe(seats);
        recipients.forEach((r) => {
          const share = shares.get(r.name) ?? 0;
          expect(share).toBeLessThanOrEqual(r.room);
          if (total > 0) expect(Math.abs(share - (seats * r.room) / total)).toBeLessThan(1);
        });
      }),
      { seed: 6, numRuns: 300 },
    );
  });
});
