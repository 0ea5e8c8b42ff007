/** A candidate to receive replicas, with how many it can take. */
export interface Recipient {
  readonly name: string;
  readonly room: number;
}

/**
 * Hands out `count` replicas in proportion to each recipient's room (Hamilton's method: floor each quota, then one
 * more to the largest remainders, ties to the earlier recipient), never beyond a recipient's room. Hands out at most
 * the total room; what does not fit is left out. Returns the shares in the recipients' order, zeros omitted.
 */
export function apportionByRoom(count: number, recipients: readonly Recipient[]): Map<string, number> {
  const open = recipients.filter((r) => r.room > 0);
  const totalRoom = open.reduce((s, r) => s + r.room, 0);
  const seats = Math.min(count, totalRoom);
  const shares = new Map<string, number>();
  if (seats <= 0) return shares;
  const quotas = open.map((r, i) => ({ i, name: r.name, room: r.room, floor: Math.floor((seats * r.room) / totalRoom), rest: (seats * r.room) % totalRoom }));
  let left = seats - quotas.reduce((s, q) => s + q.floor, 0);
  for (const q of [...quotas].sort((a, b) => b.rest - a.rest || a.i - b.i)) {
    if (left <= 0) break;
    if (q.floor < q.room) {
      q.floor += 1;
      left -= 1;
    }
  }
  for (const q of quotas) if (q.floor > 0) shares.set(q.name, q.floor);
  return shares;
}
