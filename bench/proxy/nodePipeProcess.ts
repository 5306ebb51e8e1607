/**
 * The floor for any relay written on Node's `net`: a bare byte pipe (no framing, no auth of its
 * own, pgbench's login passes through to PostgreSQL). PG_HOST/PG_PORT name the server (PG_HOST may
 * be the directory of its Unix-domain socket); prints
 * `port=<n>` once listening. A reference for the benchmark only.
 */
import net from 'node:net';

const host = process.env.PG_HOST ?? '127.0.0.1';
const port = Number(process.env.PG_PORT);

const server = net.createServer({ noDelay: true }, (client) => {
  const upstream = host.startsWith('/') ? net.connect({ path: `${host}/.s.PGSQL.${port}` }) : net.connect({ host, port, noDelay: true });
  for (const [from, to] of [[client, upstream], [upstream, client]] as const) {
    from.on('error', () => to.destroy());
    from.on('close', () => to.destroy());
    from.on('data', (chunk: Buffer) => {
      if (!to.write(chunk)) {
        from.pause();
        to.once('drain', () => from.resume());
      }
    });
  }
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`port=${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.on('SIGTERM', () => process.exit(0));
