/** A reason to end a session with a FATAL ErrorResponse, as PostgreSQL would, before closing. */
import type { ErrorFields } from '../protocol/messages.js';

export class SessionFatal extends Error {
  override readonly name = 'SessionFatal';
  readonly fields: ErrorFields;

  constructor(code: string, message: string, extra: { detail?: string; hint?: string } = {}) {
    super(message);
    this.fields = { severity: 'FATAL', code, message, ...extra };
  }
}
