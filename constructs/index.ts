export * from './agent-admission.js';
export * from './agent-install.js';
export * from './agent-rbac.js';
export * from './deploy-region.js';
export * from './extended-deployment.js';
export * from './props.js';
export * from './render-error.js';
export * from './synth.js';
