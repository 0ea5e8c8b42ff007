// Serves the files of one directory over HTTP on 127.0.0.1, read-only: it stands in for Flux source-controller's
// artifact storage (which cannot be built from the module proxy), so kustomize-controller fetches the tarballs that
// test/cluster/gitops.ts publishes through an ExternalArtifact. Started detached by the lab (`lab:down` stops it):
//   node --import tsx test/cluster/artifact-server.ts <dir> <port>
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { basename, join } from 'node:path';

const [dir, port] = process.argv.slice(2);
if (!dir || !port) {
  console.error('usage: artifact-server.ts <dir> <port>');
  process.exit(2);
}

createServer((req, res) => {
  if (req.url === '/healthz') {
    res.writeHead(200).end('ok');
    return;
  }
  // Only plain file names: the artifacts are flat, and nothing outside `dir` is ever served.
  const name = basename(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname));
  const file = join(dir, name);
  let size: number;
  try {
    const st = statSync(file);
    if (!st.isFile()) throw new Error('not a file');
    size = st.size;
  } catch {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'content-type': 'application/gzip', 'content-length': size });
  if (req.method === 'HEAD') res.end();
  else createReadStream(file).pipe(res);
}).listen(Number(port), '127.0.0.1', () => console.log(`artifact-server: serving ${dir} on 127.0.0.1:${port}`));
