// The Gateway API's standard-channel CRDs (GatewayClass, Gateway, HTTPRoute, GRPCRoute, ReferenceGrant,
// BackendTLSPolicy), applied to the lab on demand for the traffic suites. They come from the sigs.k8s.io/gateway-api
// module zip (config/crd/standard/) at the version the Traefik wrapper module selects (go/traefik/go.mod: v1.4.0 for
// Traefik v3.6.12), through the Go module cache and checked against that module's go.sum, so the CRDs are exactly
// the API the gateway was compiled against, and no network access other than the module proxy is needed.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { gatewayModDir } from './build.js';
import { applyServerSide, goModuleDir, waitCrdsEstablished } from './gitops.js';

export const GATEWAY_API_MODULE = 'sigs.k8s.io/gateway-api';

/** The module's directory in the Go module cache, at the version Traefik's wrapper module selects. */
export function gatewayApiModuleDir(): string {
  return goModuleDir(gatewayModDir('traefik'), GATEWAY_API_MODULE);
}

/** The version, read from the module cache's directory name (`…/gateway-api@v1.4.0`). */
export function gatewayApiVersion(): string {
  return gatewayApiModuleDir().replace(/^.*@/, '');
}

/** The standard channel's CRD files. */
export function gatewayApiCrdFiles(): string[] {
  const dir = join(gatewayApiModuleDir(), 'config', 'crd', 'standard');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => join(dir, f));
}

/** CRD names from the files' names (`gateway.networking.k8s.io_httproutes.yaml` → `httproutes.gateway.networking.k8s.io`). */
export function crdNameOf(file: string): string {
  const [group = '', plural = ''] = (file.split('/').pop() ?? '').replace(/\.yaml$/, '').split('_');
  return `${plural}.${group}`;
}

/** Applies the standard CRDs (server-side, idempotent) and waits until the API server serves them. */
export async function installGatewayApiCrds(log: (s: string) => void = (s) => console.error(s)): Promise<void> {
  const files = gatewayApiCrdFiles();
  applyServerSide({ files });
  await waitCrdsEstablished(files.map(crdNameOf));
  log(`lab: Gateway API ${gatewayApiVersion()} standard CRDs installed (${files.map(crdNameOf).join(', ')})`);
}
