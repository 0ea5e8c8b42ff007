import type { RenderedExtendedDeployment } from './render.js';

/** Whether two renders are of the same ExtendedDeployment (by namespace, as rendered, and name): how plan and diff pair a change's sides. */
export const sameObject = (a: RenderedExtendedDeployment, b: RenderedExtendedDeployment): boolean =>
  a.ref.namespace === b.ref.namespace && a.ref.name === b.ref.name;
