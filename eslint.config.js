// @ts-check
// Lint: typescript-eslint's type-aware recommended rules, plus the import boundaries of docs/architecture.md.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

const root = import.meta.dirname;

// Test code that lives next to the sources: never compiled into lib/, never imported by shipped code.
const testSupport = ['**/*.test.ts', '**/*test-support*.ts'];

// Who may import whom. Paths are folders, resolved from the repository root; an import is judged by the file it resolves to.
const layers = [
  {
    target: 'core',
    from: ['agent', 'cli', 'constructs', 'bench', 'test'],
    message: 'core/ is pure logic: it imports no other layer, nor tests or benchmarks.',
  },
  { target: 'constructs', from: ['agent', 'cli'], message: 'constructs/ render with core/ only.' },
  { target: 'agent', from: ['cli', 'constructs'], message: 'agent/ decides with core/ only; the CLI starts it, not the other way round.' },
  {
    target: 'agent/runtime',
    from: 'agent',
    except: ['./runtime'],
    message: "agent/runtime/ is generic controller machinery (the CLI watches with it too): it imports nothing of the agent's domain.",
  },
];
const shipped = ['core', 'constructs', 'agent', 'cli'];
const production = [
  { target: [...shipped, 'examples', 'gitops'], from: ['test', 'bench'], message: 'Non-test code imports no test support or benchmark.' },
  { target: [...shipped, 'examples', 'gitops'], from: testSupport, message: 'Non-test code imports no test or test support file.' },
  { target: shipped, from: ['examples', 'gitops'], message: 'The published package ships neither examples/ nor gitops/.' },
];

// zod's `z` is a namespace object: imported by name, the bundle must keep all of zod (its 64 locales among it); as a
// namespace (`import * as z`), esbuild keeps only what the code names (the agent loads 0.44 MB less).
const zodAsNamespace = {
  selector: "ImportDeclaration[source.value='zod'] > ImportSpecifier[imported.name='z']",
  message: "Import zod as a namespace: import * as z from 'zod' (see eslint.config.js).",
};
// An ESM import of node:http reads all its exports, and on Node.js 22 three are getters that load undici, http2 and
// worker_threads (11 MiB more RSS): shipped code takes the module from agent/runtime/node-http.ts, and only types here.
const httpSource = '[source.value=/^(node:)?http$/]';
const httpValueImport = `ImportDeclaration${httpSource}[importKind!='type']`;
const httpFromNodeHttp = {
  selector: `${httpValueImport} > ImportSpecifier[importKind!='type'], ${httpValueImport} > ImportDefaultSpecifier, ${httpValueImport} > ImportNamespaceSpecifier, ImportExpression${httpSource}`,
  message: "Take node:http's values from agent/runtime/node-http.ts (import only types from 'node:http'; see eslint.config.js).",
};

export default defineConfig(
  globalIgnores(['lib/', 'lib-bench/', 'dist/', 'crds/', '.lab/']),
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: root } },
    plugins: { 'import-x': importX },
    settings: {
      // Sources import './x.js' and the file is x.ts (NodeNext), as tsc resolves them.
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.mjs', '.json', '.node'], extensionAlias: { '.js': ['.ts', '.js'] } })],
    },
    rules: {
      // The project's convention for a binding kept on purpose, as tsc's noUnusedLocals/noUnusedParameters accept it.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      // A binding declared before the closures that read it and assigned once they exist is deliberate, not a missed const.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // no-restricted-paths passes over imports it cannot resolve; this keeps the boundaries from going blind.
      'import-x/no-unresolved': 'error',
      'import-x/no-restricted-paths': ['error', { basePath: root, zones: layers }],
      'no-restricted-syntax': ['error', zodAsNamespace],
    },
  },
  {
    files: [...shipped, 'examples', 'gitops'].map((dir) => `${dir}/**/*.ts`),
    ignores: testSupport,
    // A later block replaces the rules' options: the layer zones and zod's rule are repeated here.
    rules: {
      'import-x/no-restricted-paths': ['error', { basePath: root, zones: [...layers, ...production] }],
      'no-restricted-syntax': ['error', zodAsNamespace, httpFromNodeHttp],
    },
  },
  {
    files: [...testSupport, 'test/**/*.ts'],
    rules: {
      // Tests read parsed YAML, JSON and API answers (any) by path; a wrong path fails the test anyway.
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // Fakes implement Promise-returning interfaces with async functions that have nothing to await.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Plain JavaScript is outside tsconfig.json: no type information, and Node's globals declared by hand.
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: { process: 'readonly' } },
  },
);
