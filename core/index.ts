export * from './api/index.js';
export * from './crd.js';
export * from './distribution.js';
export * from './labels.js';
export * from './plan.js';
export * from './problems.js';
export * from './render.js';
export * from './revision.js';
