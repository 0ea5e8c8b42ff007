// The lab's --clusters option, and the scope through which several labs run side by side in one process.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { clustersOption, fleetLab, parseClusterNames } from '../cluster/fleet.js';
import { freePorts, inLab, kubeconfigPath, labDir } from '../cluster/lab.js';

describe('lab:up --clusters', () => {
  it('takes DNS labels, none twice, as --clusters a,b or --clusters=a,b', () => {
    expect(clustersOption(['--timings', 'kwok', '--clusters', 'a,b,c'])).toEqual(['a', 'b', 'c']);
    expect(clustersOption(['--clusters=eu-1, us-1'])).toEqual(['eu-1', 'us-1']);
    expect(clustersOption(['--timings', 'kwok'])).toBeUndefined();
    expect(() => parseClusterNames('a,B')).toThrow('--clusters: not a DNS label: "B"');
    expect(() => clustersOption(['--clusters'])).toThrow('not a DNS label: ""');
    expect(() => parseClusterNames('a,a')).toThrow('a cluster is named twice');
  });

  it("puts each cluster's lab under <labDir>/clusters/<name>, its context named lab-<name>", () => {
    expect(fleetLab('b')).toEqual({
      name: 'b',
      dir: join(labDir(), 'clusters', 'b'),
      context: 'lab-b',
      kubeconfig: join(labDir(), 'clusters', 'b', 'kubeconfig'),
    });
  });
});

describe('inLab', () => {
  it('points labDir() at another lab for everything the function awaits, and only there', async () => {
    const outside = labDir();
    const seen = await Promise.all(
      ['/tmp/x', '/tmp/y'].map((dir) =>
        inLab(dir, 'x', async () => {
          await new Promise((r) => setTimeout(r, 10));
          return kubeconfigPath();
        }),
      ),
    );
    expect(seen).toEqual(['/tmp/x/kubeconfig', '/tmp/y/kubeconfig']);
    expect(labDir()).toBe(outside);
  });
});

describe('freePorts', () => {
  it("hands out distinct listening ports below the OS's range for outgoing connections, never one twice", async () => {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    // Three labs' worth, as a 3-cluster fleet picks them: none may fall where a client connection could take it.
    const ports = [...(await freePorts(6)), ...(await freePorts(6)), ...(await freePorts(6))];
    expect(new Set(ports).size).toBe(18);
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(20000);
      expect(port).toBeLessThan(low ?? 32768);
    }
  });
});
