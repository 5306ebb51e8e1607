/**
 * PostgreSQL quotes stored values in some errors: a unique or foreign-key violation's DETAIL
 * (`Key (phone)=(…) already exists`), a not-null or check violation's DETAIL (`Failing row contains
 * (…)`, every column of the row), a data exception's message (`invalid input syntax for type
 * integer: "…"`, from a cast in a WHERE clause the masked-column guard lets through). RowDescription
 * names no column there for the read path to mask, so for a session whose roles lack plaintext
 * somewhere the DETAIL of every server error, and the message of integrity violations (class 23)
 * and data exceptions (class 22), are withheld; the SQLSTATE, severity, position and the rest stay.
 */
import { FrameWriter } from '../../protocol/frameWriter.js';

const WITHHELD_DETAIL = 'pgveil withheld the detail of this error: it may quote a stored value';

/** The fields of an ErrorResponse body, in order (code byte, value). */
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

/** The ErrorResponse `frame` with what may quote a stored value withheld (undefined: nothing to withhold). */
export function withholdErrorValues(frame: Buffer): Buffer | undefined {
  const fields = fieldsOf(frame);
  const code = fields.find(([field]) => field === 0x43 /* C */)?.[1] ?? '';
  const quotesValues = code.startsWith('22') || code.startsWith('23');
  let changed = false;
  const kept: [number, string][] = [];
  for (const [field, value] of fields) {
    if (field === 0x44 /* D */) {
      changed = true;
      kept.push([field, WITHHELD_DETAIL]);
    } else if (field === 0x4d /* M */ && quotesValues) {
      changed = true;
      kept.push([field, `pgveil withheld the server's message for SQLSTATE ${code}: it may quote a stored value`]);
    } else {
      kept.push([field, value]);
    }
  }
  if (!changed) return undefined;
  const writer = new FrameWriter('E', frame.length + 128);
  for (const [field, value] of kept) writer.byte(field).cString(value);
  return writer.byte(0).finish();
}
