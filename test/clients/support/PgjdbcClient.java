/*
 * pgjdbc through the pgveil proxy: writes the rows of ROWS (one customer a line, fields separated by
 * tabs, in COLUMNS order) as the app with a rewritten batch and server-prepared statements, then
 * reads them back as each role. Prints one JSON document. Settings come from the environment
 * (PROXY_PORT, DATABASE, <ROLE>_USER, <ROLE>_PASSWORD).
 */
import java.sql.Array;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;

public class PgjdbcClient {
  static final String[] COLUMNS = {"full_name", "email", "ssn", "phone", "card_number", "birth_date", "city", "ip_address", "external_id"};
  static final String INSERT = "INSERT INTO public.customers (" + String.join(", ", COLUMNS) + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?::inet, ?)";
  // Two rows a statement, two statements in one batch: the bulk update ORMs and hand-written JDBC send.
  static final String UPDATE_FROM_VALUES = "UPDATE public.customers AS c SET ssn = v.ssn, card_number = v.card_number"
      + " FROM (VALUES (?, ?, ?), (?, ?, ?)) AS v(id, ssn, card_number) WHERE c.id = v.id::bigint";
  static final String SELECT = "SELECT " + String.join(", ", COLUMNS) + " FROM public.customers WHERE id = ANY(?) ORDER BY id";

  static Connection connect(String role) throws SQLException {
    Properties props = new Properties();
    props.setProperty("user", System.getenv(role + "_USER"));
    props.setProperty("password", System.getenv(role + "_PASSWORD"));
    props.setProperty("sslmode", "disable");
    props.setProperty("reWriteBatchedInserts", "true");
    // Server-prepared (named) statements from the first execution.
    props.setProperty("prepareThreshold", "1");
    String url = "jdbc:postgresql://127.0.0.1:" + System.getenv("PROXY_PORT") + "/" + System.getenv("DATABASE");
    return DriverManager.getConnection(url, props);
  }

  static void bind(PreparedStatement statement, String[] row) throws SQLException {
    for (int i = 0; i < COLUMNS.length; i++) {
      String column = COLUMNS[i];
      if (column.equals("birth_date")) statement.setObject(i + 1, LocalDate.parse(row[i]));
      else if (column.equals("external_id")) statement.setObject(i + 1, UUID.fromString(row[i]));
      else statement.setString(i + 1, row[i]);
    }
  }

  static String json(Object value) {
    if (value == null) return "null";
    if (value instanceof Number) return value.toString();
    if (value instanceof Map) {
      List<String> parts = new ArrayList<>();
      for (Map.Entry<?, ?> entry : ((Map<?, ?>) value).entrySet()) parts.add(json(entry.getKey()) + ":" + json(entry.getValue()));
      return "{" + String.join(",", parts) + "}";
    }
    if (value instanceof List) {
      List<String> parts = new ArrayList<>();
      for (Object item : (List<?>) value) parts.add(json(item));
      return "[" + String.join(",", parts) + "]";
    }
    StringBuilder out = new StringBuilder("\"");
    for (char c : value.toString().toCharArray()) {
      if (c == '"' || c == '\\') out.append('\\').append(c);
      else if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
      else out.append(c);
    }
    return out.append('"').toString();
  }

  static List<Object> names(ResultSet result, String column) throws SQLException {
    List<Object> out = new ArrayList<>();
    try (result) {
      while (result.next()) out.add(result.getString(column));
    }
    return out;
  }

  interface Step { void run() throws SQLException; }

  static void attempt(Map<String, Object> steps, String name, Step step) {
    try {
      step.run();
      steps.put(name, "ok");
    } catch (SQLException error) {
      Map<String, Object> refusal = new LinkedHashMap<>();
      refusal.put("sqlstate", error.getSQLState());
      refusal.put("message", error.getMessage());
      steps.put(name, refusal);
    }
  }

  public static void main(String[] args) throws Exception {
    List<String[]> rows = new ArrayList<>();
    for (String line : System.getenv("ROWS").split("\n")) rows.add(line.split("\t", -1));
    Map<String, Object> steps = new LinkedHashMap<>();
    List<Long> ids = new ArrayList<>();
    try (Connection app = connect("APP")) {
      attempt(steps, "batch", () -> {
        try (PreparedStatement insert = app.prepareStatement(INSERT)) {
          for (String[] row : rows.subList(0, 4)) {
            bind(insert, row);
            insert.addBatch();
          }
          List<Object> counts = new ArrayList<>();
          for (int count : insert.executeBatch()) counts.add(count);
          // A rewritten batch reports SUCCESS_NO_INFO (-2) for each row.
          steps.put("batch_counts", counts);
        }
      });
      attempt(steps, "server_prepared", () -> {
        try (PreparedStatement insert = app.prepareStatement(INSERT)) {
          for (String[] row : rows.subList(4, rows.size())) {
            bind(insert, row);
            insert.executeUpdate();
          }
        }
      });
      try (PreparedStatement prepared = app.prepareStatement("SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE 'INSERT INTO public.customers%'");
          ResultSet result = prepared.executeQuery()) {
        result.next();
        steps.put("server_prepared_inserts", result.getLong(1));
      }
      String[] emails = rows.stream().map((row) -> row[1]).toArray(String[]::new);
      try (PreparedStatement select = app.prepareStatement("SELECT id FROM public.customers WHERE email = ANY(?) ORDER BY id")) {
        select.setArray(1, app.createArrayOf("text", emails));
        try (ResultSet result = select.executeQuery()) {
          while (result.next()) ids.add(result.getLong(1));
        }
      }
      // UPDATES: one "ssn<TAB>card_number" line for each of the first rows, in id order.
      List<String[]> updates = new ArrayList<>();
      for (String line : System.getenv("UPDATES").split("\n")) updates.add(line.split("\t", -1));
      attempt(steps, "batch_update_from_values", () -> {
        try (PreparedStatement update = app.prepareStatement(UPDATE_FROM_VALUES)) {
          for (int first = 0; first < updates.size(); first += 2) {
            for (int k = 0; k < 2; k++) {
              String[] values = updates.get(first + k);
              update.setString(k * 3 + 1, ids.get(first + k).toString());
              update.setString(k * 3 + 2, values[0]);
              update.setString(k * 3 + 3, values[1]);
            }
            update.addBatch();
          }
          List<Object> counts = new ArrayList<>();
          for (int count : update.executeBatch()) counts.add(count);
          steps.put("batch_update_counts", counts);
        }
      });
    }
    Map<String, Object> reads = new LinkedHashMap<>();
    for (String role : new String[] {"APP", "SUPPORT", "ANALYST"}) {
      try (Connection connection = connect(role); PreparedStatement select = connection.prepareStatement(SELECT)) {
        Array idArray = connection.createArrayOf("bigint", ids.toArray());
        List<Object> passes = new ArrayList<>();
        // Twice: the second execution runs the server-prepared statement (binary results where pgjdbc asks).
        for (int pass = 0; pass < 2; pass++) {
          select.setArray(1, idArray);
          List<Object> out = new ArrayList<>();
          try (ResultSet result = select.executeQuery()) {
            while (result.next()) {
              Map<String, Object> row = new LinkedHashMap<>();
              for (String column : COLUMNS) row.put(column, result.getString(column));
              out.add(row);
            }
          }
          passes.add(out);
        }
        reads.put(role.toLowerCase(), passes);
      }
    }
    // What a GUI client (DBeaver, DataGrip) does on connect and on opening a table, as the masked roles.
    Map<String, Object> browsed = new LinkedHashMap<>();
    for (String role : new String[] {"SUPPORT", "ANALYST"}) {
      attempt(steps, "browse_" + role.toLowerCase(), () -> {
        try (Connection connection = connect(role)) {
          DatabaseMetaData metadata = connection.getMetaData();
          Map<String, Object> seen = new LinkedHashMap<>();
          seen.put("tables", names(metadata.getTables(null, "public", "%", new String[] {"TABLE"}), "TABLE_NAME"));
          seen.put("columns", names(metadata.getColumns(null, "public", "customers", "%"), "COLUMN_NAME"));
          seen.put("primary_key", names(metadata.getPrimaryKeys(null, "public", "customers"), "COLUMN_NAME"));
          seen.put("indexes", names(metadata.getIndexInfo(null, "public", "customers", false, true), "INDEX_NAME").size());
          try (Statement statement = connection.createStatement()) {
            statement.setFetchSize(2);
            connection.setAutoCommit(false);
            try (ResultSet result = statement.executeQuery("SELECT * FROM public.customers ORDER BY id LIMIT 5")) {
              ResultSetMetaData columns = result.getMetaData();
              List<Object> labels = new ArrayList<>();
              for (int i = 1; i <= columns.getColumnCount(); i++) labels.add(columns.getColumnLabel(i));
              seen.put("result_columns", labels);
              List<Object> phones = new ArrayList<>();
              while (result.next()) phones.add(result.getString("phone"));
              seen.put("phones", phones);
            }
            connection.commit();
          }
          browsed.put(role.toLowerCase(), seen);
        }
      });
    }
    Map<String, Object> document = new LinkedHashMap<>();
    document.put("steps", steps);
    document.put("browsed", browsed);
    document.put("ids", ids);
    document.put("reads", reads);
    System.out.println(json(document));
  }
}
