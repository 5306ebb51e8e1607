/**
 * PostgreSQL quotes stored values in the errors and notices it raises while it computes over them:
 * a unique or foreign-key violation's DETAIL (`Key (phone)=(…) already exists`), a not-null or
 * check violation's DETAIL (`Failing row contains (…)`, every column of the row), a data
 * exception's message (`invalid input syntax for type integer: "…"`), a name looked up from a
 * value (`relation "…" does not exist` from `quote_ident(phone)::regclass`, `unrecognized
 * configuration parameter "…"` from `current_setting(phone)`, class 42 or 3F), a text parsed from
 * it (`syntax error in tsquery: "…"`), the CONTEXT line of a JSON error (`JSON data, line 1: …`), a
 * warning about a number computed from it (`PID … is not a PostgreSQL backend process`, from a
 * WHERE clause the masked-column guard lets through). RowDescription names no column there for the
 * read path to mask, so for a session whose roles lack plaintext somewhere the DETAIL of every
 * error and notice is withheld, and so are its message, hint, context and internal query unless
 * they can quote only the client's own text or no value at all:
 * - the server raised it while analysing the statement's text (it carries a position into it:
 *   names and constants the client wrote; nothing stored has been read yet), or
 * - its class says nothing about values: connection (08), transaction state (25), rollback (40),
 *   resources (53), operator intervention (57); or it is about an object that exists
 *   (insufficient privilege 42501, wrong object type 42809: `permission denied for table …`,
 *   `cannot copy to view …`), whose name a value matches only as a predicate's answer would tell;
 *   or about a portal or prepared statement the client named in its own messages (26000, 34000,
 *   42P03, 42P05);
 * and, either way, it was not raised inside code the server ran for the statement (no CONTEXT):
 * a function's RAISE chooses its SQLSTATE and its message.
 * Integrity violations (23) and data exceptions (22) lose their message even with a position.
 * The SQLSTATE, severity, position and the rest stay.
 */
import { FrameWriter } from '../../protocol/frameWriter.js';

/** Who gets the whole text: the rule's setting. */
const WHO_SEES_IT = 'sessions whose roles see every protected column in plaintext get it whole';
const WITHHELD_DETAIL = `pgveil withheld the detail of this error: it may quote a stored value (${WHO_SEES_IT})`;

/** Classes whose messages name no value (their texts are fixed or name server objects only). */
const VALUE_FREE_CLASSES = new Set(['08', '25', '40', '53', '57']);
/**
 * SQLSTATEs about objects that exist (a value names one only as a predicate's answer would tell),
 * or about statement and portal names, which come from the client's own messages.
 */
const NAMED_OBJECT_CODES = new Set(['42501', '42809', '26000', '34000', '42P03', '42P05']);
/** Classes whose messages quote the values they are about, even while the statement is analysed. */
const VALUE_CLASSES = new Set(['22', '23']);

const CODE = 0x43; // C
const DETAIL = 0x44; // D
const MESSAGE = 0x4d; // M
const POSITION = 0x50; // P
const CONTEXT = 0x57; // W
/** Fields withheld with the message: HINT, CONTEXT (W) and the internal query (q) of code it ran. */
const WITH_MESSAGE = new Set([0x48 /* H */, CONTEXT, 0x71 /* q */]);

/** The fields of an ErrorResponse or NoticeResponse body, in order (code byte, value). */
function fieldsOf(frame: Buffer): [number, string][] {
  const fields: [number, string][] = [];
  let offset = 5;
  while (offset < frame.length && frame[offset] !== 0) {
    const code = frame[offset] as number;
    const end = frame.indexOf(0, offset + 1);
    if (end < 0) break;
    fields.push([code, frame.toString('utf8', offset + 1, end)]);
    offset = end + 1;
  }
  return fields;
}

/** A CONTEXT line COPY adds, naming the table and the line only (`COPY customers, line 3`). */
const COPY_LINE = /^COPY [^\n]*, line \d+$/;

/**
 * Whether a CONTEXT says the server ran code for the statement (a function, a trigger: any line
 * but COPY's own) or quotes what COPY read (`COPY t, line 3, column phone: "…"`).
 */
function contextMayQuoteValues(context: string): boolean {
  return context.split('\n').some((line) => !COPY_LINE.test(line));
}

/**
 * Whether the message (and its hint, context, internal query) may quote a stored value. Raised in
 * code the server ran for the statement (a function, a trigger: it carries a CONTEXT), an error or
 * notice may have any SQLSTATE and any message (`RAISE … USING ERRCODE = '42501'`), so neither the
 * SQLSTATE nor a position vouches for it there.
 */
function messageMayQuoteValues(code: string, fields: readonly [number, string][]): boolean {
  const sqlClass = code.slice(0, 2);
  if (VALUE_CLASSES.has(sqlClass) || fields.some(([field, value]) => field === CONTEXT && contextMayQuoteValues(value))) return true;
  if (VALUE_FREE_CLASSES.has(sqlClass) || NAMED_OBJECT_CODES.has(code)) return false;
  return !fields.some(([field]) => field === POSITION);
}

/**
 * The ErrorResponse or NoticeResponse `frame` with what may quote a stored value withheld
 * (undefined: nothing to withhold).
 */
export function withholdErrorValues(frame: Buffer): Buffer | undefined {
  const fields = fieldsOf(frame);
  const code = fields.find(([field]) => field === CODE)?.[1] ?? '';
  const quotesValues = messageMayQuoteValues(code, fields);
  const what = frame[0] === 0x4e /* N */ ? 'notice' : 'error';
  let changed = false;
  const kept: [number, string][] = [];
  for (const [field, value] of fields) {
    if (field === DETAIL) {
      changed = true;
      kept.push([field, WITHHELD_DETAIL.replace('error', what)]);
    } else if (field === MESSAGE && quotesValues) {
      changed = true;
      kept.push([field, `pgveil withheld the server's message for SQLSTATE ${code}: it may quote a stored value (${WHO_SEES_IT})`]);
    } else if (WITH_MESSAGE.has(field) && quotesValues) {
      changed = true;
    } else {
      kept.push([field, value]);
    }
  }
  if (!changed) return undefined;
  const writer = new FrameWriter(what === 'notice' ? 'N' : 'E', frame.length + 128);
  for (const [field, value] of kept) writer.byte(field).cString(value);
  return writer.byte(0).finish();
}
