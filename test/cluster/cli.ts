// Command line for the lab: `tsx test/cluster/cli.ts <up|down|status|build|fail-nodes|heal-nodes|gitops> [args]`.
// npm scripts: lab:up, lab:down, lab:status, lab:build, lab:fail-nodes, lab:heal-nodes, lab:gitops.
import { ensureBinaries } from './build.js';
import { tryGitops } from './gitops-try.js';
import { COMPONENTS, down, failNodes, healNodes, kubeconfigPath, status, up } from './lab.js';

async function main(): Promise<number> {
  const [cmd, ...rest] = process.argv.slice(2);
  const selector = rest.join(',');
  switch (cmd) {
    case 'up': {
      const r = await up();
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
      console.log(`${'kubeconfig'.padEnd(24)} ${kubeconfigPath()}`);
      console.log(`${'health'.padEnd(24)} ${s.healthy ? 'healthy' : `not healthy${s.detail ? ` (${s.detail})` : ''}`}`);
      return s.healthy ? 0 : 1;
    }
    case 'build':
      console.log(await ensureBinaries());
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
        'usage: tsx test/cluster/cli.ts <up|down|status|build|fail-nodes <selector>|heal-nodes [selector]|gitops <flux|argocd> [--server-side-diff]>',
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
