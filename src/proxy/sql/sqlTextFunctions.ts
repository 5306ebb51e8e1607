/**
 * Built-ins that run SQL given as text (or read a cursor by name, or reach another database):
 * what they read or write is not in the statement's tree. One list for the statement rules (code
 * by another name, which needs the `code` privilege) and the masked-column guard (an opaque read).
 */
export const SQL_TEXT_FUNCTIONS: ReadonlySet<string> = new Set([
  'query_to_xml', 'query_to_xmlschema', 'query_to_xml_and_xmlschema', 'cursor_to_xml', 'cursor_to_xmlschema',
  'table_to_xml', 'table_to_xmlschema', 'table_to_xml_and_xmlschema', 'schema_to_xml', 'schema_to_xmlschema',
  'schema_to_xml_and_xmlschema', 'database_to_xml', 'database_to_xmlschema', 'database_to_xml_and_xmlschema',
  // ts_stat('SELECT tsvector …') and ts_rewrite(query, 'SELECT target, substitute …') run their text.
  'ts_stat', 'ts_rewrite',
  'dblink', 'dblink_exec', 'dblink_open', 'dblink_fetch', 'dblink_send_query', 'dblink_get_result', 'dblink_connect',
  'dblink_connect_u',
]);
