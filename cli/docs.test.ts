import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fieldReference } from '../core/reference.js';

describe('field reference', () => {
  it('matches the committed docs/reference.md', () => {
    expect(readFileSync('docs/reference.md', 'utf8')).toBe(fieldReference());
  });

  it('documents every field of the strategy, with its default', () => {
    const text = fieldReference();
    for (const field of [
      'batchSize',
      'minReadySeconds',
      'needWaitingForConfirm',
      'needFirstConfirm',
      'syncWaitTimeout',
      'rolloutStrategy',
      'pause',
      'upgradeMode',
    ]) {
      expect(text).toMatch(new RegExp(`\\| \`spec\\.strategy\\.${field}\` \\| .+ \\| \`[^\`]+\` \\| [A-Z].+ \\|$`, 'm'));
    }
    expect(text).toContain('| `spec.regions[].overrides.images` | map of string |');
    expect(text).toMatch(/\| `spec\.strategy\.regionOrder` \|.*Default: Parallel, or Sequential with subsetType Deployment\. \|/);
  });
});

/** The README and every page of docs/, the documents a user follows. */
const documents = () => ['README.md', ...readdirSync('docs').map((f) => `docs/${f}`)].filter((f) => f.endsWith('.md'));

/** The anchors GitHub gives the headings of `markdown` (github-slugger: lower case, punctuation dropped, spaces to hyphens). */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, heading] of markdown.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#{1,6} (.+)$/gm)) {
    const text = (heading ?? '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/[`*]/g, '');
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

describe('links in the docs', () => {
  const root = resolve('.');
  const links = documents().flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/\]\(([^)\s]+)\)/g)]
      .map((m) => m[1] ?? '')
      .filter((target) => !/^[a-z]+:/.test(target))
      .map((target): [string, string] => [file, target]),
  );

  it('are found', () => {
    expect(links.length).toBeGreaterThan(0);
  });

  it.each(links)('%s: %s points at a file of this repository, and at a heading of it', (file, target) => {
    const [path = '', anchor] = target.split('#');
    const resolved = path === '' ? resolve(file) : resolve(dirname(file), path);
    expect(relative(root, resolved).startsWith('..'), `${resolved} is outside the repository`).toBe(false);
    expect(existsSync(resolved), `${resolved} does not exist`).toBe(true);
    if (anchor !== undefined && resolved.endsWith('.md')) expect([...anchors(readFileSync(resolved, 'utf8'))]).toContain(anchor);
  });

  it.each<[string, string]>([
    ['## Invalid spec (Valid=False)', 'invalid-spec-validfalse'],
    ['### Leadership: fenced, never two leaders at once', 'leadership-fenced-never-two-leaders-at-once'],
    ['## The rollout a change starts: `edctl plan`', 'the-rollout-a-change-starts-edctl-plan'],
  ])('a heading %s has the anchor %s', (heading, anchor) => {
    expect(anchors(`${heading}\n`)).toEqual(new Set([anchor]));
  });
});
