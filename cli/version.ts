import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package whose version `--version` prints. */
const PACKAGE_NAME = 'extended-deployment';

/**
 * The version in this package's package.json: found by walking up from this file, which sits in cli/ when run from
 * sources and in lib/cli/ when installed. Other package.json files on the way (a build's own) are passed over.
 */
export function packageVersion(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === PACKAGE_NAME && typeof pkg.version === 'string') return pkg.version;
    }
    if (dirname(dir) === dir) return 'unknown';
  }
}
