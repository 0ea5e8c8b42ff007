import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { App, Chart } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { DeployRegion } from './deploy-region.js';
import { RenderError, renderErrorReport } from './render-error.js';

const root = resolve(import.meta.dirname, '..');
const invalidRegion = `new DeployRegion(new Chart(new App(), 'c'), 'Bad_Name', { matchLabels: {} });`;

/** The error the invalid region above throws, caught here. */
function expectedError(): RenderError {
  try {
    new DeployRegion(new Chart(new App(), 'c'), 'Bad_Name', { matchLabels: {} });
  } catch (error) {
    if (error instanceof RenderError) return error;
    throw error;
  }
  throw new Error('the region was valid');
}

/** Runs a cdk8s app's code in a new Node.js process, as `cdk8s synth` runs an app. */
function runApp(inputType: 'module' | 'commonjs', code: string) {
  const prelude =
    inputType === 'module'
      ? `import { App, Chart } from 'cdk8s';\nimport { DeployRegion } from './constructs/index.ts';\n`
      : `const { App, Chart } = require('cdk8s');\nconst { DeployRegion } = require('./constructs/index.ts');\n`;
  return spawnSync(process.execPath, ['--import', 'tsx', `--input-type=${inputType}`, '-e', prelude + code], { cwd: root, encoding: 'utf8' });
}

describe('an app that dies of invalid construct props', () => {
  it.each(['module', 'commonjs'] as const)('prints each problem with its object and path, no stack and no dump (%s)', (inputType) => {
    const result = runApp(inputType, invalidRegion);
    expect(result.stderr).toBe(renderErrorReport(expectedError()));
    expect(result.status).toBe(1);
  });

  it.each([
    {
      what: "leaves a RenderError to the app's own uncaughtException handler",
      code: `process.on('uncaughtException', (e) => { console.log('handled', e.name); });\n${invalidRegion}`,
      stdout: 'handled RenderError\n',
      stderr: /^$/,
      status: 0,
    },
    { what: 'leaves other errors to Node.js', code: `throw new Error('not ours');`, stdout: '', stderr: /Error: not ours\n {4}at /, status: 1 },
  ])('$what', ({ code, stdout, stderr, status }) => {
    const result = runApp('commonjs', code);
    expect(result.stdout).toBe(stdout);
    expect(result.stderr).toMatch(stderr);
    expect(result.status).toBe(status);
  });
});
