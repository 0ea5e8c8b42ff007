// Shared by the agent's unit tests that need real TLS on loopback: certificates made with openssl at test time.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';

/** Whether openssl is on the PATH: the TLS tests are skipped where it is not. */
export const hasOpenssl = spawnSync('openssl', ['version']).status === 0;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * A new directory holding a self-signed certificate for 127.0.0.1 as tls.crt and tls.key (P-256), removed after the
 * test.
 */
export function makeCertDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'agent-cert-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=agent-test',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      join(dir, 'tls.key'),
      '-out',
      join(dir, 'tls.crt'),
    ],
    { stdio: 'ignore' },
  );
  dirs.push(dir);
  return dir;
}
