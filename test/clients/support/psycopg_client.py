"""psycopg 3 through the pgveil proxy: writes the rows of ROWS as the app, then reads them back as
each role, with text and binary cursors. Prints one JSON document. Connection strings come from the
environment (APP_DSN, SUPPORT_DSN, ANALYST_DSN); a failing step prints its error instead."""
import datetime
import ipaddress
import json
import os
import uuid

import psycopg

COLUMNS = ["full_name", "email", "ssn", "phone", "card_number", "birth_date", "city", "ip_address", "external_id"]
INSERT = f"INSERT INTO public.customers ({', '.join(COLUMNS)}) VALUES ({', '.join(['%s'] * len(COLUMNS))})"
INSERT_TEXT = f"INSERT INTO public.customers ({', '.join(COLUMNS)}) VALUES ({', '.join(['%t'] * len(COLUMNS))})"
INSERT_BINARY = f"INSERT INTO public.customers ({', '.join(COLUMNS)}) VALUES ({', '.join(['%b'] * len(COLUMNS))})"
# The bulk insert SQLAlchemy and psycopg users write: one array parameter a column, unnest in SQL.
ARRAY_TYPES = ["text", "text", "text", "text", "text", "date", "text", "inet", "uuid"]
INSERT_UNNEST = (
    f"INSERT INTO public.customers ({', '.join(COLUMNS)}) "
    f"SELECT * FROM unnest({', '.join(f'%s::{t}[]' for t in ARRAY_TYPES)})"
)
SELECT = f"SELECT {', '.join(COLUMNS)} FROM public.customers WHERE id = ANY(%s) ORDER BY id"


def typed(row):
    """The Python types an application holds: dates, addresses and uuids, not strings."""
    values = dict(row)
    values["birth_date"] = datetime.date.fromisoformat(row["birth_date"])
    values["ip_address"] = ipaddress.ip_address(row["ip_address"])
    values["external_id"] = uuid.UUID(row["external_id"])
    return tuple(values[c] for c in COLUMNS)


def attempt(steps, name, action):
    try:
        action()
        steps[name] = "ok"
    except psycopg.Error as error:
        steps[name] = {"sqlstate": error.sqlstate, "message": str(error).splitlines()[0]}


def main():
    rows = json.loads(os.environ["ROWS"])
    steps = {}
    with psycopg.connect(os.environ["APP_DSN"], autocommit=True) as app:
        # executemany: psycopg pipelines the prepared INSERT (libpq pipeline mode).
        attempt(steps, "executemany", lambda: app.cursor().executemany(INSERT, [typed(r) for r in rows[0:2]]))

        def copy_in():
            with app.cursor().copy(f"COPY public.customers ({', '.join(COLUMNS)}) FROM STDIN") as copy:
                for row in rows[2:4]:
                    # psycopg writes a uuid.UUID as 32 hex digits without hyphens, which PostgreSQL
                    # and pgveil read as the same uuid.
                    copy.write_row(typed(row))
        attempt(steps, "copy_from_stdin_text", copy_in)
        attempt(steps, "execute_binary_parameters", lambda: app.execute(INSERT_BINARY, typed(rows[4])))
        # Server-side prepared statement: prepare=True names it on the first execution.
        attempt(steps, "execute_prepared", lambda: app.execute(INSERT, typed(rows[5]), prepare=True))

        def insert_unnest():
            typed_rows = [typed(r) for r in rows[6:8]]
            app.execute(INSERT_UNNEST, [list(column) for column in zip(*typed_rows)])
        attempt(steps, "insert_select_unnest", insert_unnest)
        # Text parameters: psycopg writes the uuid.UUID as 32 hex digits, the date and address as text.
        attempt(steps, "execute_text_parameters", lambda: app.execute(INSERT_TEXT, typed(rows[8])))

        def copy_in_binary():
            with app.cursor().copy(f"COPY public.customers ({', '.join(COLUMNS)}) FROM STDIN (FORMAT BINARY)") as copy:
                copy.set_types(["text", "text", "text", "text", "text", "date", "text", "inet", "uuid"])
                for row in rows[9:11]:
                    copy.write_row(typed(row))
        attempt(steps, "copy_from_stdin_binary", copy_in_binary)
        emails = [r["email"] for r in rows]
        ids = [r[0] for r in app.execute("SELECT id FROM public.customers WHERE email = ANY(%s) ORDER BY id", [emails]).fetchall()]
    reads = {}
    for role in ("app", "support", "analyst"):
        with psycopg.connect(os.environ[f"{role.upper()}_DSN"], autocommit=True) as conn:
            text = conn.execute(SELECT, [ids]).fetchall()
            binary = conn.cursor(binary=True).execute(SELECT, [ids]).fetchall()
            reads[role] = {
                "text": [dict(zip(COLUMNS, r)) for r in text],
                "binary": [dict(zip(COLUMNS, r)) for r in binary],
            }
    print(json.dumps({"steps": steps, "ids": ids, "reads": reads}, default=str))


main()
