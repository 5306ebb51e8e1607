/**
 * Warnings about what clients send (malformed frames, failed logins' protocol errors) are one
 * concise line each, and at most `perInterval` of them per interval: a flood of bad clients cannot
 * fill the disk. What was held back is counted in one line when the next interval starts.
 */
import type { Logger } from 'pino';

export class WarningThrottle {
  private windowStart = 0;
  private written = 0;
  private suppressed = 0;

  constructor(private readonly logger: Logger, private readonly perInterval = 20, private readonly intervalMs = 10_000, private readonly now = Date.now) {}

  warn(fields: Record<string, unknown>, message: string): void {
    const now = this.now();
    if (now - this.windowStart >= this.intervalMs) {
      if (this.suppressed > 0) this.logger.warn({ suppressed: this.suppressed }, 'proxy: similar warnings were suppressed');
      this.windowStart = now;
      this.written = 0;
      this.suppressed = 0;
    }
    if (this.written >= this.perInterval) {
      this.suppressed++;
      return;
    }
    this.written++;
    this.logger.warn(fields, message);
  }
}
