// One side of the bridge between the host and the lab's network namespace (netns.ts), run as a lab process:
//
//   node --import tsx netns-bridge.ts host <socketDir> <hostPort>:<nsPort>[,…]   on the host: TCP 127.0.0.1:<hostPort> → <socketDir>/<nsPort>.sock
//   node --import tsx netns-bridge.ts ns   <socketDir> <nsPort>[,…]              in the namespace: <socketDir>/<nsPort>.sock → TCP 127.0.0.1:<nsPort>
//
// Unix sockets live in the file system, which both network namespaces share, so two plain byte pipes join a host port
// to a port inside the namespace without a veth pair, addresses or routes on the host, and without changing what the
// lab's processes listen on (127.0.0.1). TLS passes through untouched: the API server's certificate names 127.0.0.1,
// and the host side listens on 127.0.0.1 with the same port number, so one kubeconfig works on both sides.
import { rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A forwarded port: where the host listens, and where the process inside the namespace listens. */
export interface PortPair {
  readonly host: number;
  readonly ns: number;
}

/** The socket file a port inside the namespace is reached through. */
export function socketPath(socketDir: string, nsPort: number): string {
  return join(socketDir, `${nsPort}.sock`);
}

/** `8000` (the same number on both sides) or `41234:8000` (host:ns), comma-separated. */
export function parsePortPairs(text: string): PortPair[] {
  return text
    .split(',')
    .filter(Boolean)
    .map((item) => {
      const [a, b = a] = item.split(':');
      const host = Number(a);
      const ns = Number(b);
      if (![host, ns].every((p) => Number.isInteger(p) && p > 0 && p < 65536)) throw new Error(`not a port pair: ${JSON.stringify(item)}`);
      return { host, ns };
    });
}

export function formatPortPairs(pairs: readonly PortPair[]): string {
  return pairs.map((p) => (p.host === p.ns ? String(p.ns) : `${p.host}:${p.ns}`)).join(',');
}

/** Joins two sockets both ways; either one failing or closing ends the other. */
function pipeBoth(a: Socket, b: Socket): void {
  a.pipe(b);
  b.pipe(a);
  const end = () => {
    a.destroy();
    b.destroy();
  };
  a.on('error', end);
  b.on('error', end);
  a.on('close', end);
  b.on('close', end);
}

function listen(target: { port: number; host: string } | { path: string }, dial: () => Socket): void {
  const server = createServer({ noDelay: true }, (incoming) => pipeBoth(incoming, dial()));
  server.on('error', (e) => {
    console.error(`netns-bridge: ${JSON.stringify(target)}: ${e.message}`);
    process.exit(1);
  });
  server.listen(target, () => console.error(`netns-bridge: listening on ${JSON.stringify(target)}`));
}

function main(argv: readonly string[]): void {
  const [side, socketDir, ports] = argv;
  if ((side !== 'host' && side !== 'ns') || !socketDir || !ports) {
    console.error('usage: netns-bridge.ts host|ns <socketDir> <hostPort>:<nsPort>[,…]');
    process.exit(2);
  }
  for (const pair of parsePortPairs(ports)) {
    const sock = socketPath(socketDir, pair.ns);
    if (side === 'host') {
      listen({ host: '127.0.0.1', port: pair.host }, () => connect({ path: sock }));
    } else {
      // A socket file left by a killed predecessor would make listen fail with EADDRINUSE.
      rmSync(sock, { force: true });
      listen({ path: sock }, () => connect({ host: '127.0.0.1', port: pair.ns, noDelay: true }));
    }
  }
  for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => process.exit(0));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main(process.argv.slice(2));
