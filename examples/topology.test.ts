// The examples must form a topology the lab can satisfy: the agent counts a node in one DeployRegion only (the first
// by name) and reports the others NodesOverlap, so two regions in dist/ selecting the same lab node leave one of them
// without nodes and the synced Application Degraded. This checks dist/ against test/cluster/topology.yaml without a
// cluster.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

interface NodeGroup {
  namePrefix: string;
  count?: number;
  labels?: Record<string, string>;
}

interface LabNode {
  name: string;
  labels: Record<string, string>;
}

interface Region {
  name: string;
  file: string;
  matchLabels: Record<string, string>;
}

/**
 * The lab's nodes with the labels test/cluster/lab.ts (topologyNodes) gives them. Rebuilt here rather than imported
 * because lab.ts loads the cluster build machinery (it reads the Go module pins at import), which a unit test must not
 * depend on. Keep the fixed labels in step with topologyNodes.
 */
function labNodes(): LabNode[] {
  const topology = parse(readFileSync(join(repoRoot, 'test/cluster/topology.yaml'), 'utf8')) as { nodeGroups: NodeGroup[] };
  return topology.nodeGroups.flatMap((g) =>
    Array.from({ length: g.count ?? 1 }, (_, i) => {
      const name = `${g.namePrefix}-${i + 1}`;
      const labels = {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        type: 'kwok',
        ...(g.labels ?? {}),
        'lab.extendeddeployment.io/kwok': 'managed',
      };
      return { name, labels };
    }),
  );
}

function distRegions(): Region[] {
  const dist = join(repoRoot, 'dist');
  return readdirSync(dist)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .flatMap((file) =>
      parseAllDocuments(readFileSync(join(dist, file), 'utf8'))
        .map((d) => d.toJS() as { kind?: string; metadata?: { name?: string }; spec?: { matchLabels?: Record<string, string> } } | null)
        .filter((o) => o?.kind === 'DeployRegion')
        .map((o) => ({ name: o?.metadata?.name ?? '?', file, matchLabels: o?.spec?.matchLabels ?? {} })),
    );
}

/** The agent's rule (core/moves/nodes.ts): every matchLabels entry must equal the node's label. */
const selects = (region: Region, node: LabNode) => Object.entries(region.matchLabels).every(([k, v]) => node.labels[k] === v);

describe('the examples’ DeployRegions on the lab topology', () => {
  const nodes = labNodes();
  const regions = distRegions();

  it('finds lab nodes and regions to compare', () => {
    expect(nodes.length).toBeGreaterThan(0);
    expect(regions.length).toBeGreaterThan(0);
  });

  it('every region selects at least one lab node', () => {
    const empty = regions
      .filter((r) => !nodes.some((n) => selects(r, n)))
      .map((r) => `DeployRegion ${r.name} (${r.file}) selects no lab node: ${JSON.stringify(r.matchLabels)}`);
    expect(empty).toEqual([]);
  });

  it('no lab node is selected by two regions', () => {
    const overlaps = nodes.flatMap((n) => {
      const owners = regions.filter((r) => selects(r, n)).map((r) => r.name);
      return owners.flatMap((a, i) => owners.slice(i + 1).map((b) => `node ${n.name} is selected by both DeployRegion ${a} and DeployRegion ${b}`));
    });
    expect(overlaps).toEqual([]);
  });
});
