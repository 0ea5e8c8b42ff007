/**
 * prom-client's modules the agent loads one by one instead of its index, which also loads Summary (with tdigest),
 * Pushgateway (node:zlib) and the cluster aggregator (node:cluster): 0.7 MB of heap the agent never uses. prom-client
 * has no exports map, so its files are reachable; each exports what the index names, typed by the index's types.
 */
declare module 'prom-client/lib/registry.js' {
  export { Registry as default } from 'prom-client';
}
declare module 'prom-client/lib/counter.js' {
  export { Counter as default } from 'prom-client';
}
declare module 'prom-client/lib/gauge.js' {
  export { Gauge as default } from 'prom-client';
}
declare module 'prom-client/lib/histogram.js' {
  export { Histogram as default } from 'prom-client';
}
declare module 'prom-client/lib/defaultMetrics.js' {
  export { collectDefaultMetrics as default } from 'prom-client';
}
