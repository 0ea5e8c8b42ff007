// `npm run lab:gitops -- flux|argocd [--server-side-diff]`: try the GitOps flow locally. Starts the engine next to the
// running lab (built on first use), hands it this working tree's crds/ and dist/ as the next revision, and applies the
// shipped example (examples/gitops/) with only its source swapped. Run it again after `npm run synth` to deliver the
// new render; `npm run lab:down` stops everything.
import { repoRoot } from './build.js';
import { ArgocdLab, applyServerSide, FluxLab, startArgocd, startFlux } from './gitops.js';
import { kubeconfigPath, status } from './lab.js';

const USAGE = 'usage: npm run lab:gitops -- <flux|argocd> [--server-side-diff]';

/** Runs the command; returns the exit code. */
export async function tryGitops(args: readonly string[]): Promise<number> {
  const [engine, ...flags] = args;
  const unknown = flags.filter((f) => f !== '--server-side-diff');
  if ((engine !== 'flux' && engine !== 'argocd') || unknown.length > 0 || (engine === 'flux' && flags.length > 0)) {
    console.error(USAGE);
    return 2;
  }
  if (!(await status()).healthy) {
    console.error('lab: not running; start it first with `npm run lab:up`');
    return 1;
  }
  const agent = `npx edctl agent --kubeconfig ${kubeconfigPath()}`;
  if (engine === 'flux') {
    const flux = await startFlux();
    const { revision } = flux.publish(repoRoot, 'local');
    applyServerSide({ objects: FluxLab.exampleKustomizations() });
    console.log(`Flux applies revision ${revision} (this tree's crds/ and dist/).`);
    console.log(`  watch:      kubectl --kubeconfig ${kubeconfigPath()} get kustomizations -n flux-system -w`);
    console.log(`  controller: ${flux.logFile}`);
    console.log(`  the agent:  ${agent}`);
    return 0;
  }
  const argocd = await startArgocd({ serverSideDiff: flags.includes('--server-side-diff') });
  const commit = argocd.commit(repoRoot, 'lab:gitops: this tree');
  const app = ArgocdLab.exampleApplication();
  applyServerSide({ objects: [app] });
  argocd.refresh(app.metadata.name);
  console.log(`Argo CD syncs commit ${commit.slice(0, 12)} of ${ArgocdLab.repoUrl} (this tree's crds/ and dist/).`);
  console.log(`  watch:      kubectl --kubeconfig ${kubeconfigPath()} get applications -n argocd -w`);
  console.log(`  controller: ${argocd.controllerLog}`);
  console.log(`  the agent:  ${agent}`);
  return 0;
}
