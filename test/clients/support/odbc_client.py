"""pyodbc with psqlODBC (the driver BI tools use) through the pgveil proxy: writes the rows of ROWS
as the app, then reads them back as each role with cursors (UseDeclareFetch) and with server-side
prepares, calls the catalog functions, and recovers from an error inside a transaction. Prints one
JSON document. Connection parts come from the environment (PROXY_HOST, PROXY_PORT, DATABASE,
<ROLE>_USER, <ROLE>_PASSWORD); a failing step prints its error instead."""
import contextlib
import datetime
import glob
import json
import os
import uuid

import pyodbc

# A uuid column reads as uuid.UUID (lower-case text, as PostgreSQL prints it), not upper-case GUID text.
pyodbc.native_uuid = True

COLUMNS = ["full_name", "email", "ssn", "phone", "card_number", "birth_date", "city", "ip_address", "external_id"]
INSERT = f"INSERT INTO public.customers ({', '.join(COLUMNS)}) VALUES ({', '.join(['?'] * len(COLUMNS))})"
# ODBC binds no arrays: the ids go as one text parameter cast in SQL.
SELECT = f"SELECT {', '.join(COLUMNS)} FROM public.customers WHERE id = ANY(?::bigint[]) ORDER BY id"
# Debian registers the driver under this name in /etc/odbcinst.ini; its library's path is the fallback.
DRIVER_NAME = "PostgreSQL Unicode"
DRIVER_PATHS = "/usr/lib/*/odbc/psqlodbcw.so"
# How a BI tool's DSN reads a large table: cursors of Fetch rows in a transaction; and prepares.
READ_MODES = {
    # ConnSettings: the "initial SQL" a BI tool's DSN runs after psqlODBC's own SETs at connect.
    "declare_fetch": {"UseDeclareFetch": "1", "Fetch": "2", "ConnSettings": "SET search_path TO public"},
    "server_prepare": {"UseServerSidePrepare": "1"},
}


def braced(value):
    """ODBC connection-string quoting where a value needs it: in braces, a closing brace doubled.
    psqlODBC keeps the braces of a UID that did not need them, so a plain value goes bare."""
    if not any(c in value for c in ";{}=") and value.strip() == value:
        return value
    return "{" + value.replace("}", "}}") + "}"


def connection_string(role, extra=None):
    driver = DRIVER_NAME if DRIVER_NAME in pyodbc.drivers() else sorted(glob.glob(DRIVER_PATHS))[0]
    attributes = {
        "Driver": "{" + driver + "}",
        "Server": os.environ["PROXY_HOST"],
        "Port": os.environ["PROXY_PORT"],
        "Database": braced(os.environ["DATABASE"]),
        "UID": braced(os.environ[f"{role.upper()}_USER"]),
        "PWD": braced(os.environ[f"{role.upper()}_PASSWORD"]),
        "SSLmode": "disable",
        # Debian's odbcinst.ini turns CommLog on: its /tmp log would hold the statements' values
        # (the driver-wide setting still logs each disconnect there, a pointer only).
        "CommLog": "0",
        "Debug": "0",
        # Statement-level rollback: psqlODBC wraps each statement of a transaction in a SAVEPOINT.
        "Protocol": "7.4-2",
        **(extra or {}),
    }
    return ";".join(f"{key}={value}" for key, value in attributes.items())


@contextlib.contextmanager
def connect(role, extra=None):
    """A connection closed on leaving (pyodbc's own context manager only commits)."""
    conn = pyodbc.connect(connection_string(role, extra), autocommit=False, timeout=10)
    try:
        yield conn
    finally:
        conn.close()


def typed(row):
    """The Python types an application holds: dates and uuids, not strings (inet has no ODBC type)."""
    values = dict(row)
    values["birth_date"] = datetime.date.fromisoformat(row["birth_date"])
    values["external_id"] = uuid.UUID(row["external_id"])
    return tuple(values[c] for c in COLUMNS)


def failure(error):
    """The SQLSTATE pyodbc reports first, and the driver's message without values of ours."""
    return {"sqlstate": error.args[0] if error.args else None, "message": str(error.args[-1]).splitlines()[0]}


def attempt(steps, name, action):
    try:
        result = action()
        steps[name] = "ok"
        return result
    except pyodbc.Error as error:
        steps[name] = failure(error)
        return None


def plain(value):
    return None if value is None else str(value)


# What shows the read took the path its mode names: an open cursor, or a prepared statement.
SESSION_CHECKS = {
    "declare_fetch": "SELECT count(*) FROM pg_catalog.pg_cursors",
    "server_prepare": "SELECT count(*) FROM pg_catalog.pg_prepared_statements",
}


def read(conn, mode, ids, checks):
    cursor = conn.cursor()
    cursor.execute(SELECT, "{" + ",".join(str(i) for i in ids) + "}")
    first = cursor.fetchone()
    # Between two fetches, so a DECLAREd cursor is still open.
    check = conn.cursor()
    checks[mode] = check.execute(SESSION_CHECKS[mode]).fetchone()[0] > 0
    check.close()
    rows = [dict(zip(COLUMNS, (plain(v) for v in r))) for r in [first, *cursor.fetchall()] if r is not None]
    cursor.close()
    conn.commit()
    return rows


def catalog(conn):
    """SQLTables and SQLColumns, the calls a BI tool's table picker makes."""
    cursor = conn.cursor()
    tables = [f"{t.table_schem}.{t.table_name}" for t in cursor.tables()]
    columns = [(c.column_name, c.type_name) for c in cursor.columns(table="customers")]
    cursor.close()
    conn.commit()
    return {"tables": tables, "columns": [{"name": n, "type": t} for n, t in columns]}


def error_mid_transaction(conn, role, rows):
    """A failing statement between two good ones of one transaction: psqlODBC rolls back to its
    savepoint, the transaction goes on and commits the rest."""
    cursor = conn.cursor()
    outcome = {}
    if role == "app":
        cursor.execute(INSERT, typed(rows[0]))
    else:
        cursor.execute("SELECT count(*) FROM public.customers")
        cursor.fetchall()
    try:
        cursor.execute("SELECT 1 / (SELECT count(*) - count(*) FROM public.customers)")
        cursor.fetchall()
        outcome["failed"] = None
    except pyodbc.Error as error:
        outcome["failed"] = failure(error)
    if role == "app":
        cursor.execute(INSERT, typed(rows[1]))
    cursor.execute("SELECT count(*) FROM public.customers")
    outcome["after"] = cursor.fetchone()[0] > 0
    conn.commit()
    cursor.close()
    return outcome


def main():
    rows = json.loads(os.environ["ROWS"])
    steps = {}
    recovery = {}
    with connect("app") as app:
        cursor = app.cursor()

        def insert_many():
            cursor.executemany(INSERT, [typed(r) for r in rows[0:4]])
            app.commit()
        attempt(steps, "executemany", insert_many)
        recovery["app"] = attempt(steps, "error_mid_transaction_app", lambda: error_mid_transaction(app, "app", rows[4:6]))
        emails = "{" + ",".join(json.dumps(r["email"]) for r in rows) + "}"
        cursor.execute("SELECT id FROM public.customers WHERE email = ANY(?::text[]) ORDER BY id", emails)
        ids = [int(r[0]) for r in cursor.fetchall()]
        app.commit()
    reads = {}
    catalogs = {}
    checks = {}
    for role in ("app", "support", "analyst"):
        for mode, extra in READ_MODES.items():
            with connect(role, extra) as conn:
                paths = checks.setdefault(role, {})
                reads.setdefault(role, {})[mode] = attempt(steps, f"read_{mode}_{role}", lambda: read(conn, mode, ids, paths)) or []
        if role != "app":
            with connect(role) as conn:
                catalogs[role] = attempt(steps, f"catalog_{role}", lambda: catalog(conn))
                recovery[role] = attempt(steps, f"error_mid_transaction_{role}", lambda: error_mid_transaction(conn, role, rows))
    print(json.dumps({"steps": steps, "ids": ids, "reads": reads, "checks": checks, "catalogs": catalogs, "recovery": recovery}))


main()
