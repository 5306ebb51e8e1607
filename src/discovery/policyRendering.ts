/**
 * The suggestions as a commented policy file a DBA reviews before use. Comments carry the
 * evidence as counts and shares; no sampled value is ever written. The file is valid as it is
 * (`pgveil policy check` accepts it): names are quoted where YAML or PostgreSQL need it.
 */
import { MAX_SCOPE_BYTES, type Kind } from '../engine/index.js';
import { formatColumnName, formatTableName } from '../policy/index.js';
import { percent, SUGGEST_THRESHOLD } from './columnScoring.js';
import type { DiscoveredColumn, DiscoveryReport } from './discoveryTypes.js';
import { chooseMethod } from './suggestedMethod.js';

export interface RenderOptions {
  /** The role that gets plaintext (the application); none: no role does. */
  readonly appRole?: string;
  /** Where the sample came from (`host:port/db as user`), for the header. */
  readonly source: string;
}

const EVIDENCE: Readonly<Record<Kind, string>> = {
  email: 'are email addresses',
  uuid: 'are uuids',
  ipv4: 'are IPv4 addresses',
  date: 'are real dates',
  ccn: 'are valid card numbers (Luhn)',
  ssn: 'are social security numbers in issued ranges',
  phone: 'are phone numbers',
  latlng: 'are coordinates',
  price: 'are amounts',
  numeric: 'are numbers',
  name: 'are shaped like names',
  city: 'are shaped like place names',
  address: 'are shaped like addresses',
  text: 'are text',
};

const PLAIN_SCALAR = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const YAML_WORDS = /^(?:true|false|null|yes|no|on|off|y|n|~)$/i;

/** A YAML scalar that reads back as `text`: bare when safe, else double-quoted (JSON escapes are YAML's). */
function yamlScalar(text: string): string {
  return PLAIN_SCALAR.test(text) && !YAML_WORDS.test(text) ? text : JSON.stringify(text);
}

/** A name inside a comment: control characters escaped, so a name cannot end the comment line. */
function commentSafe(text: string): string {
  return text.replace(/\p{Cc}/gu, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The table's name, cut to the scope limit on a character boundary. */
function scopeOf(table: string): string {
  let scope = table;
  while (Buffer.byteLength(scope) > MAX_SCOPE_BYTES) scope = [...scope].slice(0, -1).join('');
  return scope;
}

function evidence(c: DiscoveredColumn): string {
  const { score } = c;
  const kind = score.kind ?? 'text';
  const hints = score.hints.length > 0 ? `; name hint: ${score.hints.join(', ')}` : '';
  return `${percent(score.score)} of ${score.sampleSize} sampled values ${EVIDENCE[kind]}${hints}`;
}

function revealOf(method: string, appRole: string | undefined): string {
  const entries = [
    ...(appRole === undefined ? [] : [`${yamlScalar(appRole)}: plaintext`]),
    // passthrough stores plaintext: everyone else must get the mask, not the stored value.
    ...(method === 'passthrough' ? ['"*": mask'] : []),
  ];
  return entries.length === 0 ? '{}' : `{ ${entries.join(', ')} }`;
}

function suggestionLines(c: DiscoveredColumn, appRole: string | undefined): string[] {
  const kind = c.score.kind;
  if (kind === undefined) return [];
  const choice = chooseMethod(kind, c.type);
  const key = formatColumnName({ schema: c.schema, table: c.table, column: c.column });
  return [
    `  # ${commentSafe(evidence(c))}`,
    `  # ${c.type.display}: ${commentSafe(choice.because)}`,
    `  ${yamlScalar(key)}:`,
    `    kind: ${kind}`,
    `    method: ${choice.method}`,
    ...(choice.method === 'passthrough' ? [] : [`    scope: ${yamlScalar(scopeOf(c.table))}`]),
    `    reveal: ${revealOf(choice.method, appRole)}`,
  ];
}

function lookedAtLine(c: DiscoveredColumn): string {
  const name = formatColumnName({ schema: c.schema, table: c.table, column: c.column });
  const { score } = c;
  const best = score.kind === undefined || score.sampleSize === 0
    ? `${score.sampleSize} sampled values`
    : `best ${score.kind} ${percent(score.score)} of ${score.sampleSize} sampled values${score.hints.length > 0 ? ` (name hint: ${score.hints.join(', ')})` : ''}`;
  return `#   ${commentSafe(`${name} (${c.type.display}): ${best}; ${score.reason ?? 'not suggested'}`)}`;
}

export function renderPolicyFile(report: DiscoveryReport, options: RenderOptions): string {
  const suggested = report.columns.filter((c) => c.score.suggested);
  const rest = report.columns.filter((c) => !c.score.suggested);
  const reveal = options.appRole === undefined
    ? 'no role sees plaintext (every role gets the stored value); add the application\'s role, e.g. reveal: { app: plaintext }'
    : `only ${options.appRole} sees plaintext; every other role gets the stored value`;
  const lines = [
    `# Column policies suggested by \`pgveil policy suggest\` for schema ${commentSafe(report.schema)}`,
    `# from up to ${report.sampleLimit} sampled rows per table of ${commentSafe(options.source)}.`,
    '#',
    '# Review every entry before use: the evidence is a sample. A column is suggested when at least',
    `# ${percent(SUGGEST_THRESHOLD)} of its sampled non-null values are valid for a kind (dates, uuids, names, cities,`,
    '# addresses and numbers also need a hint in the column\'s name). Scope: one per table.',
    `# Reveal: ${reveal}.`,
    '# Check it with: pgveil policy check --config <config> --policies <this file>',
    '',
  ];
  let table = '';
  const body: string[] = [];
  for (const c of suggested) {
    const current = formatTableName(c.schema, c.table);
    if (current !== table) {
      body.push('', `  # ${commentSafe(current)}`);
      table = current;
    }
    body.push(...suggestionLines(c, options.appRole));
  }
  lines.push(suggested.length === 0 ? 'columns: {}' : 'columns:', ...body);
  if (rest.length > 0) lines.push('', '# Looked at, not suggested:', ...rest.map(lookedAtLine));
  if (report.unsampled.length > 0) {
    lines.push('', '# Not sampled:', ...report.unsampled.map((t) => `#   ${commentSafe(`${formatTableName(t.schema, t.table)}: ${t.reason}`)}`));
  }
  return `${lines.join('\n')}\n`;
}
