import * as z from 'zod';

/**
 * The namespace of a namespaced object that names none, as kubectl assumes it (client-go's NamespaceDefault).
 * Rendered manifests always carry it explicitly: GitOps tools apply without kubectl's fallback and reject a
 * namespaced object without a namespace (Flux, Argo CD without destination.namespace).
 */
export const DEFAULT_NAMESPACE = 'default';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
// Kubernetes label keys: optional DNS-subdomain prefix, then a name of up to 63 characters.
const LABEL_KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** An RFC 1123 DNS label: what Kubernetes requires of names that become label values and pod name parts. */
export const dnsLabel = z
  .string()
  .max(63, { message: 'must be at most 63 characters' })
  .regex(DNS_LABEL, { message: 'must be a DNS label: lower-case letters, digits and "-", starting and ending with a letter or digit' });

/** A map of Kubernetes labels, keys and values checked as the API server checks them. */
export const labelMap = z.record(
  z.string().regex(LABEL_KEY, { message: 'is not a valid label key' }),
  z.string().max(63, { message: 'label values are at most 63 characters' }).regex(LABEL_VALUE, { message: 'is not a valid label value' }),
);

/** Free-form string map (annotations, node selectors built from labels). */
export const stringMap = z.record(z.string(), z.string());

/**
 * The largest Kubernetes int32 (replicas, seconds, int-or-string counts): the API server rejects anything larger, so a
 * spec that passes here must not fail there.
 */
export const INT32_MAX = 2_147_483_647;

const PERCENT = /^(\d+)%$/;

/** Parses `"N%"` into N, or returns undefined when the string is not of that form. */
export function parsePercent(value: string): number | undefined {
  const match = PERCENT.exec(value);
  return match ? Number(match[1]) : undefined;
}

/**
 * An integer or a percentage string `"N%"` with N an integer from 0 to 100.
 * Rendered in the CRD as `x-kubernetes-int-or-string` with a CEL rule for the percentage.
 */
export const intOrPercent = z
  .union([z.number(), z.string()], { error: 'must be an integer or a percentage like "30%"' })
  .superRefine((value, ctx) => {
    if (typeof value === 'number') {
      if (!Number.isInteger(value)) ctx.addIssue({ code: 'custom', message: `${value} is neither an integer nor a percentage like "30%"` });
      else if (value < 0) ctx.addIssue({ code: 'custom', message: 'must not be negative' });
      else if (value > INT32_MAX) ctx.addIssue({ code: 'custom', message: `must be at most ${INT32_MAX}` });
      return;
    }
    const pct = parsePercent(value);
    if (pct === undefined) {
      ctx.addIssue({ code: 'custom', message: `${JSON.stringify(value)} is neither an integer nor a percentage like "30%"` });
    } else if (pct > 100) {
      ctx.addIssue({ code: 'custom', message: `${JSON.stringify(value)} exceeds 100%` });
    }
  })
  .meta({
    'x-kubernetes-int-or-string': true,
    // Bounds the CEL cost estimate: the API server rejects a matches() over strings of unknown length.
    maxLength: 4,
    'x-kubernetes-validations': [
      {
        rule: `type(self) == int ? self >= 0 && self <= ${INT32_MAX} : self.matches('^(100|[1-9]?[0-9])%$')`,
        messageExpression: `string(self) + ' must be an integer from 0 to ${INT32_MAX} or a percentage from 0% to 100%'`,
      },
    ],
  });

/** An integer or percentage value as written by the user. */
export type IntOrPercent = number | string;

/** A Kubernetes toleration (core/v1). */
export const toleration = z.strictObject({
  key: z.string().optional().describe('Taint key the toleration applies to; empty with operator Exists matches every key.'),
  operator: z.enum(['Exists', 'Equal']).optional().describe('Exists or Equal (default Equal).'),
  value: z.string().optional().describe('Taint value to match with operator Equal.'),
  effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional().describe('Taint effect to match; empty matches all effects.'),
  tolerationSeconds: z.number().int().optional().describe('How long a NoExecute taint is tolerated before eviction.'),
});
/** A Kubernetes toleration. */
export type Toleration = z.infer<typeof toleration>;

/**
 * A requirement on node labels, as node affinity and label selectors write it (Gt and Lt left out: a region is a set
 * of labels, not a range). In and NotIn need values; Exists and DoesNotExist take none, as the API server requires.
 */
export const nodeRequirement = z
  .strictObject({
    key: z.string().regex(LABEL_KEY, { message: 'is not a valid label key' }).describe('Node label key.'),
    operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']).describe('In and NotIn compare the value with values; Exists and DoesNotExist the key alone.'),
    values: z
      .array(z.string().max(63, { message: 'label values are at most 63 characters' }).regex(LABEL_VALUE, { message: 'is not a valid label value' }))
      .optional()
      .describe('The values of In and NotIn.'),
  })
  .superRefine((r, ctx) => {
    const needsValues = r.operator === 'In' || r.operator === 'NotIn';
    const count = r.values?.length ?? 0;
    if (needsValues && count === 0) ctx.addIssue({ code: 'custom', path: ['values'], message: `must name at least one value for ${r.operator}` });
    if (!needsValues && count > 0) ctx.addIssue({ code: 'custom', path: ['values'], message: `must be empty for ${r.operator}` });
  });

/** A Kubernetes label selector (meta/v1). */
export const labelSelector = z.strictObject({
  matchLabels: labelMap.optional().describe('Labels a pod must carry, all of them.'),
  matchExpressions: z
    .array(
      z.strictObject({
        key: z.string().describe('Label key.'),
        operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']).describe('Set operator.'),
        values: z.array(z.string()).optional().describe('Values for In and NotIn.'),
      }),
    )
    .optional()
    .describe('Set-based requirements, all of them.'),
});
/** A Kubernetes label selector. */
export type LabelSelector = z.infer<typeof labelSelector>;

/** Standard object metadata, as much of it as rendering uses; other fields pass through. */
export const objectMeta = z.looseObject({
  name: z.string().optional(),
  namespace: z.string().optional(),
  labels: labelMap.optional(),
  annotations: stringMap.optional(),
});

/** A condition in the shape every Kubernetes API uses. */
export const condition = z.object({
  type: z.string().describe('Condition type, e.g. Progressing.'),
  status: z.enum(['True', 'False', 'Unknown']).describe('True, False or Unknown.'),
  reason: z.string().optional().describe('One CamelCase word for machines.'),
  message: z.string().optional().describe('A sentence for people.'),
  lastTransitionTime: z.string().optional().describe('When the status last changed (RFC 3339).'),
  observedGeneration: z.number().int().optional().describe('The generation the condition was computed from.'),
});
