import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { Composer, isMap, LineCounter, Parser, type Document } from 'yaml';
import { documentObjects } from '../core/documents.js';
import { formatPath, formatProblem, type FieldPath, type Problem } from '../core/problems.js';
import { readYamlFast } from './read-yaml.js';
import { UserError } from './user-error.js';

/** One object read from a file. */
export interface LoadedObject {
  readonly object: Record<string, unknown>;
  /** The file, as given or found in a folder; `<stdin>` for `-f -`. */
  readonly file: string;
  /** Where the object sits in its document when it is an item of a List (`items[2]`); empty for a whole document. */
  readonly item: FieldPath;
  /** The line the object starts on, from 1. */
  readonly line: number;
}

/** The path that stands for standard input, as in kubectl's `-f -`. */
export const STDIN = '-';
/** How standard input is named in messages. */
export const STDIN_NAME = '<stdin>';

const YAML_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);
/** The names kustomize looks for: a folder of kustomize input holds a file that is no Kubernetes object. */
const KUSTOMIZATION_FILES = new Set(['kustomization.yaml', 'kustomization.yml', 'Kustomization']);

/** A file to read: as given, or found in a folder (`found`). */
interface InputFile {
  readonly path: string;
  readonly found: boolean;
}

/**
 * Expands files and folders (recursively, YAML and JSON files, sorted) into file paths; `-` stays as it is. A
 * kustomization file in a folder is skipped with a note on stderr.
 */
export function expandPaths(paths: readonly string[]): string[] {
  return expandInputs(paths).map((f) => f.path);
}

function expandInputs(paths: readonly string[]): InputFile[] {
  const files: InputFile[] = [];
  const missing: string[] = [];
  for (const path of paths) {
    if (path === STDIN) {
      files.push({ path, found: false });
      continue;
    }
    let stat;
    try {
      stat = statSync(path);
    } catch {
      missing.push(`${path}: no such file or directory`);
      continue;
    }
    if (stat.isDirectory()) files.push(...walk(path).map((found) => ({ path: found, found: true })));
    else files.push({ path, found: false });
  }
  if (missing.length > 0) throw new UserError(missing);
  return files;
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return walk(path);
      if (KUSTOMIZATION_FILES.has(entry.name)) {
        process.stderr.write(
          `note: skipped ${path}: kustomize's file, not a Kubernetes object (to read what kustomize makes: kustomize build ${dir} | ... -f -)\n`,
        );
        return [];
      }
      return YAML_EXTENSIONS.has(extname(entry.name)) ? [path] : [];
    });
}

/** An object of a document, without its file; its line is found when asked for (see readFast). */
interface DocumentItem {
  readonly object: Record<string, unknown>;
  readonly item: FieldPath;
  readonly line: () => number;
}

/** What one document of a file holds: its objects, and its problems as lines without the file. */
interface ReadDocument {
  readonly objects: readonly DocumentItem[];
  readonly errors: readonly string[];
  /** A mapping with neither `apiVersion` nor `kind` (undefined for a document with errors or empty): see foreignYaml. */
  readonly foreign: boolean | undefined;
}

function readDocument(doc: Document.Parsed, lineOf: (offset: number) => number): ReadDocument {
  const foreign =
    doc.errors.length > 0 || doc.contents === null ? undefined : isMap(doc.contents) && !doc.contents.has('apiVersion') && !doc.contents.has('kind');
  if (doc.errors.length > 0) {
    return { objects: [], errors: doc.errors.map((e) => `line ${e.pos[0] === -1 ? 0 : lineOf(e.pos[0])}: ${e.message.split('\n')[0] ?? ''}`), foreign };
  }
  let value: unknown;
  try {
    value = doc.toJS();
  } catch (error) {
    // The YAML library refuses documents that expand without bound (aliases of aliases: a "YAML bomb").
    return { objects: [], errors: [`line ${lineOf(doc.range[0])}: ${error instanceof Error ? error.message : String(error)}`], foreign };
  }
  const contents = documentObjects(value);
  return {
    objects: contents.objects.map((o) => {
      const line = lineOf(startOf(doc, o.path));
      return { object: o.object, item: o.path, line: () => line };
    }),
    errors: contents.problems.map((p) => `line ${lineOf(startOf(doc, p.path))}: ${p.path.length > 0 ? `${formatPath(p.path)}: ` : ''}${p.message}`),
    foreign,
  };
}

/**
 * Whether every document of a file is a mapping with neither `apiVersion` nor `kind`: YAML for another tool (a CI
 * workflow, Helm values), not Kubernetes input. A document with one of them, or of another shape, is Kubernetes input
 * gone wrong, and reported.
 */
function foreignYaml(docs: readonly ReadDocument[]): boolean {
  const judged = docs.filter((d) => d.foreign !== undefined);
  return judged.length > 0 && judged.every((d) => d.foreign);
}

/**
 * Reads every object of the given files and folders (`-` is standard input); the items of a List are objects of their
 * own. Every YAML error of every file is reported at once, each naming its file. A file found in a folder that holds
 * YAML for another tool (foreignYaml) is skipped with a note on stderr; named on its own, it is an error. With
 * `command`, finding no object at all is an error too, in kubectl's words: a path that holds nothing is most likely a
 * typo, and must not pass a check.
 */
export function loadObjects(paths: readonly string[], command?: string): LoadedObject[] {
  const objects: LoadedObject[] = [];
  const errors: string[] = [];
  for (const { path, found } of expandInputs(paths)) {
    const file = path === STDIN ? STDIN_NAME : path;
    // Descriptor 0, not process.stdin: creating that stream turns a pipe non-blocking, and a synchronous read then fails.
    const text = readFileSync(path === STDIN ? 0 : path, 'utf8');
    const docs = readFast(text) ?? readCarefully(text);
    if (found && foreignYaml(docs)) {
      process.stderr.write(`note: skipped ${path}: no apiVersion or kind, not Kubernetes input (name the file with -f to check it)\n`);
      continue;
    }
    for (const doc of docs) {
      errors.push(...doc.errors.map((e) => `${file}: ${e}`));
      objects.push(
        ...doc.objects.map(({ object, item, line }) => ({
          object,
          file,
          item,
          get line() {
            return line();
          },
        })),
      );
    }
  }
  if (errors.length > 0) throw new UserError(errors);
  if (command !== undefined && objects.length === 0) throw new UserError([`no objects passed to ${command}`]);
  return objects;
}

/**
 * Reads a text with the `yaml` library: every document with its errors (with lines), and every object with its line.
 * Its streaming composer (parseAllDocuments collects the same documents into a list) reads each document and drops it
 * before the next is parsed, so a file's syntax trees are never held all at once, for the garbage collector to copy
 * and promote as they grow.
 */
function readCarefully(text: string): ReadDocument[] {
  // The parser's own line index: a line is found by binary search, where counting the text before it again for every
  // object made reading a file of many objects quadratic in its length.
  const lines = new LineCounter();
  const lineOf = (offset: number) => lines.linePos(offset).line;
  const docs: ReadDocument[] = [];
  for (const doc of new Composer().compose(new Parser(lines.addNewLine).parse(text))) docs.push(readDocument(doc, lineOf));
  return docs;
}

/**
 * Reads a text with the fast reader (read-yaml.ts) when it can, and only a text whose every document is empty or holds
 * Kubernetes objects: anything to report, with its line, is read by readCarefully. The objects' lines are found by
 * readCarefully too, once, when one is first asked for: only a problem names a line.
 */
function readFast(text: string): ReadDocument[] | undefined {
  const values = readYamlFast(text);
  if (values === undefined) return undefined;
  const contents = values.map(documentObjects);
  if (contents.some((c) => c.problems.length > 0)) return undefined;
  let lines: number[] | undefined;
  const lineOf = (k: number) => (lines ??= readCarefully(text).flatMap((d) => d.objects.map((o) => o.line())))[k] ?? 0;
  let next = 0;
  return contents.map((c) => {
    const objects = c.objects.map((o) => {
      const k = next++;
      return { object: o.object, item: o.path, line: () => lineOf(k) };
    });
    return { objects, errors: [], foreign: false };
  });
}

/** Where the node at `path` of a document starts (the document's start when there is no such node). */
function startOf(doc: Document.Parsed, path: FieldPath): number {
  const node: unknown = path.length > 0 ? doc.getIn(path, true) : undefined;
  const range = (node as { range?: readonly number[] } | undefined)?.range;
  return range?.[0] ?? doc.range[0];
}

/** Where an object was read: its file, and its place in a List there (`web.yaml: items[1]`). */
export function placeOf(object: LoadedObject): string {
  return object.item.length > 0 ? `${object.file}: ${formatPath(object.item)}` : object.file;
}

/**
 * Where each problem's object was read (see Problem.inputs): one place, or every place of an object defined more than
 * once (a place that comes up twice, as two documents of one file, with its line). Empty when renderSet did not say.
 */
export function problemPlaces(problems: readonly Problem[], objects: readonly LoadedObject[]): string[][] {
  return problems.map((p) => {
    const found = (p.inputs ?? []).flatMap((i) => (objects[i] ? [objects[i]] : []));
    const places = found.map(placeOf);
    return places.map((place, k) => (places.indexOf(place) === places.lastIndexOf(place) ? place : `${place} (line ${found[k]?.line ?? 0})`));
  });
}

/** Formats problems, each prefixed with every place its object was read. */
export function formatProblemsWithFiles(problems: readonly Problem[], objects: readonly LoadedObject[]): string[] {
  const places = problemPlaces(problems, objects);
  return problems.map((p, i) => {
    const where = places[i]?.join(', ') ?? '';
    return where ? `${where}: ${formatProblem(p)}` : formatProblem(p);
  });
}
