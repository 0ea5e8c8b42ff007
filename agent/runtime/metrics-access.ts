import { createHash } from 'node:crypto';
import { AuthenticationV1Api, AuthorizationV1Api, makeApiClient } from './kube-client.js';
import type { KubeAccess } from './kube-config.js';
import type { Clock } from './clock.js';
import { apiError } from './kube-errors.js';
import type { Logger } from './log.js';

/** Who a bearer token belongs to, as the API server's TokenReview answered. */
export interface ReviewedUser {
  readonly username: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** The two questions the agent asks the API server about a scraper (fakes in tests). */
export interface AccessReviews {
  /** The user `token` authenticates as; undefined when the API server does not accept it. Throws when it could not ask. */
  authenticate(token: string): Promise<ReviewedUser | undefined>;
  /** Whether `user` may use `verb` on the non-resource URL `path`. Throws when it could not ask. */
  authorize(user: ReviewedUser, path: string, verb: string): Promise<boolean>;
}

/** What to answer a request: go ahead, or an HTTP status with its message. */
export type AccessDecision = { readonly allowed: true } | { readonly allowed: false; readonly code: 401 | 403 | 500; readonly message: string };

/** How long review answers are reused, and how many are kept. */
export interface AccessCacheOptions {
  /** A TokenReview's answer, accepted or not. */
  readonly tokenTtlMs: number;
  /** An allowed SubjectAccessReview. */
  readonly allowTtlMs: number;
  /** A denied SubjectAccessReview: shorter, so a new RoleBinding takes effect soon. */
  readonly denyTtlMs: number;
  /** Entries per cache; the oldest go first, so random tokens cannot grow memory without bound. */
  readonly maxEntries: number;
}

/**
 * controller-runtime's filters.WithAuthenticationAndAuthorization: tokens cached 1 minute, allowed decisions 5 minutes,
 * denied ones 30 seconds. A scraper every 15 s costs the API server a TokenReview a minute and a
 * SubjectAccessReview every 5 minutes.
 */
export const METRICS_ACCESS_CACHE: AccessCacheOptions = { tokenTtlMs: 60_000, allowTtlMs: 300_000, denyTtlMs: 30_000, maxEntries: 1024 };

/** A map whose entries expire, holding at most `max` (insertion order: the oldest is dropped first). */
class ExpiringMap<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();

  constructor(
    private readonly clock: Clock,
    private readonly max: number,
  ) {}

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.until > this.clock.now()) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  set(key: string, value: V, ttlMs: number): void {
    this.entries.delete(key);
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { value, until: this.clock.now() + ttlMs });
  }
}

/** The token of an `Authorization: Bearer <token>` header; undefined for anything else. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1];
}

/**
 * Decides whether a request may read a non-resource URL of the agent, as kube-rbac-proxy and controller-runtime's
 * secure metrics do: the bearer token is authenticated by a TokenReview (none or not accepted: 401) and the user
 * authorized by a SubjectAccessReview (not allowed: 403); a review that could not be made is a 500 and is not cached.
 * Tokens are cached by their SHA-256, never in clear.
 */
export class MetricsAccess {
  private readonly users: ExpiringMap<ReviewedUser | null>;
  private readonly decisions: ExpiringMap<boolean>;

  constructor(
    private readonly reviews: AccessReviews,
    clock: Clock,
    private readonly log: Logger,
    private readonly cache: AccessCacheOptions = METRICS_ACCESS_CACHE,
  ) {
    this.users = new ExpiringMap(clock, cache.maxEntries);
    this.decisions = new ExpiringMap(clock, cache.maxEntries);
  }

  /** The decision for a request with this Authorization header, to `verb` the non-resource URL `path`. */
  async check(authorization: string | undefined, path: string, verb: string): Promise<AccessDecision> {
    const token = bearerToken(authorization);
    if (token === undefined) return { allowed: false, code: 401, message: 'Unauthorized: a bearer token is required' };
    const tokenKey = createHash('sha256').update(token).digest('hex');
    let user = this.users.get(tokenKey);
    if (user === undefined) {
      try {
        user = (await this.reviews.authenticate(token)) ?? null;
      } catch (error) {
        this.log.warn('metrics: TokenReview failed', { error: apiError(error).message });
        return { allowed: false, code: 500, message: 'Authentication failed' };
      }
      this.users.set(tokenKey, user, this.cache.tokenTtlMs);
    }
    if (user === null) return { allowed: false, code: 401, message: 'Unauthorized: the token was not accepted' };
    const decisionKey = JSON.stringify([user.username, user.uid ?? '', [...(user.groups ?? [])].sort(), user.extra ?? {}, path, verb]);
    let allowed = this.decisions.get(decisionKey);
    if (allowed === undefined) {
      try {
        allowed = await this.reviews.authorize(user, path, verb);
      } catch (error) {
        this.log.warn('metrics: SubjectAccessReview failed', { user: user.username, error: apiError(error).message });
        return { allowed: false, code: 500, message: `Authorization for user ${user.username} failed` };
      }
      this.decisions.set(decisionKey, allowed, allowed ? this.cache.allowTtlMs : this.cache.denyTtlMs);
    }
    if (!allowed) {
      this.log.debug('metrics: access denied', { user: user.username, path, verb });
      return { allowed: false, code: 403, message: `Authorization denied for user ${user.username} (${verb} ${path})` };
    }
    return { allowed: true };
  }
}

/** The reviews, asked of the API server (the agent needs `create` on tokenreviews and subjectaccessreviews). */
export function apiAccessReviews(kc: KubeAccess): AccessReviews {
  const authentication = makeApiClient(kc, AuthenticationV1Api);
  const authorization = makeApiClient(kc, AuthorizationV1Api);
  return {
    async authenticate(token) {
      const review = await authentication.createTokenReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } } });
      const user = review.status?.user;
      if (review.status?.authenticated !== true || !user?.username) return undefined;
      return {
        username: user.username,
        ...(user.uid && { uid: user.uid }),
        ...(user.groups && { groups: user.groups }),
        ...(user.extra && { extra: user.extra }),
      };
    },
    async authorize(user, path, verb) {
      const review = await authorization.createSubjectAccessReview({
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: {
            user: user.username,
            ...(user.uid && { uid: user.uid }),
            ...(user.groups && { groups: [...user.groups] }),
            ...(user.extra && { extra: Object.fromEntries(Object.entries(user.extra).map(([k, v]) => [k, [...v]])) }),
            nonResourceAttributes: { path, verb },
          },
        },
      });
      return review.status?.allowed === true && review.status.denied !== true;
    },
  };
}
