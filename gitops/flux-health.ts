import { evaluate } from '@marcbachmann/cel-js';

/** kstatus statuses; Unknown is what Flux reports when an expression fails to evaluate. */
export type FluxStatus = 'Current' | 'InProgress' | 'Failed' | 'Unknown';

/** One entry of a Kustomization's `spec.healthCheckExprs`. */
export interface HealthCheckExpr {
  readonly apiVersion: string;
  readonly kind: string;
  readonly current: string;
  readonly inProgress?: string;
  readonly failed?: string;
}

type Obj = { metadata?: { generation?: unknown }; status?: { observedGeneration?: unknown } };

/**
 * Flux's status evaluation for a kind with health check expressions (RFC-0009, fluxcd/pkg runtime/cel): an object whose
 * status.observedGeneration exists and differs from metadata.generation is InProgress without evaluating anything;
 * otherwise inProgress, failed and current are evaluated in that order with the object's top-level fields as variables,
 * and the first that is true wins; none true is InProgress. An evaluation error (e.g. no `status` yet) is reported as
 * Unknown with the error, and Flux keeps polling until its timeout.
 */
export function fluxStatus(obj: Obj, exprs: HealthCheckExpr): { status: FluxStatus; error?: string } {
  const observed = obj.status?.observedGeneration;
  const generation = obj.metadata?.generation;
  if (typeof observed === 'number' && typeof generation === 'number' && observed !== generation) return { status: 'InProgress' };
  const steps: [string | undefined, FluxStatus][] = [
    [exprs.inProgress, 'InProgress'],
    [exprs.failed, 'Failed'],
    [exprs.current, 'Current'],
  ];
  for (const [expr, status] of steps) {
    if (!expr) continue;
    let result: unknown;
    try {
      result = evaluate(expr, obj);
    } catch (error) {
      return { status: 'Unknown', error: error instanceof Error ? error.message.split('\n')[0] : String(error) };
    }
    if (typeof result !== 'boolean') return { status: 'Unknown', error: `not a boolean: ${String(result)}` };
    if (result) return { status };
  }
  return { status: 'InProgress' };
}
