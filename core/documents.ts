import type { FieldPath } from './problems.js';

/** A Kubernetes object found in a document: the document itself, or an item of a List at `path` (`items[2]`). */
export interface DocumentObject {
  readonly object: Record<string, unknown>;
  /** Empty for the document itself. */
  readonly path: FieldPath;
}

/** Something in a document that is no Kubernetes object, at `path` inside it. */
export interface DocumentProblem {
  readonly path: FieldPath;
  readonly message: string;
}

/** What a document holds. */
export interface DocumentContents {
  readonly objects: readonly DocumentObject[];
  readonly problems: readonly DocumentProblem[];
}

/**
 * The objects of one YAML or JSON document, as kubectl reads them: a List (kind `List`, or `<Kind>List` with an `items`
 * list, as `kubectl get -o yaml` writes them) stands for its items, Lists in it for theirs; an empty document holds
 * nothing; anything else must be an object with a kind. A List is never an object of its own: its items are checked,
 * rendered and applied one by one, and it has no name to give it.
 */
export function documentObjects(value: unknown): DocumentContents {
  const objects: DocumentObject[] = [];
  const problems: DocumentProblem[] = [];
  // Lists nest no deeper than the YAML parser nests what it reads, which it does by recursion too.
  const visit = (next: unknown, path: FieldPath) => {
    if (next === null || typeof next !== 'object' || Array.isArray(next) || typeof (next as { kind?: unknown }).kind !== 'string') {
      problems.push({ path, message: 'not a Kubernetes object (no kind)' });
      return;
    }
    const object = next as Record<string, unknown>;
    const items = object['items'];
    const kind = object['kind'] as string;
    if (kind !== 'List' && !(kind.endsWith('List') && Array.isArray(items))) objects.push({ object, path });
    else if (Array.isArray(items)) items.forEach((item: unknown, i) => visit(item, [...path, 'items', i]));
    else if (items !== null && items !== undefined) problems.push({ path: [...path, 'items'], message: 'must be a list of objects' });
  };
  if (value !== null && value !== undefined) visit(value, []);
  return { objects, problems };
}
