import { describe, expect, it } from 'vitest';
import { FakeClock } from './clock.js';
import { silentLogger } from './log.js';
import { METRICS_ACCESS_CACHE, MetricsAccess, bearerToken, type AccessReviews, type ReviewedUser } from './metrics-access.js';

const PROMETHEUS: ReviewedUser = { username: 'system:serviceaccount:monitoring:prometheus', uid: 'u-1', groups: ['system:serviceaccounts'] };
const STRANGER: ReviewedUser = { username: 'system:serviceaccount:shop:web', uid: 'u-2' };

/** Reviews as an API server with two valid tokens, where only Prometheus may get /metrics; every question is recorded. */
function fakeReviews(fail: { authenticate?: boolean; authorize?: boolean } = {}) {
  const asked: string[] = [];
  const reviews: AccessReviews = {
    async authenticate(token) {
      asked.push(`TokenReview ${token}`);
      if (fail.authenticate) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      return token === 'prom-token' ? PROMETHEUS : token === 'web-token' ? STRANGER : undefined;
    },
    async authorize(user, path, verb) {
      asked.push(`SubjectAccessReview ${user.username} ${verb} ${path}`);
      if (fail.authorize) throw Object.assign(new Error('HTTP 500'), { code: 500 });
      return user === PROMETHEUS && path === '/metrics' && verb === 'get';
    },
  };
  return { reviews, asked };
}

function setup(fail?: { authenticate?: boolean; authorize?: boolean }, cache = METRICS_ACCESS_CACHE) {
  const clock = new FakeClock();
  const { reviews, asked } = fakeReviews(fail);
  const access = new MetricsAccess(reviews, clock, silentLogger, cache);
  const check = (header: string | undefined) => access.check(header, '/metrics', 'get');
  return { clock, asked, check };
}

describe('bearerToken', () => {
  it("reads the token of a Bearer header, whatever the scheme's case, and nothing else", () => {
    expect(bearerToken('Bearer abc.def')).toBe('abc.def');
    expect(bearerToken('bearer abc')).toBe('abc');
    for (const bad of [undefined, '', 'Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', 'Bearer a b', 'abc']) expect(bearerToken(bad), String(bad)).toBeUndefined();
  });
});

describe('MetricsAccess', () => {
  it('answers 401 without a bearer token, asking nothing', async () => {
    const { check, asked } = setup();
    expect(await check(undefined)).toMatchObject({ allowed: false, code: 401 });
    expect(await check('Basic dXNlcjpwYXNz')).toMatchObject({ allowed: false, code: 401 });
    expect(asked).toEqual([]);
  });

  it('answers 401 for a token the API server does not accept, 403 for a user not allowed, and lets an allowed one through', async () => {
    const { check, asked } = setup();
    expect(await check('Bearer forged')).toEqual({ allowed: false, code: 401, message: 'Unauthorized: the token was not accepted' });
    expect(await check('Bearer web-token')).toEqual({
      allowed: false,
      code: 403,
      message: 'Authorization denied for user system:serviceaccount:shop:web (get /metrics)',
    });
    expect(await check('Bearer prom-token')).toEqual({ allowed: true });
    expect(asked).toEqual([
      'TokenReview forged',
      'TokenReview web-token',
      'SubjectAccessReview system:serviceaccount:shop:web get /metrics',
      'TokenReview prom-token',
      'SubjectAccessReview system:serviceaccount:monitoring:prometheus get /metrics',
    ]);
  });

  it('reuses answers for their TTL: a token a minute, an allowed decision 5 minutes, a denied one 30 seconds', async () => {
    const { check, asked, clock } = setup();
    for (const token of ['prom-token', 'web-token', 'forged']) await check(`Bearer ${token}`);
    const first = asked.length;
    clock.advance(METRICS_ACCESS_CACHE.denyTtlMs - 1);
    for (const token of ['prom-token', 'web-token', 'forged']) await check(`Bearer ${token}`);
    expect(asked.length).toBe(first); // all three answered from the caches

    clock.advance(1); // the denial expired; the tokens did not
    expect(await check('Bearer web-token')).toMatchObject({ code: 403 });
    expect(asked.slice(first)).toEqual(['SubjectAccessReview system:serviceaccount:shop:web get /metrics']);

    clock.advance(METRICS_ACCESS_CACHE.tokenTtlMs); // every token expired, the allowed decision not
    expect(await check('Bearer prom-token')).toEqual({ allowed: true });
    expect(await check('Bearer forged')).toMatchObject({ code: 401 });
    expect(asked.slice(first + 1)).toEqual(['TokenReview prom-token', 'TokenReview forged']);

    clock.advance(METRICS_ACCESS_CACHE.allowTtlMs);
    await check('Bearer prom-token');
    expect(asked.slice(first + 3)).toEqual(['TokenReview prom-token', 'SubjectAccessReview system:serviceaccount:monitoring:prometheus get /metrics']);
  });

  it('answers 500 when a review cannot be made, and asks again next time (a failure is not cached)', async () => {
    const authn = setup({ authenticate: true });
    expect(await authn.check('Bearer prom-token')).toEqual({ allowed: false, code: 500, message: 'Authentication failed' });
    expect(await authn.check('Bearer prom-token')).toMatchObject({ code: 500 });
    expect(authn.asked).toEqual(['TokenReview prom-token', 'TokenReview prom-token']);

    const authz = setup({ authorize: true });
    expect(await authz.check('Bearer prom-token')).toEqual({
      allowed: false,
      code: 500,
      message: 'Authorization for user system:serviceaccount:monitoring:prometheus failed',
    });
    expect(await authz.check('Bearer prom-token')).toMatchObject({ code: 500 });
    expect(authz.asked.filter((a) => a.startsWith('SubjectAccessReview'))).toHaveLength(2);
  });

  it('keeps at most maxEntries answers, dropping the oldest, so random tokens cannot grow memory', async () => {
    const { check, asked } = setup(undefined, { ...METRICS_ACCESS_CACHE, maxEntries: 2 });
    await check('Bearer prom-token');
    await check('Bearer forged-1');
    await check('Bearer forged-2'); // drops prom-token's answer
    const before = asked.length;
    await check('Bearer forged-2');
    expect(asked.length).toBe(before);
    await check('Bearer prom-token');
    expect(asked.slice(before)).toEqual(['TokenReview prom-token']);
  });
});
