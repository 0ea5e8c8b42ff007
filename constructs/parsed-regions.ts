import type { IConstruct } from 'constructs';
import type { DeployRegion } from '../core/api/deploy-region.js';

/**
 * The validated object of each DeployRegion construct, which the ExtendedDeployments naming it place with. Kept here
 * rather than on the construct so that the constructs' published declarations stay free of zod's (see props.ts).
 */
export const parsedRegions = new WeakMap<IConstruct, DeployRegion>();
