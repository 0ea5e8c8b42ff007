import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { readYamlFast } from './read-yaml.js';

/** What the `yaml` library (the careful reader) makes of a text, empty documents left out, or undefined when it reports an error. */
function careful(text: string): unknown[] | undefined {
  const docs = parseAllDocuments(text);
  if (!Array.isArray(docs) || docs.some((d) => d.errors.length > 0)) return undefined;
  return docs.map((d) => d.toJS() as unknown).filter((value) => value !== null && value !== undefined);
}

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : yamlFiles(path);
    return ['.yaml', '.yml'].includes(extname(entry.name)) ? [path] : [];
  });
}

describe('readYamlFast', () => {
  it('reads every YAML file of the repository as the yaml library does, or leaves it to that library', () => {
    const files = ['examples', 'dist', 'crds', 'gitops', 'test', 'cli', 'core'].flatMap(yamlFiles);
    let fast = 0;
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      const docs = readYamlFast(text);
      if (docs === undefined) continue;
      fast++;
      expect(docs, file).toEqual(careful(text));
    }
    // Most of them are read fast (the rendered output and the examples have no anchors, tags or odd keys).
    expect(fast).toBeGreaterThan(files.length / 2);
  });

  it('resolves plain scalars exactly as the YAML 1.2 core schema of the yaml library does', () => {
    const scalars = [
      '0o17',
      '0O17',
      '0x1F',
      '0X1F',
      '0b101',
      '1_000',
      '+12',
      '-12',
      '-0',
      '007',
      '0777',
      '08',
      '12345678901234567890',
      '.5',
      '-.5',
      '+.5',
      '1.',
      '1.0',
      '1.50',
      '1e3',
      '1E3',
      '1.5e-3',
      '1.5E+3',
      '-1e3',
      '.5e3',
      '1e',
      'e3',
      '1.2.3',
      '.inf',
      '-.Inf',
      '+.INF',
      '.NaN',
      '.nan',
      '.NAN',
      '-.nan',
      'inf',
      'NaN',
      '~',
      'null',
      'Null',
      'NULL',
      'nULL',
      'true',
      'True',
      'TRUE',
      'tRUE',
      'false',
      'False',
      'FALSE',
      'yes',
      'no',
      'on',
      'off',
      'y',
      'n',
      '2026-01-01',
      '2026-01-01T10:00:00Z',
      '1:30',
      '1:30:00',
      '0.',
      '+',
      '-',
      '.',
      '0',
      '00',
      '0x',
      '0o',
      '0o8',
      '0xG',
      'a b',
      'café',
      '"quoted"',
      "'single'",
      '3 4',
      '12 ',
      '1,000',
    ];
    for (const scalar of scalars) {
      const text = `value: ${scalar}\nlist: [${scalar}]\n`;
      expect(readYamlFast(text), scalar).toEqual(careful(text));
    }
  });

  it('reads block and flow styles, quoting, line ends and documents as the yaml library does', () => {
    const texts = [
      'a: |\n  one\n  two\n',
      'a: |-\n  one\n\n',
      'a: |+\n  one\n\n\nb: 1\n',
      'a: >\n  folded\n  line\n\n  next\n    more\n',
      'a: >-\n  x\n',
      'a: |2\n    indented\n',
      "a: \"esc \\t \\n \\u00e9 \\x41 \\\\ \\\"\"\nb: 'it''s'\n",
      'a: "multi\n  line"\nb: \'multi\n\n  para\'\n',
      'a: plain\n  continued\n',
      'a: {b: 1, c: [1, 2, {d: e}], "f": \'g\'}\n',
      '- a\n- - b\n  - c\n- d: e\n  f: g\n',
      'a: 1 # comment\n# full line\nb: "# not a comment"\n',
      '---\na: 1\n---\n---\nb: 2\n...\n---\nc: 3\n',
      '# only a comment\n',
      '',
      '---\n',
      'a: 1\r\nb:\r\n  - x\r\n',
      '\uFEFFa: 1\n',
      'a:\nb: \nc: []\nd: {}\n',
      'key with spaces: v\n"quoted key": v\n\'single key\': v\n1: one\ntrue: yes\n1.5: x\n',
      '{"apiVersion": "v1", "kind": "List", "items": [{"kind": "A", "n": 1.5e3}]}\n',
      'a: 0x10\nb: 0o10\nc: 010\nd: -0\ne: +1\n',
      'emoji: "\\U0001F600"\nraw: 😀\n',
      'a: [\n  1,\n  2,\n]\n',
      'a: - not a list\n',
      'url: http://example.com:8080/path\ntime: 12:30\n',
    ];
    for (const text of texts) {
      const fast = readYamlFast(text);
      if (fast !== undefined) expect(fast, JSON.stringify(text)).toEqual(careful(text));
    }
    // The cases above that matter most are read fast, not left to the careful reader.
    for (const text of ['a: |\n  one\n  two\n', 'a: {b: 1, "f": \'g\'}\nc: [1, 2]\n', '---\na: 1\n---\n---\nb: 2\n...\n---\nc: 3\n']) {
      expect(readYamlFast(text), JSON.stringify(text)).toBeDefined();
    }
  });

  it('leaves to the careful reader what only it reads as edctl means it', () => {
    const texts = [
      'a: &x 1\nb: *x\n', // anchors and aliases: a bomb is bounded by the careful reader only
      'a: !!str 1\n', // tags
      'a: !custom 1\n',
      '%YAML 1.1\n---\na: yes\n', // YAML 1.1 reads `yes` as true
      '? [a, b]\n: c\n', // explicit keys
      '[a, b]: c\n', // flow collections as keys
      '{a: 1}: c\n',
      'x: {[a]: b}\n',
      '~: null key\n', // null keys
      'null: null key\n',
      ': empty key\n',
      '- : in a list\n',
      'a: {~: b}\n',
      'a: 1\na: 2\n', // a duplicate key: the careful reader says where
    ];
    for (const text of texts) expect(readYamlFast(text), JSON.stringify(text)).toBeUndefined();
  });

  it('over thousands of random edits of the repository YAML: equal to the careful reader where it reads, and nothing the careful reader refuses', () => {
    const files = ['examples', 'dist', 'crds', 'test/cluster'].flatMap(yamlFiles).map((file) => readFileSync(file, 'utf8'));
    let seed = 20261128;
    const random = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const inserts = [' ', '  ', '\n', '\t', ':', '-', '"', "'", '#', '[', ']', '{', '}', ',', '|', '>', '\\', 'a', '0', '.'];
    let read = 0;
    for (let n = 0; n < 3000; n++) {
      const lines = pick(files).split('\n');
      const start = Math.floor(random() * Math.max(1, lines.length - 12));
      let text = lines.slice(start, start + 12).join('\n');
      for (let edits = 1 + Math.floor(random() * 3); edits > 0; edits--) {
        const at = Math.floor(random() * text.length);
        const op = random();
        text =
          op < 0.4
            ? text.slice(0, at) + pick(inserts) + text.slice(at)
            : op < 0.8
              ? text.slice(0, at) + text.slice(at + 1)
              : text.slice(0, at) + pick(inserts) + text.slice(at + 1);
      }
      const fast = readYamlFast(text);
      if (fast === undefined) continue;
      read++;
      expect(fast, JSON.stringify(text)).toEqual(careful(text));
    }
    // Most edits leave a text the fast reader takes (the check is not met by refusing everything).
    expect(read).toBeGreaterThan(600);
  });

  it('reads nothing the careful reader finds malformed', () => {
    const malformed = [
      'a: "unclosed\n',
      "a: 'unclosed\n",
      'a: [1, 2\n',
      'a: {b: 1\n',
      'a: b: c\n',
      'a:\n\t- tab\n',
      'a:\n  b: 1\n c: 2\n',
      '- a\nb: 1\n',
      'a: 1\n  b: 2\n',
      'a: |\n x\n  y\n z\n', // block scalar less indented than its first line
      'a: "\\q"\n', // unknown escape
      'a: @b\n', // reserved indicator
      'a: `b\n',
      '---\na: 1\n--- b: 2\nc',
      'a: 1\n...\nb\nc: 1\n',
      `${'x'.repeat(1100)}: 1\n`, // an implicit key longer than 1024 characters
      "a:\n  b: 'quoted\nless indented'\n", // continuation lines of a quoted scalar at the parent's indentation or less
      'a:\n  b: "quoted\nless indented"\n',
      'a:\n  b: { c: \n"4", d: 5 }\n', // the same in a flow collection
      'a:\n  - { b: c }#comment\n', // a comment with no space before it
    ];
    for (const text of malformed) {
      if (careful(text) === undefined) expect(readYamlFast(text), JSON.stringify(text)).toBeUndefined();
    }
    // The set is no empty check: most of it is malformed for the careful reader.
    expect(malformed.filter((text) => careful(text) === undefined).length).toBeGreaterThan(malformed.length / 2);
  });
});
