import { isDeepStrictEqual } from 'node:util';
import { Environment, type Optional } from '@marcbachmann/cel-js';
import type { AdmissionValidation, AdmissionVariable } from './agent-admission.js';

type Json = Record<string, unknown>;

/** The agent's username in the default install. */
export const AGENT = 'system:serviceaccount:extended-deployment-system:extended-deployment-agent';

/** What an evaluation reads of a ValidatingAdmissionPolicy spec. */
export interface EvaluatedPolicy {
  readonly matchConditions?: readonly AdmissionVariable[];
  readonly variables: readonly AdmissionVariable[];
  readonly validations: readonly AdmissionValidation[];
}

/**
 * A ValidatingAdmissionPolicy evaluated as the API server does, with cel-js: the match conditions decide whether it
 * applies; variables are evaluated when first read (a rule that never reads `object` works on DELETE, where it is
 * null); every validation that is false denies with its message, and one that fails to evaluate denies too
 * (`failurePolicy: Fail`). cel-js lacks cel-go's equality of optionals (`a.?x == b.?x`), added here with cel-go's
 * meaning: both absent, or both present and equal. `params` is the param object of a policy with a paramKind.
 * test/e2e/admission.e2e.test.ts and adoption.e2e.test.ts run the same rules on an API server.
 */
export function admit(
  policy: EvaluatedPolicy,
  request: { operation: string; namespace?: string; subResource?: string; username?: string; dryRun?: boolean },
  object: Json | null,
  oldObject: Json | null,
  params?: Json,
): string[] {
  const env = new Environment({ unlistedVariablesAreDyn: true, enableOptionalTypes: true, homogeneousAggregateLiterals: false });
  env.registerOperator(
    'optional<dyn> == optional<dyn>',
    (a: Optional<unknown>, b: Optional<unknown>) => a.hasValue() === b.hasValue() && (!a.hasValue() || isDeepStrictEqual(a.value(), b.value())),
  );
  const req = {
    operation: request.operation,
    namespace: request.namespace ?? 'shop',
    subResource: request.subResource ?? '',
    dryRun: request.dryRun ?? false,
    userInfo: { username: request.username ?? AGENT },
  };
  const variables: Json = {};
  const context = { request: req, object, oldObject, variables, params: params ?? null };
  for (const v of policy.variables) {
    let value: unknown;
    Object.defineProperty(variables, v.name, { enumerable: true, get: () => (value ??= env.evaluate(v.expression, context)) });
  }
  if (!(policy.matchConditions ?? []).every((c) => env.evaluate(c.expression, context) === true)) return ['(not matched)'];
  return policy.validations.flatMap((v) => {
    try {
      return env.evaluate(v.expression, context) === true ? [] : [v.message];
    } catch (error) {
      return [`${v.message} (error: ${(error as Error).message})`];
    }
  });
}
