import { defineConfig } from 'vitest/config';

// End-to-end tests against the local cluster lab (test/cluster): real kube-apiserver, etcd, kube-controller-manager,
// kube-scheduler and kwok. globalSetup starts the lab (or reuses a running one) and stops what it started.
// Files run one after another: they share one cluster, and the node-failure suite changes node health.
export default defineConfig({
  test: {
    include: ['test/e2e/**/*.e2e.test.ts'],
    globalSetup: ['test/e2e/global-setup.ts'],
    fileParallelism: false,
    testTimeout: 240_000,
    hookTimeout: 240_000,
    teardownTimeout: 60_000,
  },
});
