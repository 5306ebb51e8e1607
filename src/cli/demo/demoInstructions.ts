/**
 * What `pgveil demo` prints once everything is up: copy-paste curl and psql lines built from the
 * actual ports. Each command sits on its own line indented by two spaces (comments start with #),
 * so the whole block can be pasted into a shell, and tests can run exactly what a user reads.
 */
import { isAbsolute, relative } from 'node:path';
import { DEMO_ACCOUNTS, DEMO_API_KEY, DEMO_APP_EMAIL, DEMO_DB_NAME, DEMO_DB_USER, DEMO_HOST, DEMO_PASSWORD, DEMO_READY_LINE, type DemoPorts } from './demoSettings.js';

export const DEMO_QUERY = 'SELECT full_name, email, ssn, card_number, birth_date FROM customers ORDER BY id LIMIT 5';

export interface DemoState {
  apiUrl: string;
  ports: DemoPorts;
  dataDir: string;
  /** Whether this start created the cluster (else it reused it). */
  created: boolean;
  rows: number;
  inserted: number;
  policiesFile: string;
}

export function psqlLine(port: number, user: string): string {
  return `PGPASSWORD=${DEMO_PASSWORD} psql "host=${DEMO_HOST} port=${port} user=${user} dbname=${DEMO_DB_NAME}" -c "${DEMO_QUERY}"`;
}

function shown(path: string): string {
  const fromHere = relative(process.cwd(), path);
  return fromHere !== '' && !fromHere.startsWith('..') && !isAbsolute(fromHere) ? fromHere : path;
}

function apiLines(apiUrl: string): string[] {
  const auth = `-H 'Content-Type: application/json' -H 'x-api-key: ${DEMO_API_KEY}' -H "Authorization: Bearer $JWT" -H "svc-token: $SVC"`;
  return [
    'Try the protection API (log in and keep the two tokens, then protect):',
    `  TOKENS=$(curl -s -X POST ${apiUrl}/auth/login -H 'Content-Type: application/json' -d '{"email":"${DEMO_APP_EMAIL}","password":"${DEMO_PASSWORD}"}')`,
    `  JWT=$(echo "$TOKENS" | sed -E 's/.*"jwt_token":"([^"]+)".*/\\1/'); SVC=$(echo "$TOKENS" | sed -E 's/.*"svc_token":"([^"]+)".*/\\1/')`,
    `  curl -s -X POST ${apiUrl}/api/ccn ${auth} -d '{"id":1,"operation":"protect","data":["4111 1111 1111 1111"],"options":{"method":"fpe","scope":"payments"}}'; echo`,
    `  curl -s -X POST ${apiUrl}/api/name ${auth} -d '{"id":2,"operation":"protect","data":["Jane Doe","Ольга Петрова"],"options":{"scope":"customers"}}'; echo`,
    `  curl -s -X POST ${apiUrl}/api/ssn ${auth} -d '{"id":3,"operation":"protect","data":["123-45-6789"],"options":{"method":"mask"}}'; echo`,
    `  curl -s ${apiUrl}/openapi.json | head -c 300; echo`,
  ];
}

function psqlLines(ports: DemoPorts): string[] {
  return [
    `Query through the proxy (${DEMO_HOST}:${ports.proxy}) as each role: the same rows, three views:`,
    ...DEMO_ACCOUNTS.flatMap(({ email, roles, sees }) => [
      `  # ${email} (role ${roles.join(', ')}): ${sees}`,
      `  ${psqlLine(ports.proxy, email)}`,
    ]),
    `See what PostgreSQL stores (straight to ${DEMO_HOST}:${ports.database}, no proxy): tokens and fpe values, no plaintext`,
    '(phone and city are passthrough columns in the policies: stored as they are, masked or redacted on read).',
    `  ${psqlLine(ports.database, DEMO_DB_USER)}`,
  ];
}

export function demoInstructions(state: DemoState): string {
  const { ports } = state;
  const database = `${state.created ? 'created' : 'reused'} in ${shown(state.dataDir)}`;
  const rows = state.inserted > 0
    ? `${state.inserted} demo rows written through the proxy`
    : `${state.rows} rows (kept from an earlier start)`;
  return [
    `Embedded PostgreSQL on ${DEMO_HOST}:${ports.database} (${database}); table public.customers: ${rows}.`,
    `Column policies: ${shown(state.policiesFile)}`,
    '',
    ...apiLines(state.apiUrl),
    '',
    ...psqlLines(ports),
    '',
    `Accounts: ${DEMO_ACCOUNTS.map((a) => a.email).join(', ')}; password ${DEMO_PASSWORD}, API key ${DEMO_API_KEY}` +
      ` (demo secrets; \`pgveil serve\` has no default account). PostgreSQL superuser: ${DEMO_DB_USER} / ${DEMO_PASSWORD}.`,
    'Press Ctrl-C to stop.',
    '',
    `${DEMO_READY_LINE}: API on ${state.apiUrl}, proxy on ${DEMO_HOST}:${ports.proxy}, PostgreSQL on ${DEMO_HOST}:${ports.database}`,
  ].join('\n');
}
