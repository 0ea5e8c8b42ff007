import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { ARGOCD_CM_FILE, argocdCmYaml } from './argocd-cm.js';

// `npm run gitops`: regenerates the argocd-cm snippet from the Lua health scripts (a test fails when it is stale).
writeFileSync(ARGOCD_CM_FILE, argocdCmYaml());
process.stdout.write(`wrote ${relative(process.cwd(), ARGOCD_CM_FILE)}\n`);
