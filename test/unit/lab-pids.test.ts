// Which recorded lab processes count as running: waitHealthy fails a start when its component seems gone, so a live
// process must never read as gone, and an exited one must.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { inLab, livePid, pidAlive, startProcess } from '../cluster/lab.js';

const dir = mkdtempSync(join(tmpdir(), 'lab-pids-'));
for (const sub of ['pids', 'logs']) mkdirSync(join(dir, sub));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('livePid', () => {
  it('keeps a component that nsenter is exec-ing: never gone while it runs (its command line reads empty during execve)', async () => {
    let looks = 0;
    const gone: number[] = [];
    for (let run = 0; run < 20; run++) {
      // As the lab starts a component in its network namespace (netns.ts), here into this process's own namespace.
      const pid = inLab(dir, 'pids', () => startProcess('sleeper', 'nsenter', ['-t', String(process.pid), '-n', '--', '/bin/sleep', '0.2'], {}, 'sleep'));
      const until = Date.now() + 100;
      while (Date.now() < until) {
        looks++;
        if (inLab(dir, 'pids', () => livePid('sleeper')) === undefined && pidAlive(pid)) gone.push(run);
      }
    }
    expect(looks).toBeGreaterThan(1000);
    expect(gone).toEqual([]);
  });

  it('drops a zombie (exited, not yet reaped): its command line reads empty too', async () => {
    // sh becomes `sleep 1`, which never reaps its inherited child (`sleep 0.1`): a zombie once that has exited.
    const pidFile = join(dir, 'zombie-pid');
    const parent = spawn('sh', ['-c', `sleep 0.1 & echo $! > ${pidFile}; exec sleep 1`], { stdio: 'ignore' });
    try {
      while (!/^\d+\n/.test(existsSync(pidFile) ? readFileSync(pidFile, 'utf8') : '')) await sleep(10);
      const zombie = Number(readFileSync(pidFile, 'utf8').trim());
      while (!readFileSync(`/proc/${zombie}/stat`, 'utf8').includes(') Z ')) await sleep(10);
      writeFileSync(join(dir, 'pids', 'zombie.pid'), `${zombie}\nsleep\n`);
      expect(pidAlive(zombie)).toBe(true);
      expect(inLab(dir, 'pids', () => livePid('zombie'))).toBeUndefined();
    } finally {
      parent.kill();
    }
  });
});
