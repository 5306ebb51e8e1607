/** The catalog queries of a snapshot reading (catalogSnapshot.ts builds the snapshot from their rows). */

/** The user relations pgveil may see named, by oid. */
export const RELATIONS_SQL = `
SELECT c.oid::int8 AS oid, n.nspname AS schema_name, c.relname AS table_name, c.relkind::text AS relkind
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
   AND n.nspname NOT IN ('pg_catalog', 'information_schema')
   AND n.nspname NOT LIKE 'pg\\_toast%'`;

/**
 * The live columns of those relations, a relation's after each other. The relation's names are
 * not repeated on each of its columns (RELATIONS_SQL has them): a catalog of 200 000 columns is
 * that many rows for the driver to parse, and three fields fewer per row is a third less work.
 */
export const COLUMNS_SQL = `
SELECT c.oid::int8 AS oid, a.attnum AS attnum, a.attname AS column_name,
       COALESCE(NULLIF(t.typbasetype, 0), a.atttypid)::int8 AS type_oid,
       CASE WHEN t.typbasetype <> 0 AND a.atttypmod < 0 THEN t.typtypmod ELSE a.atttypmod END AS typmod,
       a.attgenerated::text AS generated
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
  JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
  JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
 WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
   AND n.nspname NOT IN ('pg_catalog', 'information_schema')
   AND n.nspname NOT LIKE 'pg\\_toast%'
 ORDER BY c.oid, a.attnum`;

export const INHERITS_SQL = 'SELECT inhrelid::int8 AS child, inhparent::int8 AS parent FROM pg_catalog.pg_inherits ORDER BY inhseqno';

export const VIEW_RULES_SQL = `
SELECT r.ev_class::int8 AS view_oid, r.ev_action::text AS action
  FROM pg_catalog.pg_rewrite r
  JOIN pg_catalog.pg_class c ON c.oid = r.ev_class
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE r.rulename = '_RETURN' AND c.relkind IN ('v', 'm')
   AND n.nspname NOT IN ('pg_catalog', 'information_schema')`;

/** The columns (objsubid 0: the whole relation) each view's rule depends on. */
export const VIEW_DEPENDENCIES_SQL = `
SELECT r.ev_class::int8 AS view_oid, d.refobjid::int8 AS ref_oid, d.refobjsubid::int AS ref_attnum
  FROM pg_catalog.pg_depend d
  JOIN pg_catalog.pg_rewrite r ON d.classid = 'pg_catalog.pg_rewrite'::regclass AND d.objid = r.oid
  JOIN pg_catalog.pg_class c ON c.oid = r.ev_class
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE d.refclassid = 'pg_catalog.pg_class'::regclass AND d.refobjid <> r.ev_class
   AND r.rulename = '_RETURN' AND c.relkind IN ('v', 'm')
   AND n.nspname NOT IN ('pg_catalog', 'information_schema')`;

/** Who reads, and the search_path its sessions start with (pg_settings: its source too). */
export const SESSION_DEFAULTS_SQL = `
SELECT current_user::text AS name, s.setting AS search_path, s.source AS search_path_source
  FROM pg_catalog.pg_settings s WHERE s.name = 'search_path'`;

export const SYSTEM_RELATIONS_SQL = `
SELECT n.nspname AS schema_name, c.relname AS table_name
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname IN ('pg_catalog', 'information_schema') AND c.relkind IN ('r', 'v', 'm', 'p', 'f')`;

export const SCHEMAS_WITHOUT_USAGE_SQL = `
SELECT nspname AS schema_name FROM pg_catalog.pg_namespace WHERE NOT has_schema_privilege(oid, 'USAGE')`;
