/** Which missed names certainly denote PostgreSQL's own relations (no catalog refresh for them). */
import { describe, expect, it } from 'vitest';
import type { CatalogSnapshot } from '../../../src/proxy/enforcement/catalog/catalogSnapshot.js';
import type { PathScope } from '../../../src/proxy/enforcement/catalog/searchPathResolution.js';
import { namesSystemRelation } from '../../../src/proxy/enforcement/catalog/systemRelations.js';

const snapshot = {
  systemRelations: new Map([['pg_catalog', new Set(['pg_class', 'pg_settings'])], ['information_schema', new Set(['columns'])]]),
} as unknown as CatalogSnapshot;
const implicit: PathScope = { entries: [{ kind: 'temp' }, { kind: 'schema', name: 'public' }], privilegesKnown: true };
const listedFirst: PathScope = { entries: [{ kind: 'temp' }, { kind: 'schema', name: 'pg_catalog' }, { kind: 'schema', name: 'public' }], privilegesKnown: true };
const listedLater: PathScope = { entries: [{ kind: 'temp' }, { kind: 'schema', name: 'public' }, { kind: 'schema', name: 'pg_catalog' }], privilegesKnown: true };
const unknown: PathScope = { entries: undefined, privilegesKnown: false };

describe('namesSystemRelation', () => {
  it('takes a system relation qualified with its own schema', () => {
    expect(namesSystemRelation('pg_catalog\u0000pg_class', snapshot, unknown)).toBe(true);
    expect(namesSystemRelation('information_schema\u0000columns', snapshot, unknown)).toBe(true);
  });

  it('takes no other schema, and no name the server did not list', () => {
    expect(namesSystemRelation('public\u0000pg_class', snapshot, implicit)).toBe(false);
    expect(namesSystemRelation('pg_catalog\u0000customers', snapshot, implicit)).toBe(false);
    expect(namesSystemRelation('information_schema\u0000pg_class', snapshot, implicit)).toBe(false);
    expect(namesSystemRelation('\u0000customers', snapshot, implicit)).toBe(false);
  });

  it('takes an unqualified name only where pg_catalog is searched before every other schema', () => {
    expect(namesSystemRelation('\u0000pg_settings', snapshot, implicit)).toBe(true);
    expect(namesSystemRelation('\u0000pg_settings', snapshot, listedFirst)).toBe(true);
    expect(namesSystemRelation('\u0000pg_settings', snapshot, listedLater)).toBe(false);
    expect(namesSystemRelation('\u0000pg_settings', snapshot, unknown)).toBe(false);
    expect(namesSystemRelation('\u0000columns', snapshot, implicit)).toBe(false);
  });

  it('takes nothing from a snapshot read without the list', () => {
    expect(namesSystemRelation('pg_catalog\u0000pg_class', {} as CatalogSnapshot, implicit)).toBe(false);
  });
});
