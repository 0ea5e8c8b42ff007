import type { IConstruct } from 'constructs';
import type { Cluster } from '../core/api/cluster.js';

/**
 * The validated object of each Cluster construct, which the ExtendedDeployments naming it check their split with. Kept
 * here rather than on the construct so that the constructs' published declarations stay free of zod's (see props.ts).
 */
export const parsedClusters = new WeakMap<IConstruct, Cluster>();
