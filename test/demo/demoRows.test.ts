import { describe, expect, it } from 'vitest';
import { DEMO_POLICIES_FILE } from '../../src/cli/demo/demoConfig.js';
import { DEMO_ROW_COUNT, generateDemoRows, type DemoCustomer } from '../../src/cli/demo/demoRows.js';
import { createEngine } from '../../src/engine/engine.js';
import { loadPolicyFile } from '../../src/policy/index.js';

const rows = generateDemoRows();

function luhnValid(digits: string): boolean {
  let sum = 0;
  [...digits].reverse().forEach((d, i) => {
    const n = Number(d) * (i % 2 === 1 ? 2 : 1);
    sum += n > 9 ? n - 9 : n;
  });
  return sum % 10 === 0;
}

describe('the demo rows', () => {
  it('are the same on every call (a fixed seed) and have unique e-mail addresses', () => {
    expect(rows).toHaveLength(DEMO_ROW_COUNT);
    expect(generateDemoRows()).toEqual(rows);
    expect(new Set(rows.map((r) => r.email)).size).toBe(rows.length);
  });

  it('are valid for their column types and kinds', () => {
    for (const row of rows) {
      expect(row.card_number).toMatch(/^\d{4} \d{4} \d{4} \d{4}$/);
      expect(luhnValid(row.card_number.replaceAll(' ', ''))).toBe(true);
      expect(row.ssn).toMatch(/^(?!000|666)\d{3}-(?!00)\d{2}-(?!0000)\d{4}$/);
      expect(new Date(`${row.birth_date}T00:00:00Z`).toISOString().slice(0, 10)).toBe(row.birth_date);
      expect(row.ip_address.split('.').map(Number).every((o) => Number.isInteger(o) && o >= 0 && o <= 255)).toBe(true);
      expect(row.external_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(row.email).toMatch(/^[a-z0-9.]+@[a-z0-9.]+\.[a-z]{2,}$/);
    }
  });

  it('come in several scripts', () => {
    const scripts = ['Latin', 'Cyrillic', 'Arabic', 'Devanagari', 'Han', 'Hangul'];
    for (const script of scripts) {
      expect(rows.some((r) => new RegExp(`\\p{Script=${script}}`, 'u').test(r.full_name)), script).toBe(true);
    }
  });

  it('are accepted by the engine under every demo policy, both to store and to show', async () => {
    const engine = createEngine({ masterKey: Buffer.alloc(32, 3) });
    const policies = await loadPolicyFile(DEMO_POLICIES_FILE);
    expect(policies.columns.map((c) => c.column).sort()).toEqual(Object.keys(rows[0] as DemoCustomer).sort());
    for (const policy of policies.columns) {
      const values = rows.map((r) => r[policy.column as keyof DemoCustomer]);
      const { result: stored } = await engine.protect(policy.kind, values, policy.engineOptions);
      expect(stored).toHaveLength(values.length);
      for (const view of ['mask', 'redact'] as const) {
        await expect(engine.protect(policy.kind, values, { method: view })).resolves.toBeDefined();
      }
    }
  });
});
