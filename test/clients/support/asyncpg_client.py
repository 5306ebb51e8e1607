"""asyncpg through the pgveil proxy (binary everywhere, named prepared statements): writes the rows
of ROWS as the app, then reads them back as each role. Prints one JSON document. Connection
settings come from the environment (PROXY_HOST, PROXY_PORT, DATABASE, <ROLE>_USER, <ROLE>_PASSWORD)."""
import asyncio
import datetime
import ipaddress
import json
import os
import uuid

import asyncpg

COLUMNS = ["full_name", "email", "ssn", "phone", "card_number", "birth_date", "city", "ip_address", "external_id"]
INSERT = f"INSERT INTO public.customers ({', '.join(COLUMNS)}) VALUES ({', '.join(f'${i + 1}' for i in range(len(COLUMNS)))})"
# A bulk insert from one array parameter a column; asyncpg sends every array in binary.
ARRAY_TYPES = ["text", "text", "text", "text", "text", "date", "text", "inet", "uuid"]
INSERT_UNNEST = (
    f"INSERT INTO public.customers ({', '.join(COLUMNS)}) "
    f"SELECT * FROM unnest({', '.join(f'${i + 1}::{t}[]' for i, t in enumerate(ARRAY_TYPES))})"
)
SELECT = f"SELECT {', '.join(COLUMNS)} FROM public.customers WHERE id = ANY($1::bigint[]) ORDER BY id"


def typed(row):
    values = dict(row)
    values["birth_date"] = datetime.date.fromisoformat(row["birth_date"])
    values["ip_address"] = ipaddress.ip_address(row["ip_address"])
    values["external_id"] = uuid.UUID(row["external_id"])
    return tuple(values[c] for c in COLUMNS)


async def connect(role):
    return await asyncpg.connect(
        host=os.environ["PROXY_HOST"], port=int(os.environ["PROXY_PORT"]), database=os.environ["DATABASE"],
        user=os.environ[f"{role.upper()}_USER"], password=os.environ[f"{role.upper()}_PASSWORD"], ssl=False,
    )


async def attempt(steps, name, action):
    try:
        await action()
        steps[name] = "ok"
    except asyncpg.PostgresError as error:
        steps[name] = {"sqlstate": error.sqlstate, "message": str(error)}


async def main():
    rows = json.loads(os.environ["ROWS"])
    steps = {}
    app = await connect("app")
    await attempt(steps, "executemany", lambda: app.executemany(INSERT, [typed(r) for r in rows[0:2]]))

    async def prepared():
        statement = await app.prepare(INSERT)
        await statement.fetch(*typed(rows[2]))
        await statement.fetch(*typed(rows[3]))
    await attempt(steps, "prepared", prepared)
    await attempt(steps, "execute", lambda: app.execute(INSERT, *typed(rows[4])))
    # Binary COPY FROM STDIN.
    await attempt(steps, "copy_records_to_table", lambda: app.copy_records_to_table(
        "customers", schema_name="public", columns=COLUMNS, records=[typed(r) for r in rows[5:7]]))
    await attempt(steps, "insert_select_unnest", lambda: app.execute(
        INSERT_UNNEST, *[list(column) for column in zip(*[typed(r) for r in rows[7:9]])]))
    emails = [r["email"] for r in rows]
    ids = [r["id"] for r in await app.fetch("SELECT id FROM public.customers WHERE email = ANY($1::text[]) ORDER BY id", emails)]
    await app.close()
    reads = {}
    for role in ("app", "support", "analyst"):
        conn = await connect(role)
        statement = await conn.prepare(SELECT)
        reads[role] = [dict(r) for r in await statement.fetch(ids)]
        await conn.close()
    print(json.dumps({"steps": steps, "ids": ids, "reads": reads}, default=str))


asyncio.run(main())
