/** pg_dump's set_config over pg_settings: a setting pinned by the WHERE is known, anything else is not. */
import { describe, expect, it } from 'vitest';
import { analyseOne, useSqlParser } from './sqlTestHelpers.js';

useSqlParser();

const PG_DUMP = "SELECT set_config(name, 'view, foreign-table', false) FROM pg_settings WHERE name = 'restrict_nonsystem_relation_kind'";
const roleSwitch = (sql: string): boolean => (analyseOne(sql).rules ?? []).some((finding) => finding.rule === 'role-switch');

describe('set_config of a setting pinned by WHERE name = …', () => {
  it("reads pg_dump's statement as setting restrict_nonsystem_relation_kind: no role switch, no session effect", () => {
    expect(roleSwitch(PG_DUMP)).toBe(false);
    expect(roleSwitch(PG_DUMP.replace('FROM pg_settings', 'FROM pg_catalog.pg_settings'))).toBe(false);
    expect(analyseOne(PG_DUMP).sessionEffects ?? []).toEqual([]);
  });

  it.each([
    ['the pinned setting is the role', PG_DUMP.replace("'restrict_nonsystem_relation_kind'", "'role'")],
    ['the pinned setting is session_authorization, in capitals', PG_DUMP.replace("'restrict_nonsystem_relation_kind'", "'SESSION_AUTHORIZATION'")],
    ['another column feeds set_config', PG_DUMP.replace('set_config(name,', 'set_config(setting,')],
    ['a qualified column feeds set_config', PG_DUMP.replace('set_config(name,', 'set_config(s.name,').replace('pg_settings', 'pg_settings s')],
    ['another table', PG_DUMP.replace('pg_settings', 'my_settings')],
    ['a second FROM item', PG_DUMP.replace('FROM pg_settings', 'FROM pg_settings, roles')],
    ['a looser WHERE', PG_DUMP.replace("name = 'restrict_nonsystem_relation_kind'", "name <> 'x'")],
    ['an OR in the WHERE', `${PG_DUMP} OR true`],
    ['no WHERE', PG_DUMP.replace(/ WHERE .*/, '')],
    ['a second target', PG_DUMP.replace('false)', "false), set_config(name, 'x', false)")],
  ])('still counts as a role switch when %s', (_, sql) => {
    expect(roleSwitch(sql)).toBe(true);
  });

  it('leaves search_path unknown when the pinned setting is search_path', () => {
    const effects = analyseOne(PG_DUMP.replace("'restrict_nonsystem_relation_kind'", "'search_path'")).sessionEffects ?? [];
    expect(effects).toEqual([{ kind: 'unknown' }]);
  });
});
