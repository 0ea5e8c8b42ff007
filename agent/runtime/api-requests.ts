import type { KubeAccess } from './kube-config.js';

/** Receives one request the agent is about to send: the API server's verb and the resource (with subresource). */
export type RequestCounter = (verb: string, resource: string) => void;

/**
 * The verb the API server's own metrics (apiserver_request_total) would give a request: GET/LIST/WATCH for reads,
 * POST, PUT, PATCH, DELETE/DELETECOLLECTION for writes.
 */
export function requestVerb(method: string, url: URL): string {
  const m = method.toUpperCase();
  const named = parseResourcePath(url.pathname).name !== undefined;
  if (m === 'GET') return url.searchParams.get('watch') === 'true' ? 'WATCH' : named ? 'GET' : 'LIST';
  if (m === 'DELETE') return named ? 'DELETE' : 'DELETECOLLECTION';
  return m;
}

/** The resource of a request path, with its subresource: `pods`, `extendeddeployments/status`, `leases`. */
export function requestResource(url: URL): string {
  const { resource, subresource } = parseResourcePath(url.pathname);
  return subresource ? `${resource}/${subresource}` : resource;
}

/**
 * Splits a REST path: `/api/v1[/namespaces/{ns}]/{resource}[/{name}[/{subresource}]]` or the same under
 * `/apis/{group}/{version}`. `/api/v1/namespaces/{name}` is the namespace itself.
 */
export function parseResourcePath(pathname: string): { resource: string; name?: string; subresource?: string } {
  const parts = pathname.split('/').filter(Boolean);
  let rest = parts[0] === 'api' ? parts.slice(2) : parts[0] === 'apis' ? parts.slice(3) : [];
  if (rest[0] === 'namespaces' && rest.length > 2) rest = rest.slice(2);
  const [resource = 'unknown', name, subresource] = rest;
  return { resource, ...(name !== undefined && { name }), ...(subresource !== undefined && { subresource }) };
}

/**
 * A KubeConfig that reports every request made through it, then behaves exactly like `kc` (it inherits everything from
 * it). API clients built with `makeApiClient` call `applySecurityAuthentication` once per request, with the URL; a
 * Watch calls `applyToHTTPSOptions` once per watch request, without it, so watches are counted as `WATCH
 * <watchResource>` (build one per informer).
 */
export function countingKubeConfig<K extends KubeAccess>(kc: K, count: RequestCounter, watchResource = 'unknown'): K {
  const counted = Object.create(kc) as K;
  counted.applySecurityAuthentication = async (context) => {
    try {
      const url = new URL(context.getUrl());
      count(requestVerb(context.getHttpMethod(), url), requestResource(url));
    } catch {
      count(String(context.getHttpMethod()), 'unknown');
    }
    return kc.applySecurityAuthentication.call(counted, context);
  };
  counted.applyToHTTPSOptions = async (opts) => {
    count('WATCH', watchResource);
    return kc.applyToHTTPSOptions.call(counted, opts);
  };
  return counted;
}
