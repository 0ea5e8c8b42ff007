/**
 * bench/fleet-gate's own lab directory, set before any lab code is imported (lab-kit.ts and the lab's CLI read LAB_DIR
 * when they load): LAB_DIR when given, else a directory of its own under the system's temporary folder, so the bench
 * never starts, reuses or stops another run's lab (the single lab in .lab, an e2e run's member clusters).
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Whether LAB_DIR was unset, so the bench chose its own directory (and may remove it at the end). */
export const LAB_DIR_DEFAULTED = !process.env['LAB_DIR'];
if (LAB_DIR_DEFAULTED) process.env['LAB_DIR'] = join(tmpdir(), 'bench-fleet-lab');
export const LAB_DIR = process.env['LAB_DIR']!;
