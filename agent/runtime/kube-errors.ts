/** What the agent needs to know about a failed API call. */
export interface ApiErrorInfo {
  /** HTTP status, when the server answered. */
  readonly code: number | undefined;
  /** The Status reason (NotFound, Conflict, Invalid, …), when the server sent one. */
  readonly reason: string | undefined;
  readonly message: string;
}

/**
 * Reads an error thrown by client-node 1.x: an ApiException carries `code` and the Status as `body` (an object or its
 * JSON text); a watch failure carries `statusCode`; a network failure is a node-fetch FetchError with a system `code`.
 */
export function apiError(error: unknown): ApiErrorInfo {
  const e = (error ?? {}) as { code?: unknown; statusCode?: unknown; body?: unknown; message?: unknown };
  const code = typeof e.code === 'number' ? e.code : typeof e.statusCode === 'number' ? e.statusCode : undefined;
  let body = e.body;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body);
    } catch {
      // Not JSON: keep the text as the message below.
    }
  }
  const status = body !== null && typeof body === 'object' ? (body as { reason?: unknown; message?: unknown }) : {};
  const message =
    typeof status.message === 'string'
      ? status.message
      : typeof body === 'string' && body !== ''
        ? body
        : error instanceof Error
          ? (error.message.split('\n')[0] ?? error.message)
          : String(error);
  return { code, reason: typeof status.reason === 'string' ? status.reason : undefined, message };
}

/** 404: the object is gone. */
export function isNotFound(error: unknown): boolean {
  return apiError(error).code === 404;
}

/** 403: RBAC (or an admission webhook) refused the request; retrying cannot help until someone grants it. */
export function isForbidden(error: unknown): boolean {
  return apiError(error).code === 403;
}

/** 409: a resourceVersion or uid precondition failed, or the object already exists. */
export function isConflict(error: unknown): boolean {
  return apiError(error).code === 409;
}

/** 422: the request was understood but rejected (a failed JSON-patch test, a path that does not exist, validation). */
export function isInvalid(error: unknown): boolean {
  return apiError(error).code === 422;
}

/**
 * The wait a 429 (API Priority and Fairness, rate limits) or 503 asks for with Retry-After (seconds), in ms; undefined
 * when there is none. client-go waits that long before retrying; client-node leaves it to the caller.
 */
export function retryAfterMs(error: unknown): number | undefined {
  const e = (error ?? {}) as { code?: unknown; headers?: unknown };
  if (e.code !== 429 && e.code !== 503) return undefined;
  const header = (e.headers as Record<string, unknown> | undefined)?.['retry-after'];
  const seconds = typeof header === 'string' && /^\d+$/.test(header.trim()) ? Number(header) : Number.NaN;
  return seconds > 0 ? seconds * 1000 : undefined;
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** Whether the API server could not be reached at all (no HTTP answer): connection refused, DNS, TLS, timeout. */
export function isUnreachable(error: unknown): boolean {
  const e = (error ?? {}) as { code?: unknown; type?: unknown; name?: unknown; cause?: unknown };
  if (typeof e.code === 'string' && NETWORK_CODES.has(e.code)) return true;
  if (e.name === 'FetchError' && e.type === 'system') return true;
  return e.cause !== undefined && e.cause !== error && isUnreachable(e.cause);
}
