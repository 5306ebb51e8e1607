/**
 * PII discovery: which columns of a schema hold values of a protection kind, from a bounded
 * sample read with the engine's own parsers, written as a policy file to review.
 */
export { hintsFor, nameWords } from './columnNameHints.js';
export { percent, scoreColumn, SUGGEST_THRESHOLD, type ColumnScore } from './columnScoring.js';
export { ColumnTally } from './columnTally.js';
export type { DiscoveredColumn, DiscoveryReport, UnsampledTable } from './discoveryTypes.js';
export { toJsonReport, type JsonColumnReport, type JsonDiscoveryReport } from './jsonReport.js';
export { DISCOVERED_KINDS, kindsForFamily, looksLikeProperName, recognises } from './kindRecognisers.js';
export { renderPolicyFile, type RenderOptions } from './policyRendering.js';
export { sampleSchema, type SampleOptions, type SampleQuery } from './schemaSampler.js';
export { chooseMethod, type MethodChoice } from './suggestedMethod.js';
