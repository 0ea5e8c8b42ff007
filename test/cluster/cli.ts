// Command line for the lab: `tsx test/cluster/cli.ts <up|down|status|build|fail-nodes|heal-nodes|gitops> [args]`.
// npm scripts: lab:up, lab:down, lab:status, lab:build, lab:fail-nodes, lab:heal-nodes, lab:gitops.
import { BUILD_NAMES, ensureBuild, isBuildName } from './build.js';
import { clustersOption, downFleet, fleetStatus, upFleet } from './fleet.js';
import { tryGitops } from './gitops-try.js';
import { prometheusUrl, startTrafficLab, webUrl } from './traffic.js';
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
      // --clusters a,b,c: one lab per cluster in <labDir>/clusters/<name>/ (fleet.ts), in parallel
      let clusters: string[] | undefined;
      try {
        clusters = clustersOption(rest);
      } catch (e) {
        console.error((e as Error).message);
        return 2;
      }
      if (clusters) {
        for (const lab of await upFleet(clusters, undefined, { timings: timings as LabTimings }))
          console.log(`${lab.name}: export KUBECONFIG=${lab.kubeconfig}`);
        return 0;
      }
      // --net-namespace: the lab in a network namespace of its own (netns.ts); --traffic: that, plus Traefik, the pod
      // runner and Prometheus (traffic.ts)
      const traffic = rest.includes('--traffic');
      const r = await up(undefined, { timings: timings as LabTimings, ...(traffic || rest.includes('--net-namespace') ? { netNamespace: true } : {}) });
      if (traffic) {
        const t = await startTrafficLab();
        console.log(`gateway: ${webUrl(t)}  prometheus: ${prometheusUrl(t)}`);
      }
      console.log(`export KUBECONFIG=${kubeconfigPath()}`);
      return r.state ? 0 : 1;
    }
    case 'down':
      await downFleet();
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
      const fleet = await fleetStatus();
      for (const c of fleet) {
        const health = c.status.healthy ? 'healthy' : c.status.running ? `not healthy${c.status.detail ? ` (${c.status.detail})` : ''}` : 'stopped';
        const rss = c.status.running ? `, ${(c.rssBytes / 2 ** 20).toFixed(0)} MiB RSS` : '';
        console.log(`${`cluster ${c.name}`.padEnd(24)} ${health}${c.status.state ? `, ${c.status.state.server}` : ''}${rss}, kubeconfig ${c.kubeconfig}`);
      }
      // Healthy: something runs, and every lab that runs (the single one, member clusters) is healthy.
      const running = [s, ...fleet.map((c) => c.status)].filter((l) => l.running);
      return running.length > 0 && running.every((l) => l.healthy) ? 0 : 1;
    }
    case 'build': {
      // `build [lab] [argocd] [flux] [traefik] [argo-rollouts] [image-node]`: each in turn (default: the lab); prints each
      // binary directory. The others are made on demand too, by the suites, benchmarks and commands that need them.
      const names = rest.length > 0 ? rest : ['lab'];
      const unknown = names.filter((n) => !isBuildName(n));
      if (unknown.length > 0) {
        console.error(`lab build: unknown ${unknown.join(', ')}; one or more of ${BUILD_NAMES.join(', ')}`);
        return 2;
      }
      for (const name of names.filter(isBuildName)) console.log(await ensureBuild(name));
      return 0;
    }
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
        'usage: tsx test/cluster/cli.ts <up [--timings kwok|realistic] [--clusters a,b,c] [--net-namespace|--traffic]|down|status|build [lab|argocd|flux|traefik|argo-rollouts|image-node]...|fail-nodes <selector>|heal-nodes [selector]|gitops <flux|argocd> [--server-side-diff]>',
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
