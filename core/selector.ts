import type { LabelSelector } from './api/common.js';

/** True when the selector selects nothing in particular (no labels and no expressions): Kubernetes rejects it. */
export function isEmptySelector(selector: LabelSelector): boolean {
  return Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0;
}

/** Whether `labels` satisfy every requirement of `selector`, with Kubernetes' semantics. */
export function selectorMatches(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) if (labels[key] !== value) return false;
  for (const req of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, req.key);
    const value = labels[req.key];
    const values = req.values ?? [];
    switch (req.operator) {
      case 'In':
        if (!has || !values.includes(value ?? '')) return false;
        break;
      case 'NotIn':
        if (has && values.includes(value ?? '')) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
    }
  }
  return true;
}

/** The selector in the string form `kubectl get -l` and the scale subresource use. */
export function selectorString(selector: LabelSelector): string {
  const parts = Object.keys(selector.matchLabels ?? {})
    .sort()
    .map((k) => `${k}=${selector.matchLabels?.[k]}`);
  for (const req of selector.matchExpressions ?? []) {
    const values = [...(req.values ?? [])].sort().join(',');
    if (req.operator === 'In') parts.push(`${req.key} in (${values})`);
    else if (req.operator === 'NotIn') parts.push(`${req.key} notin (${values})`);
    else if (req.operator === 'Exists') parts.push(req.key);
    else parts.push(`!${req.key}`);
  }
  return parts.join(',');
}
