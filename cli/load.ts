import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { formatObject, formatProblem, type Problem } from '../core/problems.js';
import { refOf } from '../core/parse.js';
import { UserError } from './user-error.js';

/** One object read from a file. */
export interface LoadedObject {
  readonly object: Record<string, unknown>;
  readonly file: string;
}

const YAML_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

/** Expands files and folders (recursively, YAML and JSON files, sorted) into file paths. */
export function expandPaths(paths: readonly string[]): string[] {
  const files: string[] = [];
  const missing: string[] = [];
  for (const path of paths) {
    let stat;
    try {
      stat = statSync(path);
    } catch {
      missing.push(`${path}: no such file or directory`);
      continue;
    }
    if (stat.isDirectory()) files.push(...walk(path));
    else files.push(path);
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
      return YAML_EXTENSIONS.has(extname(entry.name)) ? [path] : [];
    });
}

/** Reads every object of the given files and folders. Every YAML error of every file is reported at once. */
export function loadObjects(paths: readonly string[]): LoadedObject[] {
  const objects: LoadedObject[] = [];
  const errors: string[] = [];
  for (const file of expandPaths(paths)) {
    const text = readFileSync(file, 'utf8');
    for (const doc of parseAllDocuments(text)) {
      if (doc.errors.length > 0) {
        for (const e of doc.errors)
          errors.push(`${file}: line ${(e.linePos?.[0].line ?? 0).toString()}: ${(e.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '')}`);
        continue;
      }
      const value: unknown = doc.toJS();
      if (value === null || value === undefined) continue;
      if (typeof value !== 'object' || Array.isArray(value) || typeof (value as { kind?: unknown }).kind !== 'string') {
        errors.push(`${file}: line ${lineOf(text, doc.range[0])}: not a Kubernetes object (no kind)`);
        continue;
      }
      objects.push({ object: value as Record<string, unknown>, file });
    }
  }
  if (errors.length > 0) throw new UserError(errors);
  return objects;
}

function lineOf(text: string, offset: number): string {
  return String(text.slice(0, offset).split('\n').length);
}

/** The file each problem's object came from (undefined when no loaded object matches). */
export function problemFiles(problems: readonly Problem[], objects: readonly LoadedObject[]): (string | undefined)[] {
  const fileOf = new Map(objects.map((o) => [formatObject(refOf(o.object)), o.file]));
  return problems.map((p) => fileOf.get(formatObject(p.object)));
}

/** Formats problems, each prefixed with the file its object came from. */
export function formatProblemsWithFiles(problems: readonly Problem[], objects: readonly LoadedObject[]): string[] {
  const files = problemFiles(problems, objects);
  return problems.map((p, i) => {
    const file = files[i];
    return file ? `${file}: ${formatProblem(p)}` : formatProblem(p);
  });
}
