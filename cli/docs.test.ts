import { readFileSync } from 'node:fs';
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
