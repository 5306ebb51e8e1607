/** Reads the fields of an ErrorResponse or NoticeResponse body (handshake use only, never on the relay path). */
export function parseErrorFields(body: Buffer): Map<string, string> {
  const fields = new Map<string, string>();
  let offset = 0;
  while (offset < body.length && body[offset] !== 0) {
    const code = String.fromCharCode(body[offset] as number);
    const end = body.indexOf(0, offset + 1);
    if (end < 0) break;
    fields.set(code, body.toString('utf8', offset + 1, end));
    offset = end + 1;
  }
  return fields;
}
