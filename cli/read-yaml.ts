import jsyaml from 'js-yaml';

/*
 * The scalars of the YAML 1.2 core schema exactly as the `yaml` library resolves them (its schema/core: null, bool,
 * int in octal, decimal and hex, float with NaN and infinities), for js-yaml, whose own core schema also reads `0b1`,
 * `1_000` and `0o` floats its own way. The same plain scalar gives the same value through either reader.
 */
const nullType = new jsyaml.Type('tag:yaml.org,2002:null', {
  kind: 'scalar',
  resolve: (data: string) => /^(?:~|[Nn]ull|NULL)?$/.test(data),
  construct: () => null,
});
const boolType = new jsyaml.Type('tag:yaml.org,2002:bool', {
  kind: 'scalar',
  resolve: (data: string) => /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/.test(data),
  construct: (data: string) => data[0] === 't' || data[0] === 'T',
});
const intType = new jsyaml.Type('tag:yaml.org,2002:int', {
  kind: 'scalar',
  resolve: (data: string) => /^(?:0o[0-7]+|[-+]?[0-9]+|0x[0-9a-fA-F]+)$/.test(data),
  construct: (data: string) => (data.startsWith('0o') ? parseInt(data.slice(2), 8) : data.startsWith('0x') ? parseInt(data.slice(2), 16) : parseInt(data, 10)),
});
const floatType = new jsyaml.Type('tag:yaml.org,2002:float', {
  kind: 'scalar',
  resolve: (data: string) =>
    /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+|[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*))$/.test(data),
  construct: (data: string) =>
    /^[-+]?\.(?:inf|Inf|INF)$/.test(data)
      ? data[0] === '-'
        ? Number.NEGATIVE_INFINITY
        : Number.POSITIVE_INFINITY
      : /nan$/i.test(data)
        ? NaN
        : parseFloat(data),
});
const CORE = jsyaml.FAILSAFE_SCHEMA.extend({ implicit: [nullType, boolType, intType, floatType] });

/**
 * What only the `yaml` library reads as edctl means it, so a text holding any of it takes the careful reader:
 * anchors and aliases (`&`, `*`: the careful reader bounds how far aliases expand, a YAML bomb), tags (`!`),
 * directives (`%YAML 1.1` changes the schema), explicit keys (`? `), and keys that are null or a flow collection (the
 * two readers turn such keys into different strings).
 */
const CAREFUL_ONLY = [
  /[&*!]/,
  /^%/m,
  /^[ \t-]*\?(?:[ \t]|$)/m,
  /(?:^[ \t-]*|[{,][ \t]*)(?:~|null|Null|NULL)?[ \t]*:(?:[ \t]|$)/m,
  /[\]}][ \t]*:(?:[ \t]|$)/,
  /[{,]\s*[{[]/,
];

/** The `yaml` library refuses an implicit key of more than 1024 characters, as YAML 1.2 says; js-yaml takes it. */
const MAX_IMPLICIT_KEY = 1024;

function hasLongLine(text: string): boolean {
  for (let start = 0; start < text.length;) {
    const end = text.indexOf('\n', start);
    if ((end === -1 ? text.length : end) - start > MAX_IMPLICIT_KEY) return true;
    if (end === -1) return false;
    start = end + 1;
  }
  return false;
}

const isSpace = (c: string | undefined) => c === ' ' || c === '\t';
const endsPlain = (c: string | undefined) => c === undefined || c === ' ' || c === '\t' || c === '\n' || c === '\r';

/**
 * Whether a quoted scalar or a flow collection runs past the end of its line, or a comment follows one without a space
 * between. js-yaml takes continuation lines indented less than YAML allows, and such comments, where the `yaml` library
 * reports them; a text that may have them takes the careful reader. Conservative: a quote or bracket that opens a scalar
 * in a block scalar's text counts too.
 */
function mayBendFlow(text: string): boolean {
  let quote: string | undefined;
  let depth = 0;
  // At the start of a line (after its indentation) or right after an indicator: where a quote or bracket opens a scalar.
  let scalarStart = true;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote !== undefined) {
      if (c === '\n') return true;
      if (quote === '"' && c === '\\') i++;
      else if (c === quote && quote === "'" && text[i + 1] === "'") i++;
      else if (c === quote) {
        quote = undefined;
        if (text[i + 1] === '#') return true;
        scalarStart = false;
      }
      continue;
    }
    switch (c) {
      case '\n':
        if (depth > 0) return true;
        scalarStart = true;
        break;
      case ' ':
      case '\t':
      case '\r':
        break;
      case '#':
        if (scalarStart || isSpace(text[i - 1])) {
          const end = text.indexOf('\n', i);
          i = (end === -1 ? text.length : end) - 1;
        } else scalarStart = false;
        break;
      case "'":
      case '"':
        if (scalarStart) quote = c;
        scalarStart = false;
        break;
      case '[':
      case '{':
        if (scalarStart) depth++;
        else scalarStart = false;
        break;
      case ']':
      case '}':
        if (depth > 0) {
          depth--;
          if (text[i + 1] === '#') return true;
        }
        scalarStart = false;
        break;
      case ',':
        scalarStart = depth > 0;
        break;
      case ':':
        scalarStart = endsPlain(text[i + 1]) || (depth > 0 && /[,[\]{}]/.test(text[i + 1] ?? ''));
        break;
      case '-':
      case '?':
        scalarStart = scalarStart && endsPlain(text[i + 1]);
        break;
      default:
        scalarStart = false;
    }
  }
  return quote !== undefined || depth > 0;
}

/**
 * The documents of a YAML text that hold something, read by js-yaml (about ten times faster than the `yaml`
 * library), or undefined when only the careful reader may read it: it holds something of CAREFUL_ONLY or a line longer
 * than any implicit key may be, or js-yaml finds it malformed (the careful reader then reports where and why). The
 * values are those the `yaml` library gives with its default options, empty documents left out (read-yaml.test.ts
 * compares the two over every YAML file of the repository and sets of edge cases).
 */
export function readYamlFast(text: string): unknown[] | undefined {
  if (CAREFUL_ONLY.some((pattern) => pattern.test(text)) || hasLongLine(text) || mayBendFlow(text)) return undefined;
  try {
    return jsyaml.loadAll(text, null, { schema: CORE }).filter((doc) => doc !== null && doc !== undefined);
  } catch {
    return undefined;
  }
}
