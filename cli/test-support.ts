// Shared by edctl's unit tests: captured stdout/stderr around each test, temporary spec folders, the sample specs.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, vi } from 'vitest';

/** What edctl printed during the current test. */
export const captured = { out: '', err: '' };

/** Captures stdout and stderr around every test of the calling file. */
export function captureOutput(): void {
  beforeEach(() => {
    captured.out = '';
    captured.err = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((captured.out += String(chunk)), true));
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((captured.err += String(chunk)), true));
  });
  afterEach(() => vi.restoreAllMocks());
}

/** A temporary folder holding the given files. */
export function fixture(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'edctl-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

/** The upstream sample's DeployRegions and ExtendedDeployment, as text. */
export const regions = readFileSync('examples/upstream-sample/deployregions.yaml', 'utf8');
export const sample = readFileSync('examples/upstream-sample/extendeddeployment.yaml', 'utf8');
