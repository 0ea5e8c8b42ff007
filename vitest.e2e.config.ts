import { configDefaults, defineConfig } from 'vitest/config';

// Suites left out of a plain run (`npm run test:e2e`) until they join the CI budget, run only when named on the
// command line (`vitest run --config vitest.e2e.config.ts test/e2e/traffic-lab.e2e.test.ts`): traffic-lab builds
// Traefik on a cold cache (about 9 min; test/cluster/README.md).
// The traffic suites need Traefik (a cold build takes about 9 minutes): they join npm test once CI has the time.
const ON_DEMAND = ['test/e2e/traffic-lab.e2e.test.ts', 'test/e2e/traffic.e2e.test.ts'];
const named = (file: string) => process.argv.slice(2).some((arg) => !arg.startsWith('-') && arg.length > 3 && file.includes(arg.replace(/^\.\//, '')));

// End-to-end tests against the local cluster lab (test/cluster): real kube-apiserver, etcd, kube-controller-manager,
// kube-scheduler and kwok. globalSetup starts the lab (or reuses a running one) and stops what it started.
// Files run one after another: they share one cluster, and the node-failure suite changes node health.
export default defineConfig({
  test: {
    include: ['test/e2e/**/*.e2e.test.ts'],
    exclude: [...configDefaults.exclude, ...ON_DEMAND.filter((f) => !named(f))],
    globalSetup: ['test/e2e/global-setup.ts'],
    fileParallelism: false,
    testTimeout: 240_000,
    hookTimeout: 240_000,
    teardownTimeout: 60_000,
  },
});
