export * from './cluster.js';
export * from './common.js';
export * from './deploy-region.js';
export * from './extended-deployment.js';
export * from './fleet.js';
export * from './identity.js';
export * from './traffic.js';
