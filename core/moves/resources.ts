import type { Container, PodSpec, ResourceList } from '../kube/objects.js';
import { parseQuantity } from './quantity.js';

/** Amounts per resource name (`cpu` in cores, `memory` in bytes, `pods`, `nvidia.com/gpu`, …), in base units. */
export type Resources = Readonly<Record<string, number>>;

/** The resource every pod uses one of, whatever it requests: a node's pod slots. */
export const PODS = 'pods';

/** What scheduling reads of a container. */
type ContainerResources = Pick<Container, 'resources' | 'restartPolicy'>;

/** What scheduling reads of a pod spec (or a pod template's). */
export type PodResourcesSpec = Pick<PodSpec, 'overhead'> & {
  readonly containers?: readonly ContainerResources[];
  readonly initContainers?: readonly ContainerResources[];
};

function quantities(list: Readonly<ResourceList> | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, value] of Object.entries(list ?? {})) {
    const amount = parseQuantity(value);
    if (amount !== undefined && amount > 0) out[name] = amount;
  }
  return out;
}

/**
 * A container's requests. The API server copies limits into requests a container leaves unset, so a template (which
 * was never defaulted) is read the same way a pod is.
 */
function containerRequests(container: ContainerResources): Record<string, number> {
  return { ...quantities(container.resources?.limits), ...quantities(container.resources?.requests) };
}

function add(into: Record<string, number>, amounts: Resources): void {
  for (const [name, amount] of Object.entries(amounts)) into[name] = (into[name] ?? 0) + amount;
}

/**
 * What the scheduler reserves for a pod: per resource, the larger of the regular containers' sum (with sidecars, the
 * init containers that keep running) and the largest one-off init container, plus the pod's overhead.
 */
export function podRequests(spec: PodResourcesSpec | undefined): Resources {
  const regular: Record<string, number> = {};
  for (const container of spec?.containers ?? []) add(regular, containerRequests(container));
  let sidecars: Record<string, number> = {};
  const total: Record<string, number> = { ...regular };
  for (const init of spec?.initContainers ?? []) {
    const requests = containerRequests(init);
    if (init.restartPolicy === 'Always') {
      sidecars = { ...sidecars };
      add(sidecars, requests);
      add(total, requests);
      continue;
    }
    // A one-off init container runs beside the sidecars started before it.
    const during: Record<string, number> = { ...sidecars };
    add(during, requests);
    for (const [name, amount] of Object.entries(during)) total[name] = Math.max(total[name] ?? 0, amount);
  }
  add(total, quantities(spec?.overhead));
  return total;
}

/** Sums several pods' requests. */
export function sumResources(list: readonly Resources[]): Resources {
  const total: Record<string, number> = {};
  for (const amounts of list) add(total, amounts);
  return total;
}

/**
 * How many more pods requesting `request` fit into `allocatable` with `used` already taken: the tightest resource
 * decides, and every pod takes one of the node's pod slots. A resource the pod requests but the node does not offer
 * (a GPU on a CPU node) fits none.
 */
export function podsThatFit(allocatable: Resources, used: Resources, request: Resources): number {
  let fit = Number.POSITIVE_INFINITY;
  const needs: Record<string, number> = { ...request, [PODS]: 1 };
  for (const [name, amount] of Object.entries(needs)) {
    if (amount <= 0) continue;
    const free = (allocatable[name] ?? 0) - (used[name] ?? 0);
    // A hair of tolerance: 0.1 + 0.2 cores of requests must leave exactly 0.7 of a core free, not 0.6999….
    fit = Math.min(fit, Math.max(0, Math.floor(free / amount + 1e-9)));
  }
  return fit;
}
