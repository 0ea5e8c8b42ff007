// The lab API server's audit log (test/cluster/lab.ts sets the policy), read back by suites that must know what reached
// the API server and when, independently of any client's clock or watch: the GitOps suites (the order an engine applied
// a commit) and the fencing suite (which agent replica wrote what, by User-Agent).
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { labDir } from '../cluster/lab.js';

/** The fields of an audit event the suites read. */
export interface AuditEvent {
  readonly verb?: string;
  readonly requestURI?: string;
  readonly userAgent?: string;
  readonly objectRef?: { resource?: string; namespace?: string; name?: string; subresource?: string };
  readonly responseStatus?: { code?: number };
  readonly requestReceivedTimestamp?: string;
  readonly stageTimestamp?: string;
  readonly user?: { username?: string };
  readonly requestObject?: unknown;
  readonly responseObject?: unknown;
}

/**
 * Every audit event in audit.log and the file it was last rotated into (audit-<time>.log), in file order: of the lab,
 * or of the lab in `dir` (a fleet member's).
 */
export function auditEvents(dir = labDir()): AuditEvent[] {
  const logs = join(dir, 'logs');
  if (!existsSync(logs)) return [];
  const files = readdirSync(logs).filter((f) => /^audit(-.+)?\.log$/.test(f));
  return files.flatMap((f) =>
    readFileSync(join(logs, f), 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as AuditEvent),
  );
}

/** Whether an event is a write (not a dry run). */
export function isWrite(e: AuditEvent): boolean {
  return ['create', 'update', 'patch', 'delete', 'deletecollection'].includes(e.verb ?? '') && !(e.requestURI ?? '').includes('dryRun');
}
