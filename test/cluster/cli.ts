// Command line for the lab: `tsx test/cluster/cli.ts <up|down|status|build|fail-nodes|heal-nodes|gitops> [args]`.
// npm scripts: lab:up, lab:down, lab:status, lab:build, lab:fail-nodes, lab:heal-nodes, lab:gitops.
import { ensureBinaries, ensurePeerBinaries } from './build.js';
import { tryGitops } from './gitops-try.js';
import { COMPONENTS, LAB_TIMINGS, down, failNodes, healNodes, kubeconfigPath, status, up, type LabTimings } from './lab.js';

async function main(): Promise<number> {
  const [cmd, ...rest] = process.argv.slice(2);
  const selector = rest.join(',');
  switch (cmd) {
    case 'up': {
      // --timings kwok|realistic: kwok's stage set (kwok.yaml, the default; kwok-realistic.yaml)
      const i = rest.findIndex((a) => a === '--timings' || a.startsWith('--timings='));
      const timings = i < 0 ? 'kwok' : rest[i]!.includes('=') ? rest[i]!.slice('--timings='.length) : rest[i + 1];
      if (!LAB_TIMINGS.includes(timings as LabTimings)) {
        console.error(`--timings must be one of ${LAB_TIMINGS.join(', ')}`);
        return 2;
      }
      const r = await up(undefined, { timings: timings as LabTimings });
      console.log(`export KUBECONFIG=${kubeconfigPath()}`);
      return r.state ? 0 : 1;
    }
    case 'down':
      await down();
      console.log('lab: stopped');
      return 0;
    case 'status': {
      const s = await status();
      for (const c of COMPONENTS) console.log(`${c.padEnd(24)} ${s.components[c] ? `running (pid ${s.components[c]})` : 'stopped'}`);
      if (s.state) console.log(`${'api server'.padEnd(24)} ${s.state.server}`);
      if (s.state) console.log(`${'timings'.padEnd(24)} ${s.state.timings ?? 'kwok'}`);
      console.log(`${'kubeconfig'.padEnd(24)} ${kubeconfigPath()}`);
      console.log(`${'health'.padEnd(24)} ${s.healthy ? 'healthy' : `not healthy${s.detail ? ` (${s.detail})` : ''}`}`);
      return s.healthy ? 0 : 1;
    }
    case 'build':
      // `build argo-rollouts`: the peers benchmark's controller (built on demand by bench:peers too).
      console.log(rest[0] === 'argo-rollouts' ? await ensurePeerBinaries('argo-rollouts') : await ensureBinaries());
      return 0;
    case 'fail-nodes':
      if (!selector) {
        console.error('usage: npm run lab:fail-nodes -- <label selector>   e.g. kubernetes.io/arch=arm64');
        return 2;
      }
      await failNodes(selector);
      return 0;
    case 'heal-nodes':
      await healNodes(selector);
      return 0;
    case 'gitops':
      return tryGitops(rest);
    default:
      console.error(
        'usage: tsx test/cluster/cli.ts <up [--timings kwok|realistic]|down|status|build [argo-rollouts]|fail-nodes <selector>|heal-nodes [selector]|gitops <flux|argocd> [--server-side-diff]>',
      );
      return 2;
  }
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  },
);
