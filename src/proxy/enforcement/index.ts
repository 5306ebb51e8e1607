/** Column policies on the wire: the proxy's write path, read path and refusals as session hooks. */
export { createPolicyHooks, type PolicyHooks, type PolicyHooksOptions } from './policyHooks.js';
export type { PolicyMetrics } from './policyMetrics.js';
export { upstreamCatalogLoader, type CatalogLoader } from './catalog/upstreamCatalogReader.js';
