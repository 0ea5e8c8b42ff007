import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

/**
 * The package as its users get it: `npm pack` of a copy of this tree (its own build, so lib/ here is never read or
 * written), installed into two consumer projects that compile with their own tsc and synth with their own cdk8s.
 * One is what `cdk8s init typescript-app` makes (CommonJS, node10 resolution, no skipLibCheck), one is ESM (NodeNext).
 */

const root = resolve(import.meta.dirname, '../..');
const exec = promisify(execFile);
const own = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  devDependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
};
const cdk8sTemplate = join(root, 'node_modules/cdk8s-cli/templates/typescript-app');
const templateDevDependencies = (JSON.parse(readFileSync(join(cdk8sTemplate, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> })
  .devDependencies;

/** What a consumer writes: both constructs, with typed strategy props. */
const consumerMain = `import { App, Chart } from 'cdk8s';
import { DeployRegion, ExtendedDeployment, type StrategyProps } from 'extended-deployment/constructs';

const app = new App({ outdir: 'dist' });
const amd = new DeployRegion(new Chart(app, 'regions'), 'amd', { matchLabels: { 'kubernetes.io/arch': 'amd64' } });
const strategy: StrategyProps = { needWaitingForConfirm: true, syncWaitTimeout: 900 };
new ExtendedDeployment(new Chart(app, 'web', { namespace: 'shop' }), 'web', {
  replicas: 2,
  template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'web:1' }] } },
  regions: [{ region: amd }],
  strategy,
});
app.synth();
`;

interface Consumer {
  readonly name: string;
  readonly packageJson: Record<string, unknown>;
  readonly tsconfig: unknown;
  /** Further type checks of the same sources: tsc arguments. */
  readonly alsoCompiles: readonly (readonly string[])[];
  /** Node.js arguments before main.js. */
  readonly nodeArgs: readonly string[];
  /**
   * Code that prints API_VERSION of the core entry point. Not in main.ts for CommonJS: core's declarations are zod's
   * schemas, and zod's declarations need `esModuleInterop` there, which cdk8s' template does not set.
   */
  readonly printApiVersion: readonly string[];
}

function consumers(tarball: string): Consumer[] {
  const dependencies = { 'extended-deployment': `file:${tarball}`, cdk8s: own.devDependencies['cdk8s'], constructs: own.devDependencies['constructs'] };
  return [
    {
      name: 'commonjs',
      packageJson: {
        name: 'commonjs-consumer',
        private: true,
        main: 'main.js',
        // The oldest constructs the package accepts, not the one it is developed with: the app's own is the one the
        // constructs extend (a second copy fails the compile, TS2345, and the synth).
        dependencies: { ...dependencies, constructs: own.peerDependencies['constructs']?.replace(/^\^/, '') },
        devDependencies: { typescript: templateDevDependencies['typescript'], '@types/node': templateDevDependencies['@types/node'] },
      },
      tsconfig: JSON.parse(readFileSync(join(cdk8sTemplate, 'tsconfig.json'), 'utf8')),
      // TypeScript's own CommonJS mode reads exports' "require" condition, as node10 reads typesVersions.
      alsoCompiles: [['--module', 'node16', '--moduleResolution', 'node16', '--noEmit']],
      // The CommonJS build, not require(esm): Node.js before 20.19 and jest's module loader cannot load ES modules.
      nodeArgs: ['--no-experimental-require-module'],
      printApiVersion: ['--no-experimental-require-module', '-p', "require('extended-deployment/core').API_VERSION"],
    },
    {
      name: 'esm',
      packageJson: {
        name: 'esm-consumer',
        private: true,
        type: 'module',
        dependencies,
        devDependencies: { typescript: own.devDependencies['typescript'], '@types/node': own.devDependencies['@types/node'] },
      },
      tsconfig: {
        compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, types: ['node'] },
        include: ['main.ts'],
      },
      alsoCompiles: [],
      nodeArgs: [],
      printApiVersion: ['--input-type=module', '-e', "import { API_VERSION } from 'extended-deployment/core'; console.log(API_VERSION);"],
    },
  ];
}

async function run(cwd: string, command: string, args: readonly string[]): Promise<string> {
  try {
    return (await exec(command, args, { cwd, maxBuffer: 64 * 1024 * 1024 })).stdout;
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd}:\n${stdout}${stderr}`, { cause: error });
  }
}

/** A copy of the tree without build outputs, caches or history, sharing node_modules; built and packed there. */
async function pack(work: string): Promise<string> {
  const copy = join(work, 'repo');
  const skipped = new Set(['node_modules', 'lib', 'lib-bench', 'dist', '.lab', '.git']);
  cpSync(root, copy, { recursive: true, filter: (source) => !skipped.has(relative(root, source).split(sep)[0] ?? '') });
  symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'), 'dir');
  // What `prepare` runs on npm pack; explicit, so that its output cannot mix with pack's.
  await run(copy, 'npm', ['run', 'build']);
  await run(copy, 'npm', ['pack', '--ignore-scripts', '--pack-destination', work]);
  const [tarball] = readdirSync(work).filter((file) => file.endsWith('.tgz'));
  if (tarball === undefined) throw new Error(`npm pack wrote no tarball into ${work}`);
  return join(work, tarball);
}

interface Synth {
  /** What the core entry point says objects' apiVersion is. */
  readonly apiVersion: string;
  /** The synth output, files in name order. */
  readonly yaml: string;
}

/** Installs the consumer, type checks it as configured, compiles it and runs it. */
async function synth(work: string, consumer: Consumer): Promise<Synth> {
  const dir = join(work, consumer.name);
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify(consumer.packageJson, null, 2));
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(consumer.tsconfig, null, 2));
  writeFileSync(join(dir, 'main.ts'), consumerMain);
  await run(dir, 'npm', ['install', '--prefer-offline', '--no-audit', '--no-fund']);
  const tsc = join(dir, 'node_modules/typescript/bin/tsc');
  for (const args of consumer.alsoCompiles) await run(dir, process.execPath, [tsc, '-p', '.', ...args]);
  await run(dir, process.execPath, [tsc, '-p', '.']);
  await run(dir, process.execPath, [...consumer.nodeArgs, 'main.js']);
  const apiVersion = (await run(dir, process.execPath, consumer.printApiVersion)).trim();
  const dist = join(dir, 'dist');
  const files = readdirSync(dist).sort();
  return { apiVersion, yaml: files.map((file) => readFileSync(join(dist, file), 'utf8')).join('---\n') };
}

describe('the packed package', () => {
  const work = mkdtempSync(join(tmpdir(), 'ed-package-'));
  const results = new Map<string, Synth>();

  beforeAll(async () => {
    const tarball = await pack(work);
    const list = consumers(tarball);
    // Settled, not all: a failed consumer must not leave the other one writing into `work` while afterAll removes it.
    const synths = await Promise.allSettled(list.map((consumer) => synth(work, consumer)));
    list.forEach((consumer, i) => {
      const outcome = synths[i]!;
      if (outcome.status === 'rejected') throw outcome.reason;
      results.set(consumer.name, outcome.value);
    });
  });

  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it.each(['commonjs', 'esm'])('compiles and synthesizes the constructs in a %s project', (name) => {
    const { apiVersion, yaml } = results.get(name)!;
    const objects = parseAllDocuments(yaml).map((document) => document.toJS());
    expect(objects.map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`)).toEqual([
      'DeployRegion//amd',
      'ExtendedDeployment/shop/web',
      'ReplicaSet/shop/web-amd',
    ]);
    const [region, ed, replicaSet] = objects;
    expect(new Set(objects.map((o) => o.apiVersion))).toEqual(new Set([apiVersion, 'apps/v1']));
    expect(region.spec.matchLabels).toEqual({ 'kubernetes.io/arch': 'amd64' });
    expect(ed.spec).toMatchObject({ replicas: 2, strategy: { needWaitingForConfirm: true, syncWaitTimeout: 900 } });
    expect(JSON.stringify(replicaSet.spec.template.spec)).toContain('"kubernetes.io/arch"');
  });

  it('renders the same objects from its CommonJS and its ESM build', () => {
    expect(results.get('commonjs')!.yaml).toBe(results.get('esm')!.yaml);
  });

  // The agent's image and `npx edctl` start lib/cli/main.js: one bundle of the CLI, the agent, core and the
  // dependencies they load, in lib/cli/chunks (the last step of package.json "build"). Copied without the rest of
  // lib/, it must still work, reading only the packages left out of it (client-node, cdk8s and constructs) from
  // node_modules.
  it('runs edctl from its bundle alone: lib/cli/main.js and its chunks', async () => {
    const installed = join(work, 'esm', 'node_modules', 'extended-deployment');
    const alone = join(work, 'esm', 'edctl-alone');
    mkdirSync(join(alone, 'lib', 'cli'), { recursive: true });
    cpSync(join(installed, 'package.json'), join(alone, 'package.json'));
    cpSync(join(installed, 'lib', 'cli', 'main.js'), join(alone, 'lib', 'cli', 'main.js'));
    cpSync(join(installed, 'lib', 'cli', 'chunks'), join(alone, 'lib', 'cli', 'chunks'), { recursive: true });
    const specs = join(work, 'specs');
    mkdirSync(specs);
    writeFileSync(join(specs, 'web.yaml'), bundleSpecs);
    const edctl = (...args: string[]) => run(work, process.execPath, [join(alone, 'lib', 'cli', 'main.js'), ...args]);

    expect((await edctl('--version')).trim()).toBe(JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')).version);
    await edctl('render', '-f', specs, '-o', join(work, 'rendered'));
    const objects = parseAllDocuments(readFileSync(join(work, 'rendered', 'web.k8s.yaml'), 'utf8')).map((document) => document.toJS());
    expect(objects.map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`)).toEqual([
      'DeployRegion//amd',
      'ExtendedDeployment/shop/web',
      'ReplicaSet/shop/web-amd',
    ]);
    // Validation runs in the bundle too (zod is in it): a bad spec is reported with its field path, not a crash.
    writeFileSync(join(specs, 'web.yaml'), bundleSpecs.replace('replicas: 2', 'replicas: -1'));
    await expect(edctl('validate', '-f', specs)).rejects.toThrow(/ExtendedDeployment shop\/web: spec\.replicas/);
  });
});

/** consumerMain's objects as plain YAML specs, for edctl. */
const bundleSpecs = `apiVersion: extendeddeployment.io/v1beta1
kind: DeployRegion
metadata:
  name: amd
spec:
  matchLabels:
    kubernetes.io/arch: amd64
---
apiVersion: extendeddeployment.io/v1beta1
kind: ExtendedDeployment
metadata:
  name: web
  namespace: shop
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
        - name: web
          image: web:1
  regions:
    - name: amd
`;
