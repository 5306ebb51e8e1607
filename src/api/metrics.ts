/**
 * A minimal Prometheus text exposition (format 0.0.4): labelled counters and one histogram.
 * Written here rather than pulled in as a dependency: the API needs three series.
 */

type Labels = Readonly<Record<string, string>>;

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function labelText(labels: Labels, extra?: [string, string]): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  if (extra) parts.push(`${extra[0]}="${escapeLabel(extra[1])}"`);
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
}

function keyOf(labels: Labels): string {
  return JSON.stringify(Object.entries(labels));
}

/** Label values must come from a closed set (routes, kinds, methods); never from raw input. */
export class Counter {
  private readonly series = new Map<string, { labels: Labels; value: number }>();

  constructor(readonly name: string, readonly help: string) {}

  inc(labels: Labels, by = 1): void {
    const key = keyOf(labels);
    const s = this.series.get(key);
    if (s) s.value += by;
    else this.series.set(key, { labels, value: by });
  }

  get(labels: Labels): number {
    return this.series.get(keyOf(labels))?.value ?? 0;
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const s of this.series.values()) lines.push(`${this.name}${labelText(s.labels)} ${s.value}`);
    return lines.join('\n');
  }
}

export class Histogram {
  private readonly series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();

  constructor(readonly name: string, readonly help: string, readonly buckets: readonly number[]) {}

  observe(labels: Labels, value: number): void {
    const key = keyOf(labels);
    let s = this.series.get(key);
    if (!s) {
      s = { labels, counts: new Array<number>(this.buckets.length).fill(0), sum: 0, count: 0 };
      this.series.set(key, s);
    }
    // Counts are per bucket here; render() makes them cumulative as Prometheus expects.
    const i = this.buckets.findIndex((b) => value <= b);
    if (i >= 0) s.counts[i] = (s.counts[i] ?? 0) + 1;
    s.sum += value;
    s.count++;
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const s of this.series.values()) {
      let cumulative = 0;
      this.buckets.forEach((b, i) => {
        cumulative += s.counts[i] ?? 0;
        lines.push(`${this.name}_bucket${labelText(s.labels, ['le', String(b)])} ${cumulative}`);
      });
      lines.push(`${this.name}_bucket${labelText(s.labels, ['le', '+Inf'])} ${s.count}`);
      lines.push(`${this.name}_sum${labelText(s.labels)} ${s.sum}`);
      lines.push(`${this.name}_count${labelText(s.labels)} ${s.count}`);
    }
    return lines.join('\n');
  }
}

/** The API's series. */
export class ApiMetrics {
  readonly requests = new Counter('pgveil_http_requests_total', 'HTTP requests by route, method and status code.');
  readonly values = new Counter('pgveil_protection_values_total', 'Values protected or unprotected, by kind, method and operation.');
  readonly latency = new Histogram('pgveil_http_request_duration_seconds', 'HTTP request latency by route.',
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]);

  /** The audit log's event counts, when it keeps them. */
  auditCounts: ReadonlyMap<string, number> | undefined;

  render(): string {
    const parts = [this.requests.render(), this.values.render(), this.latency.render()];
    if (this.auditCounts !== undefined) {
      const audit = new Counter('pgveil_audit_events_total', 'Audit events recorded, by event (unprotects, reveals, refusals, logins).');
      for (const [event, count] of this.auditCounts) audit.inc({ event }, count);
      parts.push(audit.render());
    }
    return `${parts.join('\n')}\n`;
  }
}

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
