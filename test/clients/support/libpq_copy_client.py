"""libpq itself (through ctypes, from Debian's libpq5) through the pgveil proxy: COPY FROM STDIN
sent by PQexecParams, the extended protocol, where libpq sends Sync right after Execute, before
the server answers. Writes the rows of ROWS as the app, then tries a COPY that fails before it
opens and two whose data fails (pgveil refusing a protected value, PostgreSQL a plain one), checking the connection answers after each. Prints one JSON
document: each step's outcome."""
import ctypes
import ctypes.util
import json
import os

libpq = ctypes.CDLL(ctypes.util.find_library("pq") or "libpq.so.5")
libpq.PQconnectdb.restype = ctypes.c_void_p
libpq.PQconnectdb.argtypes = [ctypes.c_char_p]
libpq.PQstatus.argtypes = [ctypes.c_void_p]
libpq.PQerrorMessage.restype = ctypes.c_char_p
libpq.PQerrorMessage.argtypes = [ctypes.c_void_p]
libpq.PQexecParams.restype = ctypes.c_void_p
libpq.PQexecParams.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
libpq.PQresultStatus.argtypes = [ctypes.c_void_p]
libpq.PQresultErrorField.restype = ctypes.c_char_p
libpq.PQresultErrorField.argtypes = [ctypes.c_void_p, ctypes.c_int]
libpq.PQcmdTuples.restype = ctypes.c_char_p
libpq.PQcmdTuples.argtypes = [ctypes.c_void_p]
libpq.PQgetvalue.restype = ctypes.c_char_p
libpq.PQgetvalue.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
libpq.PQclear.argtypes = [ctypes.c_void_p]
libpq.PQputCopyData.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
libpq.PQputCopyEnd.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
libpq.PQgetResult.restype = ctypes.c_void_p
libpq.PQgetResult.argtypes = [ctypes.c_void_p]
libpq.PQfinish.argtypes = [ctypes.c_void_p]

COMMAND_OK, TUPLES_OK, COPY_IN, FATAL_ERROR = 1, 2, 4, 7
SQLSTATE = ord("C")
COLUMNS = ["full_name", "email", "ssn", "phone", "card_number", "birth_date", "city", "ip_address", "external_id"]


def copy_text(value):
    if value is None:
        return "\\N"
    return value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def outcome(result):
    """'ok' with the row count, or the error's SQLSTATE."""
    status = libpq.PQresultStatus(result)
    if status in (COMMAND_OK, TUPLES_OK):
        return {"status": "ok", "rows": libpq.PQcmdTuples(result).decode()}
    state = libpq.PQresultErrorField(result, SQLSTATE)
    return {"status": "error", "sqlstate": state.decode() if state else None}


def drain(conn):
    """The results after the COPY's data: its own, then none."""
    outcomes = []
    while True:
        result = libpq.PQgetResult(conn)
        if not result:
            return outcomes
        outcomes.append(outcome(result))
        libpq.PQclear(result)


def copy_in(conn, sql, lines):
    result = libpq.PQexecParams(conn, sql.encode(), 0, None, None, None, None, 0)
    status = libpq.PQresultStatus(result)
    if status != COPY_IN:
        first = outcome(result)
        libpq.PQclear(result)
        return [first] + drain(conn)
    libpq.PQclear(result)
    for line in lines:
        data = line.encode()
        if libpq.PQputCopyData(conn, data, len(data)) != 1:
            return [{"status": "put failed"}]
    if libpq.PQputCopyEnd(conn, None) != 1:
        return [{"status": "end failed"}]
    return drain(conn)


def answers(conn):
    """Whether the connection still answers, in step: one row, the right one."""
    result = libpq.PQexecParams(conn, b"SELECT 'still in step'", 0, None, None, None, None, 0)
    ok = libpq.PQresultStatus(result) == TUPLES_OK and libpq.PQgetvalue(result, 0, 0) == b"still in step"
    libpq.PQclear(result)
    return ok and drain(conn) == []


def main():
    rows = json.loads(os.environ["ROWS"])
    conn = libpq.PQconnectdb(os.environ["APP_DSN"].encode())
    if libpq.PQstatus(conn) != 0:
        raise SystemExit(libpq.PQerrorMessage(conn).decode())
    lines = ["\t".join(copy_text(row[c]) for c in COLUMNS) + "\n" for row in rows]
    steps = {
        "copy": copy_in(conn, f"COPY public.customers ({', '.join(COLUMNS)}) FROM STDIN", lines),
        "copy_answers_after": answers(conn),
        "missing_table": copy_in(conn, "COPY public.no_such_table FROM STDIN", lines),
        "missing_table_answers_after": answers(conn),
        "bad_row": copy_in(conn, "COPY public.customers (full_name, birth_date) FROM STDIN", ["Ann Example\tnot a date\n"]),
        "bad_row_answers_after": answers(conn),
        "bad_id": copy_in(conn, "COPY public.customers (id, full_name) FROM STDIN", ["not a number\tAnn Example\n"]),
        "bad_id_answers_after": answers(conn),
    }
    libpq.PQfinish(conn)
    print(json.dumps(steps))


main()
