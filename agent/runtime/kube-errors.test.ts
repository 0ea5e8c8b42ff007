import { describe, expect, it } from 'vitest';
import { apiError, isConflict, isInvalid, isNotFound, isUnreachable, retryAfterMs } from './kube-errors.js';

const apiException = (code: number, body: unknown) => Object.assign(new Error(`HTTP-Code: ${code}\nMessage: Unknown API Status Code!`), { code, body });

describe('apiError', () => {
  it('reads client-node ApiExceptions whose body is Status JSON text or an object', () => {
    expect(apiError(apiException(404, '{"kind":"Status","reason":"NotFound","message":"pods \\"x\\" not found","code":404}'))).toEqual({
      code: 404,
      reason: 'NotFound',
      message: 'pods "x" not found',
    });
    expect(apiError(apiException(409, { reason: 'Conflict', message: 'the object has been modified' }))).toEqual({
      code: 409,
      reason: 'Conflict',
      message: 'the object has been modified',
    });
  });

  it('falls back to the body text or the first line of the message', () => {
    expect(apiError(apiException(500, 'upstream down')).message).toBe('upstream down');
    expect(apiError(apiException(500, undefined)).message).toBe('HTTP-Code: 500');
    expect(apiError(Object.assign(new Error('Gone'), { statusCode: 410 }))).toEqual({ code: 410, reason: undefined, message: 'Gone' });
    expect(apiError('text').message).toBe('text');
  });

  it('classifies', () => {
    expect(isNotFound(apiException(404, ''))).toBe(true);
    expect(isConflict(apiException(409, ''))).toBe(true);
    expect(isInvalid(apiException(422, ''))).toBe(true);
    expect(isNotFound(apiException(422, ''))).toBe(false);
  });
});

describe('retryAfterMs', () => {
  const withHeaders = (code: number, headers: Record<string, string>) => Object.assign(apiException(code, ''), { headers });
  it('reads Retry-After seconds of a 429 or 503 (client-node keeps response headers on the ApiException)', () => {
    expect(retryAfterMs(withHeaders(429, { 'retry-after': '2' }))).toBe(2000);
    expect(retryAfterMs(withHeaders(503, { 'retry-after': '1' }))).toBe(1000);
  });
  it('is undefined without a usable header, or for other codes', () => {
    expect(retryAfterMs(withHeaders(429, {}))).toBeUndefined();
    expect(retryAfterMs(withHeaders(429, { 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' }))).toBeUndefined();
    expect(retryAfterMs(withHeaders(500, { 'retry-after': '2' }))).toBeUndefined();
    expect(retryAfterMs(new Error('socket hang up'))).toBeUndefined();
  });
});

describe('isUnreachable', () => {
  it('recognizes network failures, also wrapped', () => {
    expect(isUnreachable(Object.assign(new Error('connect ECONNREFUSED'), { name: 'FetchError', type: 'system', code: 'ECONNREFUSED' }))).toBe(true);
    expect(isUnreachable(Object.assign(new Error('fetch failed'), { cause: Object.assign(new Error('x'), { code: 'ENOTFOUND' }) }))).toBe(true);
    expect(isUnreachable(apiException(503, ''))).toBe(false);
    expect(isUnreachable(undefined)).toBe(false);
  });
});
