// vitest globalSetup for the e2e suites: fetches the agent image's Node.js (image-node.ts) and starts the lab once
// (building the binaries on a cold cache) or reuses a healthy running one, and stops it at the end only if this run
// started it, and the background builds if they still run (background-builds.ts).
import { imageNode } from '../cluster/image-node.js';
import { down, up } from '../cluster/lab.js';
import { stopBackgroundBuilds } from './background-builds.js';

export default async function setup(): Promise<() => Promise<void>> {
  const log = (s: string) => console.error(s);
  // Fetched here, once, rather than by the first suite's first agent (test workers share the cache, not the fetch).
  log(`e2e: the agent runs on ${imageNode(log)} (the agent image's Node.js)`);
  const r = await up(log);
  if (r.started) log(`e2e: started the lab in ${r.seconds.toFixed(1)} s`);
  else log('e2e: reusing the running lab (left running afterwards)');
  return async () => {
    stopBackgroundBuilds();
    if (r.started && !process.env.LAB_KEEP) {
      await down(log);
    }
  };
}
