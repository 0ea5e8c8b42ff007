import { defineConfig } from 'vitest/config';
import { BuildsLastSequencer } from './test/e2e/background-builds.js';

// End-to-end tests against the local cluster lab (test/cluster): real kube-apiserver, etcd, kube-controller-manager,
// kube-scheduler and kwok. globalSetup starts the lab (or reuses a running one) and stops what it started.
// Files run one after another: they share one cluster, and the node-failure suite changes node health.
export default defineConfig({
  test: {
    include: ['test/e2e/**/*.e2e.test.ts'],
    globalSetup: ['test/e2e/global-setup.ts'],
    fileParallelism: false,
    // The suites that need a GitOps engine or the gateway last, their builds made in the background meanwhile.
    sequence: { sequencer: BuildsLastSequencer },
    testTimeout: 240_000,
    hookTimeout: 240_000,
    teardownTimeout: 60_000,
  },
});
